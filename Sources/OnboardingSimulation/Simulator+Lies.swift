import Foundation
import OnboardingModel
import OnboardingServer
import OnboardingStore

extension Simulator {
    // MARK: The hostile server

    /// The answer `request` of `device` gets where the network meets the server: the real
    /// server's, or, in the hostile mode on a seeded share of requests (never while the network
    /// heals for a convergence), a lie built from it (docs/testing.md § The hostile server).
    func serverSide(_ request: SyncRequest, of device: SimulatedDevice) throws -> SyncResponse {
        let hostile = options.lieRatePerMille > 0
        if hostile { liar.hear(request, device: device.index) }
        guard hostile, !healing, chance(options.lieRatePerMille), let lie = chooseLie(for: request) else {
            return try forward(request, of: device)
        }
        // Half the redirects and acknowledgements come from something in front of the server
        // that never forwards (a cache, a captive portal, a stale proxy): believed, such an
        // acknowledgement claims a batch the server never got. Every other lie starts from what
        // the real server did.
        let honest = lie.mayAnswerUnforwarded && chance(500) ? nil : try forward(request, of: device)
        guard let lied = fabricate(lie, for: request, honest: honest, device: device) else { return try honest ?? forward(request, of: device) }
        statistics.lies += 1
        statistics.liesByKind[lie.rawValue, default: 0] += 1
        device.liesThisRun.insert(lie)
        note("\(device.id): the path lies: \(lie.rawValue) (\(honest.map { "the server answered \($0.status)" } ?? "the server never saw the request"))")
        return lied
    }

    /// The real server's answer, with its bookkeeping.
    func forward(_ request: SyncRequest, of device: SimulatedDevice) throws -> SyncResponse {
        let response = server.handle(request)
        try observe(request, response, device)
        if options.lieRatePerMille > 0 { liar.hear(response) }
        return response
    }

    private func chooseLie(for request: SyncRequest) -> Lie? {
        let endpoint = request.path.split(separator: "/").last.map(String.init)
        let candidates: [Lie]
        switch (request.method, endpoint) {
        case ("POST", "events"): candidates = Lie.toUploads
        case ("GET", "cursor"): candidates = Lie.toCursorRequests
        default: return nil
        }
        let told = options.undetectableLies ? candidates : candidates.filter { !$0.isUndetectable }
        var roll = random.below(told.reduce(0) { $0 + $1.weight })
        for lie in told {
            if roll < lie.weight { return lie }
            roll -= lie.weight
        }
        preconditionFailure("the roll passed every lie's weight")
    }

