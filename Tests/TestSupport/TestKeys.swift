import Foundation
import OnboardingModel
import Synchronization

/// The user directory of tests that encode records without a store: one fixed pseudonym key,
/// and every readable user the test codec encodes is registered (with a key derived from its
/// pseudonym), so decoding reads it back by name.
public enum TestKeys {
    public static let pseudonymKey = SecretKey(bytes: [UInt8](repeating: 0x5A, count: SecretKey.byteCount))
    private static let shared = Mutex(UserDirectory(pseudonymKey: pseudonymKey))

    /// The directory with every user encoded so far.
    public static var directory: UserDirectory { shared.withLock { $0 } }

    public static func key(for ref: UserRef) -> SecretKey {
        SecretKey(bytes: Digest.hash(Array("test-user-key".utf8) + ref.bytes).bytes)
    }

    /// The seal a store with these keys would use for `user` (none without a user); registers it.
    public static func seal(for user: String?) -> UserSeal? {
        guard let user else { return nil }
        if let literal = UserRef(literal: user) { return UserSeal(ref: literal, key: nil) }
        return shared.withLock { directory in
            let ref = directory.ref(of: user)
            if directory.name(of: ref) == nil { directory.add(ref, name: user, key: key(for: ref)) }
            return UserSeal(ref: ref, key: directory.key(of: ref))
        }
    }
}

// The codec without an explicit directory, for tests: sealed and read back with `TestKeys`.
extension RecordCodec {
    public static func encode(_ event: Event, seq: UInt64, previousHash: Digest) -> [UInt8] {
        encode(event, seq: seq, previousHash: previousHash, seal: TestKeys.seal(for: event.user))
    }

    public static func body(of event: Event, seq: UInt64) -> [UInt8] {
        body(of: event, seq: seq, seal: TestKeys.seal(for: event.user))
    }

    public static func decode(_ bytes: [UInt8], expectedSeq: UInt64? = nil) throws(RecordDecodingError) -> Record {
        try decode(bytes, expectedSeq: expectedSeq, users: TestKeys.directory)
    }

    public static func decode(_ bytes: UnsafeRawBufferPointer, expectedSeq: UInt64? = nil) throws(RecordDecodingError) -> Record {
        try decode(bytes, expectedSeq: expectedSeq, users: TestKeys.directory)
    }
}
