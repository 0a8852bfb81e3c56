import Foundation
import Testing
import OnboardingModel
@testable import OnboardingProjections

// Helpers for the session, multi-user and history tests: a log written one event at a time at
// readable clock times and folded into an `OnboardingState` as it grows. Every name starts with
// `Flow` so nothing collides with the lockout tests in this target. Nothing here asserts except
// `FlowScript.step`, which compares whole states as the golden tests need.

/// Clock times of the flow tests, all on 2026-11-29 (UTC).
enum FlowTime {
    static let day = "2026-11-29"

    /// `"16:05:02"` or `"16:05:02.250"` on the test day.
    static func at(_ text: String) -> Timestamp {
        let full = "\(day)T\(text)\(text.contains(".") ? "" : ".000")Z"
        do { return try Timestamp(iso8601: full) } catch { preconditionFailure("bad test time \(text)") }
    }
}

/// A fixed flow id, readable in failure output: `FlowID.make(1)` is `00000000-0000-4000-8000-000000000001`.
enum FlowID {
    static func make(_ number: Int) -> UUID {
        let hex = String(number, radix: 16)
        return UUID(uuidString: "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - hex.count) + hex)!
    }
}

/// A device's log being written, folded into an `OnboardingState` after every event.
struct FlowScript {
    private(set) var state: OnboardingState
    private(set) var records: [Record] = []
    /// The device of the events and of the states read back.
    var device: String
    /// The flow (`session`) of the events.
    var session: UUID?
    /// The time of the last event: the `at` of the views read back.
    private(set) var now = FlowTime.at("16:00:00")

    init(policy: LockoutPolicy = .mediawiki, device: String, session: UUID? = FlowID.make(1)) {
        state = OnboardingState(policy: policy)
        self.device = device
        self.session = session
    }

    /// Records `payload` by `user` at `time` on the script's device and flow; returns the record.
    @discardableResult
    mutating func record(_ payload: Payload, user: String?, at time: String, device: String? = nil) -> Record {
        now = FlowTime.at(time)
        let seq = UInt64(records.count + 1)
        let hex = String(seq, radix: 16)
        let id = UUID(uuidString: "00000000-0000-4000-9000-" + String(repeating: "0", count: 12 - hex.count) + hex)!
        let event = Event(
            id: id,
            device: device ?? self.device, at: now, user: user, flow: session, payload: payload)
        let record = Record(seq: seq, event: event, previousHash: .zero, hash: .zero)
        records.append(record)
        state.apply(record)
        return record
    }

    /// The device's session now.
    var deviceSession: DeviceState { state.session.session(device: device) }

    /// The device's "Switch or Add User" screen at the time of the last event.
    func users(search: String? = nil) -> UsersView {
        state.users.view(device: device, lockout: state.lockout, at: now, search: search)
    }

    /// The password-factor decision for `user` on the device at the time of the last event.
    func decision(_ user: String?, _ factor: LockoutFactor = .password) -> LockoutDecision {
        state.lockout.decide(state.lockout.key(user: user, device: device, factor: factor), at: now)
    }

    /// One golden step: records the event, then compares the device's whole session (and, when
    /// given, the whole user list) with the expected values.
    mutating func step(
        _ payload: Payload, user: String?, at time: String, session expected: DeviceState,
        users expectedUsers: UsersView? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let record = record(payload, user: user, at: time)
        let label = "seq \(record.seq) \(payload.type.rawValue) at \(time)"
        #expect(deviceSession == expected, "\(label)", sourceLocation: sourceLocation)
        if let expectedUsers {
            #expect(users() == expectedUsers, "\(label)", sourceLocation: sourceLocation)
        }
    }
}

extension UserRow {
    /// A row of an expected user list.
    static func flowRow(
        _ profile: UserProfile, selected: Bool = false,
        lockout: LockoutDecision = .allowed(failures: 0)
    ) -> UserRow {
        UserRow(profile: profile, isSelected: selected, lockout: lockout)
    }
}

extension UsersView.Section {
    static func flowSelected(_ row: UserRow) -> UsersView.Section { .init(title: "Selected", rows: [row]) }
    static func flowAll(_ rows: [UserRow]) -> UsersView.Section { .init(title: "All", rows: rows) }
}
