import Foundation
import Synchronization
import Testing

/// Keeps tests that load the whole machine apart from tests that measure time. Swift Testing
/// runs suites in parallel in one process; on 2 cores, a test holding thousands of connections
/// and threads (``heavy``) delays every other thread by seconds — a deadline test then measures
/// the machine, not the deadline. Heavy tests run alone; timed ones (``timed``) share the
/// machine with each other and with everything else, but never with a heavy one.
///
/// ```swift
/// @Suite(.timed) struct TransportTests { … }
/// @Suite(.serialized, .heavy) struct HTTPServerLoadTests { … }
/// ```
public struct MachineLoad: SuiteTrait, TestTrait, TestScoping {
    public enum Kind: Sendable { case heavy, timed }
    let kind: Kind

    public var isRecursive: Bool { true }

    private struct State {
        var heavy = false
        var timed = 0
        var heavyWaiting = 0
    }

    private static let state = Mutex(State())

    public func provideScope(
        for test: Test, testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        // Only around each test case: a suite's own scope would hold the gate around its tests.
        guard testCase != nil else { return try await function() }
        await Self.enter(kind)
        defer { Self.leave(kind) }
        try await function()
    }

    private static func enter(_ kind: Kind) async {
        if kind == .heavy { state.withLock { $0.heavyWaiting += 1 } }
        while true {
            let entered = state.withLock { state -> Bool in
                switch kind {
                case .heavy:
                    guard !state.heavy, state.timed == 0 else { return false }
                    state.heavy = true
                    state.heavyWaiting -= 1
                case .timed:
                    // A waiting heavy test goes first, so timed tests cannot starve it.
                    guard !state.heavy, state.heavyWaiting == 0 else { return false }
                    state.timed += 1
                }
                return true
            }
            if entered { return }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    private static func leave(_ kind: Kind) {
        state.withLock { state in
            switch kind {
            case .heavy: state.heavy = false
            case .timed: state.timed -= 1
            }
        }
    }
}

extension Trait where Self == MachineLoad {
    /// The test loads the whole machine: it runs while no ``timed`` test does.
    public static var heavy: MachineLoad { MachineLoad(kind: .heavy) }
    /// The test measures time: it never runs while a ``heavy`` test does.
    public static var timed: MachineLoad { MachineLoad(kind: .timed) }
}
