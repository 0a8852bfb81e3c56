import OnboardingModel
import OnboardingProjections

/// The user search of an LMDB-backed server, in memory: built from every replica at start and
/// kept on ingest (``ReplicaStorage``). No readable name is kept in clear, in memory either: users
/// are keyed by a keyed hash of their id, each with its id and latest display name sealed, and
/// the search looks up keyed MACs of folded prefixes (``SearchTerms``). Both keys are random per
/// process: nothing of the index outlives it.
///
/// ```swift
/// var index = UserSearchIndex()
/// index.add(user: "josé", device: "kiosk-7")
/// index.search(["jose"], limit: 20).first?.user   // "josé"
/// ```
struct UserSearchIndex: Sendable {
    struct Entry: Sendable {
        var sealed: [UInt8]
        /// Where the display name came from, `(at, device, seq)`: a later one replaces it.
        var namedAt: HistoryCursor?
        var devices: Set<String>
        var macs: Set<UserRef>
    }

    private let userKey = SecretKey.random()
    private let macKey = SecretKey.random()
    private let sealKey = SecretKey.random()
    private var users: [UserRef: Entry] = [:]
    private var postings: [UserRef: Set<UserRef>] = [:]

    var count: Int { users.count }

    private func ref(_ user: String) -> UserRef { UserRef(user: user, pseudonymKey: userKey) }

    private func open(_ entry: Entry) -> (user: String, displayName: String?)? {
        entry.sealed.withUnsafeBytes { PersonalData.open($0, key: sealKey) }.flatMap(SearchTerms.name(from:))
    }

    /// `user` has records on `device` that read as them (a readable id, never a pseudonym).
    mutating func add(user: String, device: String) {
        guard !UserRef.isLiteral(user) else { return }
        let key = ref(user)
        if users[key] != nil {
            users[key]!.devices.insert(device)
            return
        }
        let macs = SearchTerms.macs(user: user, displayName: nil, key: macKey)
        users[key] = Entry(
            sealed: PersonalData.sealRandom(SearchTerms.nameBytes(user: user, displayName: nil), key: sealKey),
            namedAt: nil, devices: [device], macs: macs)
        for mac in macs { postings[mac, default: []].insert(key) }
    }

    /// A `user_added` or `user_profile_updated` at `position` named `user` `displayName`: kept
    /// when it is the latest so far.
    mutating func name(user: String, displayName: String, at position: HistoryCursor) {
        guard !UserRef.isLiteral(user) else { return }
        add(user: user, device: position.device)
        let key = ref(user)
        guard var entry = users[key], entry.namedAt.map({ $0 < position }) ?? true else { return }
        for mac in entry.macs { postings[mac]?.remove(key) }
        entry.macs = SearchTerms.macs(user: user, displayName: displayName, key: macKey)
        entry.sealed = PersonalData.sealRandom(SearchTerms.nameBytes(user: user, displayName: displayName), key: sealKey)
        entry.namedAt = position
        for mac in entry.macs { postings[mac, default: []].insert(key) }
        users[key] = entry
    }

    /// Indexes an upload's records: each user once, then the names they give.
    mutating func add(_ records: [Record]) {
        var seen = Set<String>()
        for record in records {
            guard let user = record.event.user else { continue }
            if case .userAdded = record.event.payload {
                add(record)
            } else if case .userProfileUpdated(_?, _, _) = record.event.payload {
                add(record)
            } else if seen.insert(user).inserted {
                add(user: user, device: record.event.device)
            }
        }
    }

    /// Indexes one record as a replica reads it.
    mutating func add(_ record: Record) {
        guard let user = record.event.user, !UserRef.isLiteral(user) else { return }
        switch record.event.payload {
        case .userAdded(let displayName, _, _, _, _):
            name(user: user, displayName: displayName, at: HistoryCursor(at: record.event.at, device: record.event.device, seq: record.seq))
        case .userProfileUpdated(let displayName?, _, _):
            name(user: user, displayName: displayName, at: HistoryCursor(at: record.event.at, device: record.event.device, seq: record.seq))
        default:
            add(user: user, device: record.event.device)
        }
    }

    /// Drops `user` (a server forget): never found again.
    mutating func remove(user: String) {
        let key = ref(user)
        guard let entry = users.removeValue(forKey: key) else { return }
        for mac in entry.macs { postings[mac]?.remove(key) }
    }

    /// The users whose id or latest display name every word of `search` (folded) begins a word
    /// of, in byte order of their ids, at most `limit`.
    func search(_ search: [String], limit: Int) -> [UserMatch] {
        guard !search.isEmpty else { return [] }
        var candidates: Set<UserRef>?
        for word in search {
            let found = postings[SearchTerms.lookupMAC(word, key: macKey)] ?? []
            candidates = candidates.map { $0.intersection(found) } ?? found
            if candidates!.isEmpty { return [] }
        }
        var matches: [UserMatch] = []
        for key in candidates ?? [] {
            guard let entry = users[key], let name = open(entry),
                SearchTerms.matches(search, words: SearchTerms.words(name.user) + (name.displayName.map(SearchTerms.words) ?? []))
            else { continue }
            matches.append(UserMatch(user: name.user, displayName: name.displayName, devices: entry.devices.count))
        }
        matches.sort { SearchTerms.precedes($0.user, $1.user) }
        return Array(matches.prefix(limit))
    }
}
