import CBaseline
import Foundation
import OnboardingModel
import OnboardingProjections

extension Bench {
    /// Bytes of projection state per lockout key and per user, measured as the growth of the
    /// process heap (glibc mallinfo2: bytes in use) while building the projection and keeping it;
    /// the events fed in are freed as they go, so the growth is the state itself. The lockout
    /// engine's JSON snapshot size per key is reported alongside.
    func measureMemory() {
        let keyCount = options.lockoutKeys
        let before = cb_heap_in_use_bytes()
        let engine = Bench.lockoutEngine(keys: keyCount, lockEvery: Int.max)
        let after = cb_heap_in_use_bytes()
        precondition(engine.keyCount == keyCount, "engine has \(engine.keyCount) keys")
        let heapPerKey = Double(Int(after) - Int(before)) / Double(keyCount)
        let jsonPerKey: Double
        var writer = JSONWriter()
        writer.append(engine.snapshotValue)
        jsonPerKey = Double(writer.bytes.count) / Double(keyCount)
        var result = BenchResult(
            name: "lockout_bytes_per_key", unit: "bytes", value: heapPerKey, target: "≤ 256",
            met: before > 0 ? heapPerKey <= 256 : nil,
            note: "heap growth per key (mallinfo2), \(keyCount) keys each with its own user, 1 failure; JSON snapshot \(format(jsonPerKey)) B/key")
        result.baseline = "JSON snapshot"
        result.baselineValue = jsonPerKey
        report.add(result)
        withExtendedLifetime(engine) {}

        let userCount = options.memoryUsers
        let usersBefore = cb_heap_in_use_bytes()
        var users = MultiUserProjection()
        var random = SplitMix64(state: 13)
        for index in 0..<userCount {
            let event = Event(
                id: BenchEvents.uuid(&random, milliseconds: BenchEvents.startMilliseconds), device: BenchEvents.device,
                at: Timestamp(millisecondsSince1970: BenchEvents.startMilliseconds + Int64(index)),
                user: "user-\(index)", flow: nil,
                payload: .userAdded(
                    displayName: "User \(index)", subtitle: nil, imageRef: nil,
                    passcodePolicy: .numeric, passcodeMinLength: 6))
            users.apply(Record(seq: UInt64(index + 1), event: event, previousHash: .zero, hash: .zero))
        }
        let usersAfter = cb_heap_in_use_bytes()
        let perUser = Double(Int(usersAfter) - Int(usersBefore)) / Double(userCount)
        report.add(
            BenchResult(
                name: "users_bytes_per_user", unit: "bytes", value: perUser,
                note: "heap growth per user (mallinfo2), \(userCount) users on one device with a display name"))
        withExtendedLifetime(users) {}
    }
}
