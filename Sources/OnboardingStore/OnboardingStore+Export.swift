import Foundation
import LMDB
import OnboardingModel

/// What `onboard migrate-server` reads of a sync server's replica to copy it into PostgreSQL
/// byte for byte: the stored records as they are, the user entries, and the users they read with.
extension OnboardingStore {
    /// One user entry of `user_keys`, in the order of first sighting.
    package struct UserEntry: Sendable {
        package var number: UInt64
        package var ref: UserRef
        /// `nil` with ``sealedName`` for a tombstone.
        package var key: SecretKey?
        /// nonce ‖ secretbox(readable id).
        package var sealedName: [UInt8]?
    }

    /// The user entries, by number.
    package func userEntries() throws(StoreError) -> [UserEntry] {
        guard let userKeys = databases.userKeys else { return [] }
        return try reading { transaction in
            try transaction.withCursor(userKeys) { cursor in
                var entries: [UserEntry] = []
                var entry = try cursor.first()
                while let current = entry {
                    if let number = StoreLayout.seq(fromKey: current.key), let ref = Self.userEntryRef(current.value) {
                        let keyEnd = UserRef.byteCount + SecretKey.byteCount
                        if current.value.count > keyEnd {
                            entries.append(
                                UserEntry(
                                    number: number, ref: ref,
                                    key: SecretKey(bytes: UnsafeRawBufferPointer(rebasing: current.value[UserRef.byteCount..<keyEnd])),
                                    sealedName: Array(current.value[keyEnd...])))
                        } else {
                            entries.append(UserEntry(number: number, ref: ref, key: nil, sealedName: nil))
                        }
                    }
                    entry = try cursor.next()
                }
                return entries
            }
        }
    }

    /// The users the store's records read with (its pseudonym key and entries).
    package var currentUsers: UserDirectory { users }

    /// Calls `body` with each stored record's bytes, exactly as stored, from `start` on, in seq
    /// order, and the record they decode to; stops when `body` returns `false`.
    package func forEachStoredRecord(from start: UInt64, _ body: (_ bytes: [UInt8], _ record: Record) throws -> Bool) throws(StoreError) {
        let users = users
        try reading { transaction in
            try transaction.withCursor(databases.events) { cursor in
                var entry = try cursor.seek(atLeast: StoreLayout.seqKey(start))
                while let current = entry {
                    let record = try decodeStored(key: current.key, value: current.value, users: users)
                    guard try body(Array(current.value), record) else { return }
                    entry = try cursor.next()
                }
            }
        }
    }
}
