import OnboardingModel

extension OnboardingStore {
    /// The keys the server's replica needs for `records`: this store's pseudonym key, the live
    /// keys of the users they name (forgotten users have none to send), and the sealed sections
    /// of records whose user was forgotten after they were sealed.
    ///
    /// ```swift
    /// let body = SyncWire.uploadBody(device: store.deviceID, records: records, keys: try store.syncKeys(for: records))
    /// ```
    package func syncKeys(for records: [Record]) throws(StoreError) -> SyncWire.Keys {
        var refs = Set<UserRef>()
        for record in records {
            if let user = record.event.user, !UserRef.isLiteral(user) { refs.insert(userRef(of: user)) }
        }
        return SyncWire.Keys(pseudonymKey: pseudonymKeyForSync, users: liveKeys(for: refs), sealed: try sealedSections(for: records))
    }
}
