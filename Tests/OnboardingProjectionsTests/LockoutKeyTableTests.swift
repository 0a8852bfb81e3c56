import Foundation
import Testing
import OnboardingModel
@testable import OnboardingProjections

/// The engine's compact key table and its snapshot: the table behaves like a dictionary through
/// any mix of inserts and removals, equal contents compare equal and snapshot to the same bytes
/// whatever the table's layout, and a policy's third tier (kept outside the inline state) counts,
/// snapshots and clears like the first two.
@Suite("Lockout: key table and snapshot")
struct LockoutKeyTableTests {
    typealias KeyState = LockoutEngine.KeyState

    static func state(failures: Int32, at milliseconds: Int64) -> KeyState {
        var state = KeyState()
        state.failures = failures
        state[inlineWindow: 0] = .init(start: Timestamp(millisecondsSince1970: milliseconds), count: failures)
        state.lastFailureAt = Timestamp(millisecondsSince1970: milliseconds)
        return state
    }

    @Test("random inserts, replacements and removals: every lookup agrees with a dictionary")
    func agreesWithADictionary() {
        var random = SplitMix64(seed: 2026)
        let users: [String?] = (0..<300).map { "user-\($0)" } + [nil, "a user name longer than fifteen bytes"]
        let devices: [String?] = ["kiosk-1", "phone-a", nil]
        func randomKey() -> LockoutKey {
            LockoutKey(
                user: users[Int(random.next() % UInt64(users.count))], device: devices[Int(random.next() % 3)],
                factor: random.next() % 2 == 0 ? .password : .secondFactor)
        }
        var table = LockoutKeyTable()
        var model: [LockoutKey: KeyState] = [:]
        for step in 0..<20_000 {
            let key = randomKey()
            // Inserts outweigh removals early (the table grows), then removals win (long probe runs shift back).
            if random.next() % 100 < (step < 10_000 ? 70 : 35) {
                let state = Self.state(failures: Int32(step % 50 + 1), at: Int64(step))
                table[key] = state
                model[key] = state
            } else {
                table[key] = nil
                model[key] = nil
            }
            if step % 1000 == 999 {
                #expect(table.count == model.count, "step \(step)")
                for user in users {
                    for device in devices {
                        for factor in LockoutFactor.allCases {
                            let probe = LockoutKey(user: user, device: device, factor: factor)
                            #expect(table[probe] == model[probe], "step \(step): \(probe)")
                        }
                    }
                }
            }
        }
        // The same contents inserted in another order: another layout, the same table.
        var rebuilt = LockoutKeyTable()
        for (key, state) in model.sorted(by: { $0.key > $1.key }) { rebuilt[key] = state }
        #expect(rebuilt == table)
        if let anyKey = model.keys.first {
            rebuilt[anyKey]?.failures += 1
            #expect(rebuilt != table, "a changed state is a different table")
        }
    }

    @Test("an entry stays within 96 bytes (lockout_bytes_per_key)")
    func entrySize() {
        #expect(MemoryLayout<KeyState>.size <= 70)
        #expect(MemoryLayout<LockoutKeyTable.Entry>.stride <= 96)
    }

    /// Three tiers: 2 per minute, 4 per 10 minutes, 6 per hour; the third is kept outside the inline state.
    static let threeTiers = LockoutPolicy(
        name: "three-tiers",
        password: .init(tiers: [
            .init(limit: 2, windowSeconds: 60), .init(limit: 4, windowSeconds: 600),
            .init(limit: 6, windowSeconds: 3600)
        ]),
        secondFactor: .init(),
        clearing: LockoutPolicy.mediawiki.clearing)