    /// The lie's answer, or `nil` when it does not fit this exchange (a forget request or a
    /// cursor needs a 200 to build on; a refused batch needs a refusal); the real answer then
    /// goes through.
    private func fabricate(_ lie: Lie, for request: SyncRequest, honest: SyncResponse?, device: SimulatedDevice) -> SyncResponse? {
        let upload = request.method == "POST" ? try? SyncWire.upload(from: request.body) : nil
        let honestCursor = honest.flatMap { $0.status == 200 ? try? SyncWire.cursor(from: $0.body) : nil }
        let honestOutcomes = honest.flatMap { $0.status == 200 ? try? SyncWire.outcomes(from: $0.body) : nil }
        let records = upload?.records ?? []
        // What an upload's answer says of each record: the real results, or every record new.
        let outcomes = honestOutcomes ?? records.map { SyncWire.Outcome(seq: $0.seq, kind: .appended) }

        func answer(_ cursor: SyncWire.Cursor, _ results: [SyncWire.Outcome]? = nil) -> SyncResponse {
            let body = upload == nil ? SyncWire.cursorBody(cursor) : SyncWire.uploadResponseBody(cursor, outcomes: results ?? outcomes)
            return SyncResponse(status: 200, headers: ["content-type": SyncWire.contentType], body: body)
        }
        /// The batch acknowledged as sent, keeping the real answer's forget requests.
        func batchCursor(seq: UInt64, hash: Digest) -> SyncWire.Cursor {
            SyncWire.Cursor(
                device: device.id, acknowledgedSeq: seq, headHash: hash,
                forgetUsers: honestCursor?.forgetUsers ?? [], forgetSignature: honestCursor?.forgetSignature)
        }

        switch lie {
        case .acknowledgesBeyondTheBatch:
            guard let last = records.last else { return nil }
            let later = liar.seen(device: device.index, in: (last.seq + 1)...UInt64.max)
            switch random.below(3) {
            case 0 where !later.isEmpty:
                let claim = later[random.below(later.count)]
                return answer(batchCursor(seq: claim.seq, hash: claim.hash))
            case 0, 1:
                return answer(batchCursor(seq: last.seq + 1 + UInt64(random.below(1000)), hash: last.hash))
            default:
                return answer(batchCursor(seq: .max, hash: randomDigest()))
            }

        case .wrongHeadHash:
            guard let last = records.last else { return nil }
            return answer(batchCursor(seq: last.seq, hash: chance(500) ? last.previousHash : randomDigest()))

        case .missingResults:
            guard let last = records.last else { return nil }
            var results = outcomes
            if results.count > 1 && chance(400) {
                results.reverse()
            } else {
                results.removeLast(1 + random.below(results.count))
            }
            return answer(batchCursor(seq: last.seq, hash: last.hash), results)

        case .refusalInside200:
            guard let last = records.last else { return nil }
            var results = outcomes
            let index = random.below(results.count)
            results[index] = SyncWire.Outcome(seq: results[index].seq, kind: .refused, reason: SyncErrorCode.futureEvent.rawValue)
            return answer(batchCursor(seq: last.seq, hash: last.hash), results)

        case .unreadable:
            let genuine = honest?.body ?? Array("{\"device\":\"\(device.id)\",\"acknowledged_seq\":0}".utf8)
            let bodies: [[UInt8]] = [
                Array(genuine.prefix(random.below(max(1, genuine.count)))),
                Array("<html><body><h1>502 Bad Gateway</h1></body></html>".utf8),
                [],
                Array("[]".utf8)
            ]
            return SyncResponse(
                status: 200, headers: ["content-type": chance(500) ? SyncWire.contentType : "text/html"],
                body: bodies[random.below(bodies.count)])

        case .redirect:
            let statuses = [301, 302, 303, 307, 308]
            let targets: [String?] = ["https://sync.example.net\(request.path)", "http://10.0.0.1:8080/", "/v1/elsewhere", nil]
            let target = targets[random.below(targets.count)]
            return SyncResponse(status: statuses[random.below(statuses.count)], headers: target.map { ["location": $0] } ?? [:])

        case .forgetsStrangers:
            guard var cursor = honestCursor else { return nil }
            cursor.forgetUsers += (0...random.below(5)).map { _ in strangerPseudonym() }
            // Signed with the server's key: a server that asks for users it never had (a bug);
            // or not signed at all.
            cursor.forgetSignature = chance(500) ? server.signingKey.sign(SyncWire.forgetMessage(device: device.id, pseudonyms: cursor.forgetUsers)) : nil
            return answer(cursor)

        case .forgetsUnsigned, .forgetsWithBadSignature:
            guard var cursor = honestCursor else { return nil }
            let live = liveUsers(of: device)
            if live.isEmpty {
                cursor.forgetUsers = [strangerPseudonym()]
            } else {
                let start = random.below(live.count)
                cursor.forgetUsers = (0..<min(live.count, 1 + random.below(3))).map { live[(start + $0) % live.count] }
            }
            if lie == .forgetsUnsigned {
                cursor.forgetSignature = nil
            } else {
                let message = SyncWire.forgetMessage(device: device.id, pseudonyms: cursor.forgetUsers)
                let replayed = liar.signedForgets.isEmpty ? nil : liar.signedForgets[random.below(liar.signedForgets.count)].forgetSignature
                switch random.below(3) {
                case 0: cursor.forgetSignature = liar.key.sign(message)
                case 1 where replayed != nil: cursor.forgetSignature = replayed
                default: cursor.forgetSignature = (0..<SignedHead.signatureByteCount).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                }
            }
            return answer(cursor)

        case .forgetsTooMany:
            guard var cursor = honestCursor else { return nil }
            let count = SyncLimits.maximumForgetUsersPerAnswer + 1 + random.below(50)
            cursor.forgetUsers = (0..<count).map { _ in strangerPseudonym() }
            cursor.forgetSignature = server.signingKey.sign(SyncWire.forgetMessage(device: device.id, pseudonyms: cursor.forgetUsers))
            return answer(cursor)

        case .cursorClaimsMore:
            guard var cursor = honestCursor else { return nil }
            let head = UInt64(device.log.count)
            switch random.below(3) {
            case 0 where cursor.acknowledgedSeq < head:
                cursor.acknowledgedSeq += 1 + UInt64(random.below(Int(head - cursor.acknowledgedSeq)))
                cursor.headHash = randomDigest()
            case 0, 1:
                cursor.acknowledgedSeq = head + 1 + UInt64(random.below(1 << 20))
            default:
                cursor.acknowledgedSeq = .max
            }
            return answer(cursor)

        case .cursorClaimsLess:
            guard var cursor = honestCursor, cursor.acknowledgedSeq > 0 else { return nil }
            let earlier = [(seq: UInt64(0), hash: Digest.zero)] + liar.seen(device: device.index, in: 1...(cursor.acknowledgedSeq - 1))
            let claim = earlier[random.below(earlier.count)]
            cursor.acknowledgedSeq = claim.seq
            cursor.headHash = claim.hash
            return answer(cursor)

        case .cursorClaimsASeenSeq:
            guard var cursor = honestCursor, cursor.acknowledgedSeq < .max else { return nil }
            let unheld = liar.seen(device: device.index, in: (cursor.acknowledgedSeq + 1)...UInt64.max)
            guard !unheld.isEmpty else { return nil }
            let claim = unheld[random.below(unheld.count)]
            cursor.acknowledgedSeq = claim.seq
            cursor.headHash = claim.hash
            return answer(cursor)

        case .acknowledgesARefusedBatch:
            guard let honest, honest.status != 200, let last = records.last else { return nil }
            return answer(batchCursor(seq: last.seq, hash: last.hash))
        }
    }

    /// Pseudonyms of the users `device` holds live: what a liar who read its uploads (names and
    /// the pseudonym key travel with them) can name in a forget request.
    private func liveUsers(of device: SimulatedDevice) -> [String] {
        device.pseudonyms.values.map(\.literal).filter { (try? device.store.holdsLiveUser($0)) == true }.sorted()
    }

    private func strangerPseudonym() -> String {
        UserRef(bytes: (0..<UserRef.byteCount).map { _ in UInt8(truncatingIfNeeded: random.next()) }).literal
    }

    private func randomDigest() -> Digest {
        Digest(bytes: (0..<Digest.byteCount).map { _ in UInt8(truncatingIfNeeded: random.next()) })
    }

    /// Whether `error`, which ended a run or a prune's confirmation of `device`, is how a client
    /// catches one of the lies told since it began.
    func isCaughtLie(_ error: SyncError, of device: SimulatedDevice) -> Bool {
        device.liesThisRun.contains { $0.possibleErrors.contains(error) }
    }
}
