import Foundation
import OnboardingServer
import OnboardingStore

/// A small command-line "app" on a shared ward iPad, through the library's public API only: it
/// records a shared-device sign-in flow, asks the lockout before each attempt, searches the
/// device's users, syncs to a server it runs in-process, reads the history back on both sides
/// and verifies both logs. It checks what it sees and exits 1, naming the step, when something
/// is not as the docs say.
@main
struct SigninApp {
    static func main() async {
        do {
            try await run()
        } catch {
            FileHandle.standardError.write(Data("SigninApp: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run() async throws {
        let keep = CommandLine.arguments.contains("--keep")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("SigninApp-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { if !keep { try? FileManager.default.removeItem(atPath: directory) } }

        var options = OnboardingStore.Options()
        options.deviceID = "ward-3-ipad"
        let store = try OnboardingStore.open(at: directory + "/device.lmdb", options: options)
        defer { store.close() }
        let embedded = try EmbeddedServer(dataDirectory: directory + "/server")
        defer { embedded.stop() }
        print("store \(store.path) · server \(embedded.url.absoluteString)")

        // Enrolment, as an admin does it: the server registers the store's signing key and hands
        // out the device's token; the app pins the server's key (its forget requests are then honoured).
        let token = try embedded.server.enroll(device: store.deviceID, publicKey: try store.signingPublicKey())
        let client = SyncClient(
            store: store, transport: URLSessionTransport(baseURL: embedded.url), token: token,
            serverKey: embedded.server.signingKey.publicKey)
        let agent = SyncAgent(client: client)
        let updates = UpdateLog(agent.updates())
        await agent.start()

        try await SharedDevice(store: store).run(updates: updates)

        // What is left after the sign-out syncs on demand.
        let summary = try await agent.syncNow()
        await agent.shutdown()
        let head = try store.head()
        try check(summary.acknowledgedSeq == head.seq, "the server acknowledged seq \(summary.acknowledgedSeq), the log ends at \(head.seq)")
        print("sync: the server holds all \(head.seq) events (\(await updates.finishedRuns) runs)")

        // The history, on the device and on the server (every device's replica, merged).
        let local = try store.history(user: "alice")
        let remote = try embedded.server.history(HistoryQuery(user: "alice"))
        try check(local.attempts == remote.attempts, "the server's history of alice differs from the device's")
        let failed = local.attempts.filter { $0.outcome == .failed }.count
        let throttled = local.attempts.filter { $0.outcome == .throttled }.count
        print("history: alice has \(local.attempts.count) attempts (\(failed) failed, \(throttled) throttled) on both sides")
        try check(failed == 5 && throttled == 1, "alice's history should show 5 failed and 1 throttled attempt")
        let jose = try store.history(user: "jose")
        try check(jose.sessions.count == 1 && jose.sessions[0].end != nil, "José's one session should have ended")
        print("history: José signed in with \(jose.sessions[0].method) for \(jose.sessions[0].durationMilliseconds ?? 0) ms")

        // Verify: the hash chain and indexes here, and every replica against its signed heads.
        let report = try store.verify()
        try check(report.isValid, "verify: \(report.firstProblem?.description ?? "")")
        let audits = try embedded.server.audit()
        try check(audits.count == 1 && audits.allSatisfy(\.isValid), "the server's audit found a problem")
        print("verify: \(report.recordsChecked) records ok on the device; the server's replica ok, signed through seq \(audits[0].signedHeadSeq ?? 0)")
    }
}

/// A step that did not go as documented.
struct Failure: Error, CustomStringConvertible {
    let description: String
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw Failure(description: message()) }
}
