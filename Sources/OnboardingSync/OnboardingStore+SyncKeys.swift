import OnboardingModel
import OnboardingStore

extension OnboardingStore {
    /// The keys the server's replica needs for `records`: this store's pseudonym key and the
    /// live keys of the users they name (forgotten users have none to send).
    ///
    /// ```swift
    /// let body = SyncWire.uploadBody(device: store.deviceID, records: records, keys: try store.syncKeys(for: records))
    /// ```
    public func syncKeys(for records: [Record]) -> SyncWire.Keys {
        var refs = Set<UserRef>()
        for record in records {
            if let user = record.event.user, !UserRef.isLiteral(user) { refs.insert(userRef(of: user)) }
        }
        return SyncWire.Keys(pseudonymKey: pseudonymKeyForSync, users: liveKeys(for: refs))
    }
}
