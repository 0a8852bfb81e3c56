import Foundation
import OnboardingModel
import OnboardingServer
import OnboardingStore

extension Simulator {
    /// The server stops between two requests (requests in flight wait in the network) and starts
    /// again from its data directory: cleanly, or from what a crash left.
    func restartServer() throws {
        let crash = options.databaseURL == nil && chance(500)
        if crash {
            try expect("taking the crash image of the server") { try CrashImage.replace(serverDirectory) { server.close() } }
        } else {
            server.close()
        }
        server = try expect("restarting the server") { try Self.makeServer(options: options, directory: serverDirectory, serverOptions: serverOptions) }
        guard server.unreadableReplicas.isEmpty else {
            throw failure("server restart", "replicas the server cannot read after a restart: \(server.unreadableReplicas.joined(separator: "; "))")
        }
        touchEveryReplica()
        statistics.serverRestarts += 1
        note("the server restarts" + (crash ? " from what a crash left" : " cleanly"))
    }

    /// A device that is not enrolled yet enrols (with its signing key, or as an older client
    /// without one) and gets its token.
    func enrol() throws -> Bool {
        guard let device = pick({ !$0.isEnrolled }) else { return false }
        let key = device.enrolsWithSigningKey ? try expect("reading the signing key of \(device.id)") { try device.store.signingPublicKey() } : nil
        let response = server.handle(
            SyncRequest(
                method: "POST", path: SyncPaths.devices,
                headers: ["authorization": "Bearer \(adminToken)", "content-type": SyncWire.contentType],
                body: SyncWire.enrolBody(device: device.id, publicKey: key)))
        guard response.status == 201, let token = try? SyncWire.token(from: response.body) else {
            throw failure("enrolment", "enrolling \(device.id) was answered \(response.status): \(String(decoding: response.body.prefix(300), as: UTF8.self))")
        }
        device.token = token
        let link = device.link
        device.network = FaultyTransport(
            wrapping: LinkTransport(link: link), seed: options.seed ^ (UInt64(device.index) << 48) ^ 0x5EED,
            faults: device.faults, sleep: { duration in await link.sleep(duration) })
        touchReplica(device)
        statistics.enrolments += 1
        note("\(device.id) enrols" + (key == nil ? " without a signing key" : " with its signing key"))
        return true
    }

    /// An admin revokes a device's tokens and issues it a new one (a lost phone found again): a
    /// run in progress ends with 401, the next one uses the new token.
    func replaceToken() throws -> Bool {
        guard let device = pick({ $0.isEnrolled }) else { return false }
        let headers = ["authorization": "Bearer \(adminToken)"]
        let revoked = server.handle(SyncRequest(method: "DELETE", path: SyncPaths.tokens(device: device.id), headers: headers))
        let issued = server.handle(SyncRequest(method: "POST", path: SyncPaths.tokens(device: device.id), headers: headers))
        guard revoked.status == 204, issued.status == 201, let token = try? SyncWire.token(from: issued.body) else {
            throw failure("enrolment", "replacing the token of \(device.id) was answered \(revoked.status) and \(issued.status)")
        }
        device.token = token
        statistics.tokenReplacements += 1
        note("\(device.id) gets a new token (the old ones are revoked)")
        return true
    }

    /// An admin forgets a user on the server: every replica that holds the device's pseudonym
    /// key destroys the user's key and asks its device to forget the user too.
    func forgetOnServer() throws -> Bool {
        let known = Set(devices.flatMap { $0.pseudonyms.keys }).sorted()
        guard !known.isEmpty else { return false }
        let user = known[random.below(known.count)]
        let results = try expect("forgetting \(user) on the server") { try server.forgetUser(user, at: clock.now) }
        var reached: Set<String> = []
        for result in results {
            guard let device = devices.first(where: { $0.id == result.device }) else {
                throw failure("erasure", "the server forgot \(user) in the replica of \(result.device), a device that never enrolled")
            }
            device.notePseudonym(of: user)
            guard result.pseudonym == device.pseudonyms[user]?.literal else {
                throw failure("erasure", "the replica of \(device.id) forgot \(user) under another pseudonym than the device's")
            }
            device.forgottenOnReplica.insert(user)
            reached.insert(device.id)
        }
        // Every replica holding a record of the user must have forgotten it.
        for device in devices where device.isEnrolled && !reached.contains(device.id) {
            let head = try expect("reading the replica of \(device.id)") { try server.withDeviceLog(of: device.id) { try $0.head() } }.seq
            if let record = device.log.prefix(Int(head)).first(where: { $0.event.user == user }) {
                throw failure("erasure", "the server's forget of \(user) passed over the replica of \(device.id), which holds seq \(record.seq) of the user")
            }
        }
        touchEveryReplica()
        statistics.serverForgets += 1
        note("the server forgets \(user) in \(results.count) replicas: " + results.map(\.device).sorted().joined(separator: ", "))
        return true
    }
}
