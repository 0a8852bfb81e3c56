/// A store's users in memory: pseudonym ↔ readable user id, and each live user's key. Records
/// hold only pseudonyms (``UserRef``); the readable id is stored once per user, sealed with the
/// user's key, outside the hashed log. Reads translate a record's pseudonym with one dictionary
/// lookup, appends find a known user's pseudonym with one lookup by name: no per-record crypto.
/// A forgotten user has no entry (its key is gone) and reads as the pseudonym literal.
///
/// ```swift
/// var users = UserDirectory(pseudonymKey: key)
/// let ref = users.ref(of: "alice")        // keyed BLAKE2b-128, or the cached pseudonym
/// users.add(ref, name: "alice", key: .random())
/// users.displayName(of: ref)              // "alice"
/// ```
public struct UserDirectory: Sendable {
    public struct Entry: Sendable {
        public var name: String
        public var key: SecretKey

        public init(name: String, key: SecretKey) {
            self.name = name
            self.key = key
        }
    }

    /// The secret that derives pseudonyms from readable ids (never leaves the store, except to a
    /// sync server's replica of it).
    public let pseudonymKey: SecretKey
    public private(set) var entries: [UserRef: Entry] = [:]
    private var refsByName: [String: UserRef] = [:]
    /// Pseudonyms whose key was destroyed.
    public private(set) var forgotten: Set<UserRef> = []

    public init(pseudonymKey: SecretKey) {
        self.pseudonymKey = pseudonymKey
    }

    /// The pseudonym of `user`: parsed from a pseudonym literal, looked up for a live user, else
    /// computed (keyed BLAKE2b-128 under ``pseudonymKey``).
    public func ref(of user: String) -> UserRef {
        if let known = refsByName[user] { return known }
        return newRef(of: user)
    }

    /// ``ref(of:)`` for a user known not to be live (the append path already looked it up).
    @inline(__always)
    public func newRef(of user: String) -> UserRef {
        if let literal = UserRef(literal: user) { return literal }
        return UserRef(user: user, pseudonymKey: pseudonymKey)
    }

    /// The pseudonym of a live user by its readable id (one lookup: the append path's).
    @inline(__always)
    public func liveRef(of user: String) -> UserRef? { refsByName[user] }

    /// The readable id of a live user, `nil` for a forgotten or unknown pseudonym.
    @inline(__always)
    public func name(of ref: UserRef) -> String? { entries[ref]?.name }

    /// How a record's user reads: the readable id, or the pseudonym literal when erased.
    @inline(__always)
    public func displayName(of ref: UserRef) -> String { entries[ref]?.name ?? ref.literal }

    public func key(of ref: UserRef) -> SecretKey? { entries[ref]?.key }

    public func isForgotten(_ ref: UserRef) -> Bool { !forgotten.isEmpty && forgotten.contains(ref) }

    /// Makes room for `count` more users (a group commit that adds many), growing at least
    /// twofold: reserving exactly what each group needs would rehash every entry on every group.
    public mutating func reserveCapacity(adding count: Int) {
        let needed = entries.count + count
        guard needed > entries.capacity else { return }
        let capacity = max(needed, entries.capacity * 2)
        entries.reserveCapacity(capacity)
        refsByName.reserveCapacity(capacity)
    }

    /// How `user` is known in records read back now: the readable id while the user has a key,
    /// the pseudonym literal once forgotten.
    public func canonicalName(of user: String) -> String {
        let ref = ref(of: user)
        return entries[ref]?.name ?? (forgotten.contains(ref) || UserRef.isLiteral(user) ? ref.literal : user)
    }

    public mutating func add(_ ref: UserRef, name: String, key: SecretKey) {
        entries[ref] = Entry(name: name, key: key)
        refsByName[name] = ref
        if !forgotten.isEmpty { forgotten.remove(ref) }
    }

    public mutating func forget(_ ref: UserRef) {
        if let entry = entries.removeValue(forKey: ref) { refsByName[entry.name] = nil }
        forgotten.insert(ref)
    }

    /// Undoes ``add(_:name:key:)`` (an append that failed after staging a new user).
    public mutating func remove(_ ref: UserRef) {
        if let entry = entries.removeValue(forKey: ref) { refsByName[entry.name] = nil }
    }

    /// Undoes ``forget(_:)`` in memory (an erasure whose transaction failed).
    public mutating func unforget(_ ref: UserRef, entry: Entry?) {
        forgotten.remove(ref)
        if let entry { add(ref, name: entry.name, key: entry.key) }
    }

    /// The seal for writing an event of `user` by this directory (no key for a forgotten or
    /// unknown user).
    public func seal(for user: String?) -> UserSeal? {
        guard let user else { return nil }
        let ref = ref(of: user)
        return UserSeal(ref: ref, key: UserRef.isLiteral(user) ? nil : entries[ref]?.key)
    }
}
