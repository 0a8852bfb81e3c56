import Foundation
import OnboardingModel
import OnboardingProjections
import Testing
@testable import OnboardingStore

/// `deviceStateUpdates()` emits by itself when the clock changes what the screen shows: a lock
/// that ends, its message counting down, a resend timer that ends. Driven by a
/// `ManualStoreClock`, so nothing here waits for real time.
@Suite struct ClockDrivenUpdatesTests {
    static let start = Timestamp(millisecondsSince1970: 1_796_054_400_000)

    /// The next element, or `nil` when none comes within `seconds` of real time (a failing test
    /// must not hang the suite).
    static func next(_ iterator: inout AsyncStream<DeviceState>.Iterator, within seconds: Int = 60) async -> DeviceState? {
        let box = IteratorBox(iterator)
        let value = await withTaskGroup(of: DeviceState?.self) { group in
            group.addTask { await box.next() }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        iterator = box.iterator
        return value
    }

    /// Waits (really, at most 60 s) until the stream has armed its timer on `clock`.
    static func armed(_ clock: ManualStoreClock) async -> Bool {
        for _ in 0..<6_000 {
            if clock.sleeperCount > 0 { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    @Test func aLockEndsOnTheScreenWithNoEventAndNoPolling() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualStoreClock(Self.start)
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.timeSource = clock })
        defer { store.close() }
        let flow = UUID()
        _ = try await store.record(.fieldEdited(field: .password, filled: true, valid: nil), user: "alice", flow: flow)
        for _ in 0..<5 {
            _ = try await store.record(.signInFailed(method: .password, reason: .invalidPassword), user: "alice", flow: flow)
        }
        var updates = store.deviceStateUpdates().makeAsyncIterator()
        let locked = await Self.next(&updates)
        #expect(locked?.flow.screen == .lockedOut)
        #expect(locked?.flow.systemMessage?.text == "You have made too many recent login attempts. Please wait 5 minutes before trying again.")
        #expect(locked?.flow.lockedUntil == Self.start.adding(milliseconds: 300_000))

        // A minute later the message counts down: the stream woke at the minute's turn.
        #expect(await Self.armed(clock))
        #expect(clock.nextDeadline == Self.start.adding(milliseconds: 60_000))
        clock.advance(byMilliseconds: 60_000)
        let fourMinutes = await Self.next(&updates)
        #expect(fourMinutes?.flow.systemMessage?.text == "You have made too many recent login attempts. Please wait 4 minutes before trying again.")

        // At the lock's end, with no event recorded, the form is back as it was left.
        clock.set(to: Self.start.adding(milliseconds: 300_000))
        var unlocked = await Self.next(&updates)
        while let state = unlocked, state.flow.screen == .lockedOut { unlocked = await Self.next(&updates) }
        #expect(
            unlocked?.flow
                == Flow(id: flow, user: "alice", screen: .signIn, state: .partiallyFilled, fields: [FieldInput(field: .password, filled: true)]))
        #expect(unlocked?.flow.submitEnabled == true, "the usual rule: a password for a known user")
        #expect(try store.signInDecision(user: "alice").isAllowed)
        #expect(try store.stats().eventCount == 6, "no event was recorded to unlock the screen")
    }

    @Test func theResendTimerEndsOnTheScreen() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualStoreClock(Self.start)
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.timeSource = clock })
        defer { store.close() }
        _ = try await store.record(.passwordResetRequested(route: .email), user: "alice")
        _ = try await store.record(.temporaryPasswordSent, user: "alice")
        var updates = store.deviceStateUpdates().makeAsyncIterator()
        #expect(await Self.next(&updates)?.flow.resend?.isAvailable == false)
        #expect(await Self.armed(clock))
        clock.advance(byMilliseconds: 60_000)
        let available = await Self.next(&updates)
        #expect(
            available?.flow.resend == ResendInfo(availableAt: Self.start.adding(milliseconds: 60_000), help: SessionText.resendAvailableHelp, isAvailable: true)
        )
    }

    @Test func deviceStateAnswersAtTheTimeAskedAndTheStoresClockByDefault() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualStoreClock(Self.start)
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.timeSource = clock })
        defer { store.close() }
        for _ in 0..<5 { _ = try await store.record(.signInFailed(method: .password, reason: .invalidPassword), user: "alice") }
        #expect(try store.deviceState().flow.screen == .lockedOut)
        #expect(try store.deviceState(at: Self.start.adding(milliseconds: 300_000)).flow.screen == .signIn)
        clock.advance(byMilliseconds: 3_600_000)
        let anHourLater = try store.deviceState()
        #expect(anHourLater.flow.screen == .signIn && anHourLater.flow.lockedUntil == nil && anHourLater.flow.systemMessage == nil)
    }

    @Test func aManualClockWakesSleepersInOrderAndACancelledSleepThrows() async throws {
        let clock = ManualStoreClock(Self.start)
        let woken = Woken([Int]())
        let first = Task {
            try await clock.sleep(until: Self.start.adding(milliseconds: 2_000))
            woken.append(2)
        }
        let second = Task {
            try await clock.sleep(until: Self.start.adding(milliseconds: 1_000))
            woken.append(1)
        }
        let cancelled = Task { try await clock.sleep(until: Self.start.adding(milliseconds: 1_000)) }
        for _ in 0..<6_000 where clock.sleeperCount < 3 { try await Task.sleep(for: .milliseconds(10)) }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        clock.advance(byMilliseconds: 1_000)
        try await second.value
        #expect(woken.value == [1])
        clock.advance(byMilliseconds: 1_000)
        try await first.value
        #expect(woken.value == [1, 2])
        // A deadline already reached returns at once.
        try await clock.sleep(until: Self.start)
    }
}

/// The iterator in a box a child task can advance.
private final class IteratorBox: @unchecked Sendable {
    var iterator: AsyncStream<DeviceState>.Iterator
    init(_ iterator: AsyncStream<DeviceState>.Iterator) { self.iterator = iterator }
    func next() async -> DeviceState? { await iterator.next() }
}

/// The order the clock test's sleepers woke in.
private final class Woken<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func append<Element>(_ element: Element) where Value == [Element] { lock.withLock { stored.append(element) } }
}
