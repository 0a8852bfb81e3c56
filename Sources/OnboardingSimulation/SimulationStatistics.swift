/// What a simulation exercised, to show that the faults and operations actually happened.
public struct SimulationStatistics: Sendable, Hashable, CustomStringConvertible {
    public var events = 0
    public var syncRuns = 0
    public var requestsDelivered = 0
    /// Requests the simulated network failed (partitions and crashes; the faulty transport's
    /// own drops never reach the simulator).
    public var requestsFailed = 0
    public var deviceCrashes = 0
    public var deviceRestarts = 0
    public var serverRestarts = 0
    public var enrolments = 0
    public var tokenReplacements = 0
    public var deviceForgets = 0
    public var serverForgets = 0
    public var prunes = 0
    public var prunedRecords = 0
    public var partitions = 0
    public var clockJumps = 0
    public var convergences = 0
    /// LMDB map growths after `MAP_FULL`, on devices and on replicas.
    public var mapGrowths = 0
    public var futureEventRefusals = 0
    /// Uploads that reached the server without `keys` (an older client's batches of records
    /// that name no user).
    public var keylessUploads = 0
    public var historyQueries = 0
    public var invariantChecks = 0
    /// Prunes that asked the server first (every prune does), those that pruned nothing because
    /// it could not confirm, and those whose confirmation moved the sync cursor back.
    public var pruneConfirmations = 0
    public var pruneConfirmationsFailed = 0
    public var pruneCursorsLowered = 0
    /// Answers of the hostile mode's lying server, in all and by ``Lie`` (its description).
    public var lies = 0
    public var liesByKind: [String: Int] = [:]
    /// Sync runs and confirmations that ended with the protocol error a lie told them calls for.
    public var liesCaught = 0

    public init() {}

    /// Adds `other`'s counts to these (the figures of several runs together).
    public mutating func add(_ other: SimulationStatistics) {
        events += other.events
        syncRuns += other.syncRuns
        requestsDelivered += other.requestsDelivered
        requestsFailed += other.requestsFailed
        deviceCrashes += other.deviceCrashes
        deviceRestarts += other.deviceRestarts
        serverRestarts += other.serverRestarts
        enrolments += other.enrolments
        tokenReplacements += other.tokenReplacements
        deviceForgets += other.deviceForgets
        serverForgets += other.serverForgets
        prunes += other.prunes
        prunedRecords += other.prunedRecords
        partitions += other.partitions
        clockJumps += other.clockJumps
        convergences += other.convergences
        mapGrowths += other.mapGrowths
        futureEventRefusals += other.futureEventRefusals
        keylessUploads += other.keylessUploads
        historyQueries += other.historyQueries
        invariantChecks += other.invariantChecks
        pruneConfirmations += other.pruneConfirmations
        pruneConfirmationsFailed += other.pruneConfirmationsFailed
        pruneCursorsLowered += other.pruneCursorsLowered
        lies += other.lies
        liesByKind.merge(other.liesByKind, uniquingKeysWith: +)
        liesCaught += other.liesCaught
    }

    public var description: String {
        "\(events) events, \(syncRuns) sync runs, \(requestsDelivered) requests delivered, \(requestsFailed) failed, "
            + "\(deviceCrashes) device crashes, \(deviceRestarts) device restarts, \(serverRestarts) server restarts, "
            + "\(enrolments) enrolments, \(tokenReplacements) token replacements, \(deviceForgets)+\(serverForgets) forgets (device+server), "
            + "\(prunes) prunes (\(prunedRecords) records), \(partitions) partitions, \(clockJumps) clock jumps, "
            + "\(convergences) convergences, \(mapGrowths) map growths, \(futureEventRefusals) future_event refusals, \(keylessUploads) keyless uploads, "
            + "\(historyQueries) history queries, \(invariantChecks) invariant checks, "
            + "\(pruneConfirmations) prune confirmations (\(pruneConfirmationsFailed) failed, \(pruneCursorsLowered) lowered the cursor)"
            + (lies == 0
                ? ""
                : ", \(lies) lies (\(liesCaught) caught): "
                    + liesByKind.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))
    }
}