    @Test("a third tier counts, locks, snapshots and clears like the first two")
    func thirdTier() throws {
        var scenario = LockoutScenario(Self.threeTiers)
        // Failures at 0, 1 min, 2 min, … each after the previous lock ended: the hour's tier
        // reaches 6 at the 6th failure and locks until 17:00.
        scenario.play([
            .fail("16:00:00", "allowed (1 failure)"),
            .fail("16:00:01", "locked until 16:01:00.000, wait 1 minute (2 failures)"),
            .fail("16:01:00", "allowed (3 failures)"),
            .fail("16:01:01", "locked until 16:10:00.000, wait 10 minutes (4 failures)"),
            .fail("16:10:00", "allowed (5 failures)"),
            .fail("16:10:01", "locked until 17:00:00.000, wait 1 hour (6 failures)")
        ])
        let data = scenario.engine.snapshotBytes
        let decoded = try LockoutEngine(snapshotBytes: data)
        #expect(decoded == scenario.engine)
        #expect(String(decoding: data, as: UTF8.self).contains("\"windows\":[[1795968600000,2],[1795968600000,2],[1795968000000,6]]"))
        let end = LockoutClock.time("17:00:00")
        scenario.clear(.signInSucceeded, at: end)
        #expect(scenario.engine.keys == LockoutKeyTable(), "a cleared key leaves nothing behind, its third window included")
    }

    @Test("equal engines snapshot to the same bytes, whatever order their keys arrived in")
    func deterministicSnapshot() throws {
        var forward = LockoutScenario(.mediawiki), backward = LockoutScenario(.mediawiki)
        let users = (0..<200).map { "user-\($0)" }
        for (index, user) in users.enumerated() {
            forward.fail(at: LockoutClock.seconds(1), user: .some(user), device: index.isMultiple(of: 3) ? "kiosk-1" : "phone-a")
        }
        for (index, user) in users.enumerated().reversed() {
            backward.fail(at: LockoutClock.seconds(1), user: .some(user), device: index.isMultiple(of: 3) ? "kiosk-1" : "phone-a")
        }
        for index in stride(from: 0, to: 200, by: 7) {
            forward.succeed(at: LockoutClock.seconds(2), user: .some(users[index]), device: index.isMultiple(of: 3) ? "kiosk-1" : "phone-a")
            backward.succeed(at: LockoutClock.seconds(2), user: .some(users[index]), device: index.isMultiple(of: 3) ? "kiosk-1" : "phone-a")
        }
        #expect(forward.engine.keys == backward.engine.keys)
        var forwardEngine = forward.engine, backwardEngine = backward.engine
        // The seqs are equal (same number of records); only the table layouts differ.
        #expect(forwardEngine.seq == backwardEngine.seq)
        #expect(forwardEngine.snapshotBytes == backwardEngine.snapshotBytes)
        forwardEngine = try LockoutEngine(snapshotBytes: forwardEngine.snapshotBytes)
        backwardEngine = try LockoutEngine(snapshotBytes: backwardEngine.snapshotBytes)
        #expect(forwardEngine == backwardEngine)
    }

    @Test(
        "a snapshot whose keys do not fit the policy or the scope is refused",
        arguments: [
            #"{"user":"alice","device":"kiosk-1","factor":"password","windows":[[0,1],[0,1],[0,1]]}"#,
            #"{"user":"alice","factor":"password","failures":1}"#,
            #"{"user":"alice","device":"kiosk-1","factor":"password","lockTier":2}"#,
            #"{"user":"alice","device":"kiosk-1","factor":"password","failures":-1}"#,
            #"{"user":"alice","device":"kiosk-1","factor":"password","windows":[[0,0]]}"#
        ])
    func refusedSnapshot(key: String) throws {
        let good = #"{"user":"bob","device":"kiosk-1","factor":"password","failures":1}"#
        var writer = JSONWriter()
        writer.append(LockoutPolicy.mediawiki.snapshotValue)
        let policy = writer.text
        func snapshot(_ keys: [String]) -> [UInt8] {
            Array(#"{"policy":\#(policy),"acrossDevices":false,"seq":3,"keys":[\#(keys.joined(separator: ","))]}"#.utf8)
        }
        let decoded = try LockoutEngine(snapshotBytes: snapshot([good]))
        #expect(
            decoded.decide(LockoutKey(user: "bob", device: "kiosk-1", factor: .password), at: LockoutClock.origin)
                == .allowed(failures: 1))
        #expect(throws: SnapshotDecodingError.self) { try LockoutEngine(snapshotBytes: snapshot([good, key])) }
        #expect(throws: SnapshotDecodingError.self) { try LockoutEngine(snapshotBytes: snapshot([good, good])) }
    }
}
