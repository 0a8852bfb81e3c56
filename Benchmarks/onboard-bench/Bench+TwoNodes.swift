import Foundation
import HTTPServer
import OnboardingModel
import OnboardingServer
import OnboardingStore
import PostgreSQL

extension Bench {
    /// Part of `--only server`: four devices syncing at once over loopback HTTP to two server
    /// nodes on one PostgreSQL database (two devices each), against the same four to one node.
    /// Reported without a target: this machine has 2 cores for the nodes, the clients and
    /// PostgreSQL together, so a second node mostly shows what it costs, not what it scales to.
    func measureTwoNodes(base: String) {
        let devices = 4
        let perDevice = options.quick ? 1_000 : 25_000
        let rounds = options.quick ? 1 : 3
        let stores: [OnboardingStore] = (0..<devices).map { index in
            let device = "bench-node-\(index)"
            var storeOptions = OnboardingStore.Options()
            storeOptions.deviceID = device
            do {
                let store = try OnboardingStore.open(at: freshDirectory("two-nodes-\(index)"), options: storeOptions)
                let events = BenchEvents.make(count: perDevice, seed: 60 + UInt64(index)).map { event -> Event in
                    var event = event
                    event.device = device
                    return event
                }
                for start in Swift.stride(from: 0, to: events.count, by: 1_000) {
                    _ = try store.appendBlocking(Array(events[start..<min(start + 1_000, events.count)]))
                }
                return store
            } catch {
                failOperation("two-node bench: filling a device store failed: \(error)")
            }
        }
        defer { for store in stores { store.close() } }
        var paired = Paired()
        for round in 1...rounds {
            paired.subject.append(nodesPass(base: base, nodes: 2, stores: stores, round: round))
            paired.baseline.append(nodesPass(base: base, nodes: 1, stores: stores, round: round))
        }
        report.add(
            BenchResult(
                name: "pg_two_nodes_vs_one", unit: "events/s", paired: paired, baseline: "one node",
                note: "\(devices) devices × \(perDevice) events syncing at once over loopback HTTP, \(rounds) rounds; reported (2 cores)"))
    }

    /// Every store synced at once to `nodes` nodes on a fresh database (store k to node k mod nodes); events per second.
    private func nodesPass(base: String, nodes: Int, stores: [OnboardingStore], round: Int) -> Double {
        let database = freshDatabase(base: base)
        defer { database.drop() }
        var servers: [(SyncServer, HTTPServer)] = []
        defer {
            for (server, http) in servers {
                server.beginShutdown()
                http.stop()
                server.close()
            }
        }
        var clients: [SyncClient] = []
        do {
            for _ in 0..<nodes {
                let server = try SyncServer(databaseURL: database.url, options: Bench.serverOptions, createsAdminToken: false)
                let http = HTTPServer(port: 0, limits: SyncHTTPHandler.limits, handler: SyncHTTPHandler(server: server))
                try http.start()
                servers.append((server, http))
            }
            for (index, store) in stores.enumerated() {
                let (server, http) = servers[index % nodes]
                let token = try server.enroll(device: store.deviceID)
                let transport = try HTTPTransport(baseURL: URL(string: "http://127.0.0.1:\(http.port)")!)
                clients.append(SyncClient(store: store, transport: transport, token: token))
            }
        } catch {
            failOperation("two-node bench: cannot start the nodes: \(error)")
        }
        let total = stores.reduce(0) { $0 + Int((try? $1.head().seq) ?? 0) }
        let syncing = clients
        let start = now()
        let outcomes = runBlocking { () async -> [Bool] in
            await withTaskGroup(of: Bool.self) { group in
                for client in syncing {
                    group.addTask {
                        do throws(SyncError) { _ = try await client.run(); return true } catch { return false }
                    }
                }
                var results: [Bool] = []
                for await result in group { results.append(result) }
                return results
            }
        }
        let elapsed = seconds(since: start)
        guard outcomes.allSatisfy({ $0 }) else { failOperation("two-node bench: round \(round): a sync to \(nodes) node(s) failed") }
        return Double(total) / elapsed
    }
}
