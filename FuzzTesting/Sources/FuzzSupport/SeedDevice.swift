import Foundation
@testable import OnboardingStore

/// A real device store filled with a fixed story, and the upload bodies its sync client would
/// send (``SyncWire/uploadBody(device:records:signedHead:keys:)`` with ``OnboardingStore/syncKeys(for:)``).
/// The store adopts the fixtures' keys before its first append, so every run writes the same
/// records: the committed upload seeds and the first batch the upload target preloads into its
/// server are the same bytes.
///
/// ```swift
/// let uploads = try SeedDevice.uploads(in: scratchDirectory)
/// let first = uploads.first { $0.name == SeedDevice.preloadName }!.body
/// ```
public enum SeedDevice {
    /// The seed whose records the upload target's replica holds before every input.
    public static let preloadName = "batch1-keys"

    /// A fixed Ed25519 key pair (libsodium secret key: the seed 32 × 0x5e, then its public key),
    /// so signed heads are the same bytes on every run. A fixture: it signs nothing real.
    public static let signingKey: SigningKeyPair = {
        let publicKey = HexBytes.decode("8146640f02493af4fbc54fe33388e75dc2c937ae0b7727cc2b2afb1b75199a3e")!
        return SigningKeyPair(secretBytes: [UInt8](repeating: 0x5E, count: 32) + publicKey)!
    }()

    /// A key for the user the story forgets; gone from the store after its `user_forgotten`.
    static let forgottenUserKey = SecretKey(bytes: [UInt8](repeating: 0x33, count: SecretKey.byteCount))

    public struct Upload: Sendable {
        public var name: String
        public var body: [UInt8]
    }

    /// The story in three batches: users added and signing in and failing (batch 1), second
    /// factors, a profile update and the user who will be forgotten (batch 2), that user's
    /// `user_forgotten`, an admin clear and device-only events (batch 3).
    static func story() -> [[Event]] {
        let alice = FuzzFixtures.liveUsers[0].name, bob = FuzzFixtures.liveUsers[1].name
        let carol = FuzzFixtures.forgottenUser
        var index = 1000
        func next(_ type: EventType, _ user: String?, session: Bool = true) -> Event {
            index += 1
            return FuzzFixtures.event(type, index: index, user: user, session: session)
        }
        let first = [
            next(.captchaPresented, nil), next(.userAdded, alice), next(.passcodeSet, alice), next(.userSelected, alice),
            next(.signInStarted, alice), next(.signInFailed, alice), next(.signInFailed, alice), next(.signInSucceeded, alice),
            next(.userAdded, bob), next(.signInFailed, bob, session: false)
        ]
        let second = [
            next(.secondFactorRequired, bob), next(.secondFactorFailed, bob), next(.secondFactorSucceeded, bob),
            next(.userProfileUpdated, alice), next(.userAdded, carol), next(.signInFailed, carol), next(.signInThrottled, carol),
            next(.biometricEnabled, alice)
        ]
        var forget = FuzzFixtures.event(.userForgotten, index: index + 1, user: FuzzFixtures.ref(of: carol).literal, session: false)
        index += 1
        forget.flow = nil
        let third = [
            forget, next(.lockoutCleared, alice, session: false), next(.passwordChanged, bob),
            next(.accountCreationStarted, nil), next(.fieldValidated, nil), next(.accountCreationFailed, nil), next(.signedOut, alice)
        ]
        return [first, second, third]
    }

    /// Builds the device store in `directory` (which must not exist yet) and returns the upload
    /// bodies: each batch with keys, batch 2 also with a signed head, the whole log in one
    /// upload, batch 1 without keys, and batch 2 sent after the forget (with its sealed section).
    public static func uploads(in directory: String) throws -> [Upload] {
        var options = OnboardingStore.Options()
        options.deviceID = FuzzFixtures.device
        options.durability = .relaxed
        options.signsHeads = false
        // The story's fixed dates must be in the past on any machine's clock.
        options.clock = { ServerHarness.now }
        let store = try OnboardingStore.open(at: (directory as NSString).appendingPathComponent("device.lmdb"), options: options)
        defer { store.close() }
        var userKeys: [UserRef: SecretKey] = [FuzzFixtures.ref(of: FuzzFixtures.forgottenUser): forgottenUserKey]
        for user in FuzzFixtures.liveUsers { userKeys[FuzzFixtures.ref(of: user.name)] = user.key }
        try store.adoptKeys(pseudonymKey: FuzzFixtures.pseudonymKey, userKeys: userKeys)

        let device = FuzzFixtures.device
        var uploads: [Upload] = []
        var batches: [[Record]] = []
        for events in story() {
            let start = try store.head().seq + 1
            _ = try store.appendBlocking(events)
            let records = try store.records(in: start...(start + UInt64(events.count) - 1))
            // Keys as the client sends them at the time of this batch's upload.
            uploads.append(
                Upload(
                    name: "batch\(batches.count + 1)-keys",
                    body: SyncWire.uploadBody(device: device, records: records, keys: try store.syncKeys(for: records))))
            if batches.count == 1 {
                let last = records[records.count - 1]
                let head = SignedHead.sign(device: device, seq: last.seq, hash: last.hash, with: signingKey)
                uploads.append(
                    Upload(
                        name: "batch2-keys-signed",
                        body: SyncWire.uploadBody(
                            device: device, records: records, signedHead: head,
                            keys: try store.syncKeys(for: records))))
            }
            batches.append(records)
        }
        store.clearPendingKeys()
        // After the forget, batch 2 reads with the user erased and carries that user's sealed
        // sections instead of a key (docs/sync-protocol.md § Keys).
        let secondAfterForget = try store.records(in: batches[1][0].seq...batches[1][batches[1].count - 1].seq)
        uploads.append(
            Upload(
                name: "batch2-after-forget",
                body: SyncWire.uploadBody(
                    device: device, records: secondAfterForget,
                    keys: try store.syncKeys(for: secondAfterForget))))
        let all = try store.records(in: 1...(try store.head().seq))
        let last = all[all.count - 1]
        uploads.append(
            Upload(
                name: "all-keys-signed",
                body: SyncWire.uploadBody(
                    device: device, records: all,
                    signedHead: SignedHead.sign(device: device, seq: last.seq, hash: last.hash, with: signingKey),
                    keys: try store.syncKeys(for: all))))
        uploads.append(Upload(name: "batch1-no-keys", body: SyncWire.uploadBody(device: device, records: batches[0])))
        return uploads
    }
}
