import Foundation
import OnboardingModel
import OnboardingStore

/// One simulated device: its store on disk, its skewed clock, its link to the simulated network,
/// the people using it, and the simulator's model of its log (what every copy must hold).
///
/// Owned and used by the simulator's thread only; the sync client reaches it only through the
/// ``SimulatedLink`` and the store.
final class SimulatedDevice {
    let index: Int
    let id: String
    let path: String
    let storeOptions: OnboardingStore.Options
    private(set) var store: OnboardingStore
    let clock: DeviceClock
    let link: SimulatedLink
    var script: DeviceScript
    /// An older client that sends no `keys` with uploads whose records name no user.
    let sendsKeysOnlyWhenNeeded: Bool
    /// Enrolled with its signing key (every upload then carries a signed head).
    let enrolsWithSigningKey: Bool
    let batchEvents: Int
    let faults: FaultyTransport.Faults

    /// Set once enrolled.
    var token: String?
    /// The token the run in progress uses (an admin may have replaced ``token`` meanwhile).
    var runToken: String?
    /// Created at enrolment and kept across crashes: the network, not the device, holds the
    /// copies it replays.
    var network: FaultyTransport?
    var client: SyncClient?
    var runTask: Task<Void, Never>?
    var runCount = 0
    var partitioned = false
    /// The lies the path told this device since its run (or its prune's confirmation) began.
    var liesThisRun: Set<Lie> = []
    /// The prune waiting for the confirmation that runs on the link (`confirmedAcknowledgement()`,
    /// not a sync run): its date and its batch size.
    var pendingPrune: (before: Timestamp, batchRecords: Int)?

    // MARK: Model

    /// Every record the device wrote, by seq (index seq − 1).
    var log: [ModelRecord] = []
    var prunedThrough: UInt64 = 0
    /// The highest seq the server acknowledged for this device (in any answer it gave).
    var acknowledged: UInt64 = 0
    /// Users the server forgot in this device's replica (a server-side forget reached it).
    var forgottenOnReplica: Set<String> = []
    /// The pseudonym of each user under this device's pseudonym key.
    var pseudonyms: [String: UserRef] = [:]

    // MARK: What the checks have read

    /// The device's records the invariant checks have compared, through this seq.
    var checkedThrough: UInt64 = 0
    /// The replica's records the invariant checks have compared, through this seq, and how
    /// they read there.
    var replicaCheckedThrough: UInt64 = 0
    var replicaView: [Event] = []
    /// Users of whom the server appended a record sent by name (with the user's key): the
    /// replica holds their key. A user whose records all reached it after the device forgot them
    /// (sent by pseudonym, without a key) reads erased there.
    var readableOnReplica: Set<String> = []

    init(
        index: Int, id: String, path: String, storeOptions: OnboardingStore.Options, clock: DeviceClock, link: SimulatedLink,
        script: DeviceScript, sendsKeysOnlyWhenNeeded: Bool, enrolsWithSigningKey: Bool, batchEvents: Int,
        faults: FaultyTransport.Faults
    ) throws {
        self.index = index
        self.id = id
        self.path = path
        self.storeOptions = storeOptions
        self.clock = clock
        self.link = link
        self.script = script
        self.sendsKeysOnlyWhenNeeded = sendsKeysOnlyWhenNeeded
        self.enrolsWithSigningKey = enrolsWithSigningKey
        self.batchEvents = batchEvents
        self.faults = faults
        store = try OnboardingStore.open(at: path, options: storeOptions)
    }

    var isEnrolled: Bool { token != nil }

    /// Map growths of the store instance now open (they restart from 0 at each open).
    var mapGrowths: Int { store.mapGrowthCount }

    /// Opens the store again from what is on disk (after a crash image replaced it, or a close).
    func reopen() throws(StoreError) {
        store = try OnboardingStore.open(at: path, options: storeOptions)
        client = nil
    }

    func closeStore() {
        store.close()
    }

    /// The users forgotten on the device: those its log holds a `user_forgotten` for.
    var forgottenOnDevice: Set<String> {
        Set(log.compactMap(\.forgets))
    }

    /// The users who read erased in the replica when it holds seq 1…`head`: the server's
    /// forgets, the device's own `user_forgotten` records the replica holds, and the users it
    /// never got a key for.
    func forgottenOnReplica(through head: UInt64) -> Set<String> {
        let held = log.prefix(Int(head))
        let keyless = held.compactMap { $0.forgets == nil ? $0.event.user : nil }.filter { !readableOnReplica.contains($0) }
        return forgottenOnReplica.union(held.compactMap(\.forgets)).union(keyless)
    }

    /// How `record` must read in a store where `forgotten` are forgotten: as written, or with the
    /// user as its pseudonym and personal fields erased.
    func expectedReading(of record: ModelRecord, forgotten: Set<String>) -> Event {
        guard record.forgets == nil, let user = record.event.user, forgotten.contains(user), let ref = pseudonyms[user] else {
            return record.event
        }
        return record.event.erasingPersonalData(ref: ref)
    }

    /// The pseudonym of `user` on this device (remembered, so it can be checked on every copy).
    func notePseudonym(of user: String) {
        guard pseudonyms[user] == nil, !UserRef.isLiteral(user) else { return }
        pseudonyms[user] = store.userRef(of: user)
    }

    /// The readable user whose pseudonym literal is `literal`, when this device knows one.
    func user(forPseudonym literal: String) -> String? {
        pseudonyms.first { $0.value.literal == literal }?.key
    }
}
