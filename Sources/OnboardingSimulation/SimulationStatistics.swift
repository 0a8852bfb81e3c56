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

    public init() {}

    public var description: String {
        "\(events) events, \(syncRuns) sync runs, \(requestsDelivered) requests delivered, \(requestsFailed) failed, "
            + "\(deviceCrashes) device crashes, \(deviceRestarts) device restarts, \(serverRestarts) server restarts, "
            + "\(enrolments) enrolments, \(tokenReplacements) token replacements, \(deviceForgets)+\(serverForgets) forgets (device+server), "
            + "\(prunes) prunes (\(prunedRecords) records), \(partitions) partitions, \(clockJumps) clock jumps, "
            + "\(convergences) convergences, \(mapGrowths) map growths, \(futureEventRefusals) future_event refusals, \(keylessUploads) keyless uploads, "
            + "\(historyQueries) history queries, \(invariantChecks) invariant checks"
    }
}
