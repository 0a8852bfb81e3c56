import Foundation
import OnboardingSimulation
import PostgreSQL
import Testing
import TestSupport

/// The deterministic simulation with the server on PostgreSQL: the same devices, faults, lies,
/// forgets and prunes, and the same invariants after every step as on LMDB replicas — so the
/// two storages answer the protocol alike.
@Suite(.enabled(if: TestDatabase.isEnabled, TestDatabase.skipNote), .slow)
struct PostgresSimulationTests {
    /// Seeds on PostgreSQL: three honest ones and one with the lying server; fewer steps than on
    /// LMDB (each step costs a few round trips to the database).
    static let honestSeeds: [UInt64] = [1, 2, 3]
    static let hostileSeed: UInt64 = 4
    static let steps = 300

    @Test func everyInvariantHoldsWithTheServerOnPostgreSQL() async throws {
        let runs = (Self.honestSeeds.map { ($0, 0) } + [(Self.hostileSeed, SimulationTests.hostileLieRatePerMille)])
        let reports = try await onOwnThread {
            try runs.map { seed, lies in
                try withFreshDatabase { url in
                    var options = SimulationTests.options(seed, steps: Self.steps, lieRatePerMille: lies)
                    options.databaseURL = try TestDatabase.url(database: url.parameters["dbname"] ?? "")
                    return Simulator.run(options)
                }
            }
        }
        for report in reports {
            #expect(report.failure == nil, "\(SimulationTests.story(report))")
        }
        var total = SimulationStatistics()
        for report in reports { total.add(report.statistics) }
        print("simulation on PostgreSQL: \(total)")
        #expect(total.serverRestarts > 0 && total.enrolments > 0 && total.serverForgets > 0 && total.deviceForgets > 0 && total.historyQueries > 0)
    }
}
