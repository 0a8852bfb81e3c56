import Dispatch
import Foundation
import OnboardingModel

/// Uploads a store's log to a sync server: every record the server does not hold yet, oldest
/// first, in bounded batches, resuming from the server's cursor, with back-off on failures.
///
/// ```swift
/// let client = SyncClient(store: store, transport: URLSessionTransport(baseURL: server), token: token)
/// let summary = try await client.run { progress in print(progress.acknowledgedSeq, "/", progress.headSeq) }
/// ```
///
/// The server's `acknowledged_seq` is the truth: the client starts from it (behind the local
/// cursor means the server lost data; the client resends). After every accepted batch the client
/// stores the acknowledgement durably (`OnboardingStore.setSyncCursor(_:)`) before reporting
/// progress. A crash between the server's commit and that write costs one resend, which the server
/// answers as duplicates.
public actor SyncClient {
    public let store: OnboardingStore
    /// The device whose log this client uploads (the store's own by default).
    public let device: String
    private let transport: any SyncTransport
    private let token: String
    private let batchEvents: Int
    private let sleep: @Sendable (Duration) async throws -> Void
    /// The device's clock: the time of the `user_forgotten` a forget request makes.
    private let now: @Sendable () -> Timestamp
    /// The server key given to this client; the store's pinned key when nil.
    private let serverKey: SigningPublicKey?
    /// Pseudonyms the server asked this run to forget that the store never held (ignored).
    private var unknownForgetRequests: Set<String> = []
    private var random: SyncRandom
    private var isRunning = false
    private var stopRequested = false
    private var pendingPause: Task<Void, Never>?
    /// The request in flight, cancelled when the run's time limit passes.
    private var currentDelivery: Task<SyncResponse, any Error>?
    private var timeLimitPassed = false
    /// Cursor writes fsync; they run here, off the cooperative thread pool.
    private let cursorQueue = DispatchQueue(label: "OnboardingSync.SyncClient.cursor")

    /// - Parameters:
    ///   - store: the device's store, whose log the client uploads and whose sync cursor it keeps.
    ///   - transport: how requests reach the server (``URLSessionTransport``, ``HTTPTransport``, …).
    ///   - device: the device id the token was enrolled for; by default the store's
    ///     (``OnboardingStore/deviceID``).
    ///   - token: the device token from enrolment (`onboard enroll`).
    ///   - batchEvents: records per upload, 1…``SyncLimits/maximumBatchEvents``.
    ///   - sleep: how the client waits between retries (tests pass a manual clock).
    ///   - now: the device's clock, which dates the `user_forgotten` events the server asks for;
    ///     by default the store's (``OnboardingStore/Options/clock``), which checks them.
    ///   - serverKey: the sync server's public key (the enrolment answer's `server_key`, printed by
    ///     `onboard enroll`). The first run with a key pins it in the store; later runs use the
    ///     pinned key and refuse another (``SyncError/serverKeyMismatch``). Forget requests are
    ///     carried out only when signed with the pinned key (docs/security.md).
    ///   - seed: seeds the back-off jitter (a fixed seed makes the waits reproducible).
    public init(
        store: OnboardingStore, transport: any SyncTransport, device: String? = nil, token: String,
        batchEvents: Int = SyncLimits.maximumBatchEvents,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        now: (@Sendable () -> Timestamp)? = nil,
        serverKey: SigningPublicKey? = nil,
        seed: UInt64 = UInt64.random(in: .min ... .max)
    ) {
        precondition(
            (1...SyncLimits.maximumBatchEvents).contains(batchEvents),
            "batchEvents must be 1…\(SyncLimits.maximumBatchEvents), got \(batchEvents)")
        self.store = store
        self.device = device ?? store.deviceID
        self.transport = transport
        self.token = token
        self.batchEvents = batchEvents
        self.sleep = sleep
        self.now = now ?? store.options.clock
        self.serverKey = serverKey
        self.random = SyncRandom(seed: seed)
    }

    /// Makes a run in progress return cleanly (``SyncSummary/wasStopped``) once its current request
    /// has been answered; a back-off wait is cut short. Does nothing when no run is in progress.
    public func stop() {
        guard isRunning else { return }
        stopRequested = true
        pendingPause?.cancel()
    }

    /// Uploads until the server holds the local head (including records appended meanwhile), or
    /// until ``stop()`` or task cancellation. Throws when the run cannot finish; what was
    /// acknowledged so far stays acknowledged.
    ///
    /// How long a run can take: every request has the transport's deadline (30 s by default,
    /// connecting and the whole answer included); a request that fails is tried at most
    /// ``SyncLimits/maximumAttempts`` times, with back-off waits of at most
    /// ``SyncLimits/maximumBackoffMilliseconds`` (or a `Retry-After` of at most
    /// ``SyncLimits/maximumRetryAfterSeconds``) between tries. So a run that stops making progress
    /// ends within 8 × 30 s + 7 × 30 s = 7.5 min (or 8 × 30 s + 7 × 300 s = 39 min when the server
    /// keeps asking to retry later); a run that makes progress goes on while it does. `timeLimit`
    /// bounds the whole run: when it passes, the request in flight is cancelled and the run
    /// throws ``SyncError/timeLimit``, with everything acknowledged so far kept.
    public func run(timeLimit: Duration? = nil, progress: (@Sendable (SyncProgress) -> Void)? = nil) async throws(SyncError) -> SyncSummary {
        guard !isRunning else {
            throw SyncError.busy.with("a sync run of device \(device) is already in progress; wait for it to finish")
        }
        isRunning = true
        let watchdog = timeLimit.map { limit in
            Task { [weak self] in
                try? await Task.sleep(for: limit)
                guard !Task.isCancelled else { return }
                await self?.timeLimitReached()
            }
        }
        defer {
            watchdog?.cancel()
            isRunning = false
            stopRequested = false
            timeLimitPassed = false
        }
        var summary = SyncSummary()
        do { return try await upload(summary: &summary, progress: progress) } catch {
            guard timeLimitPassed else { throw error }
            throw timeLimitError(timeLimit, summary: summary)
        }
    }

    private func timeLimitReached() {
        guard isRunning else { return }
        timeLimitPassed = true
        pendingPause?.cancel()
        currentDelivery?.cancel()
    }

    private func timeLimitError(_ limit: Duration?, summary: SyncSummary) -> SyncError {
        let seconds = limit.map { "\($0.components.seconds) s" } ?? "its time"
        return SyncError.timeLimit.with(
            "the sync of device \(device) passed its time limit of \(seconds); the server holds seq \(summary.acknowledgedSeq) (kept as acknowledged) — sync again to go on"
        )
    }

    /// The run: where the server stands (its cursor, and what it asks to forget), then the
    /// uploads until it holds the local head.
    private func upload(summary: inout SyncSummary, progress: (@Sendable (SyncProgress) -> Void)?) async throws(SyncError) -> SyncSummary {
        guard let cursor = try await readCursor(summary: &summary) else {
            try markStopped(&summary)
            return summary
        }
        let trustedKey = try await resolveServerKey()
        try await storeCursor(cursor.acknowledgedSeq)
        summary.acknowledgedSeq = cursor.acknowledgedSeq
        await forgetOnRequest(cursor, key: trustedKey, summary: &summary)
        try await uploadUntilHead(from: cursor.acknowledgedSeq + 1, key: trustedKey, summary: &summary, progress: progress)
        return summary
    }

    /// The server's cursor, checked against this store's log; `nil` when stopped while retrying.
    private func readCursor(summary: inout SyncSummary) async throws(SyncError) -> SyncWire.Cursor? {
        let what = "reading the server's cursor"
        guard let response = try await exchange(cursorRequest(), what: what, summary: &summary) else { return nil }
        guard response.status == 200 else { throw refusal(response, what: what) }
        let cursor = try parseCursor(response.body, what: "cursor")
        try checkServerCursor(cursor)
        return cursor
    }

    /// A run cut short by ``stop()`` or cancellation returns what it did; one cut short by its
    /// time limit throws.
    private func markStopped(_ summary: inout SyncSummary) throws(SyncError) {
        if timeLimitPassed { throw SyncError.timeLimit }
        summary.wasStopped = true
    }

    /// Where the upload loop stands.
    private struct UploadPosition {
        /// The first seq of the next batch.
        var next: UInt64
        /// Records per batch now: ``batchEvents``, halved while bodies are too large.
        var batchLimit: Int
        var uploaded = 0
        var gapsInARow = 0
        /// The highest seq whose outcome this run counted.
        var countedThrough: UInt64 = 0
    }

    /// Uploads oldest first from `next` until the server holds the head (re-read before every
    /// batch, so records appended meanwhile go too), or the run is stopped.
    private func uploadUntilHead(
        from next: UInt64, key: SigningPublicKey?, summary: inout SyncSummary,
        progress: (@Sendable (SyncProgress) -> Void)?
    ) async throws(SyncError) {
        var position = UploadPosition(next: next, batchLimit: batchEvents)
        while true {
            if shouldStop { return try markStopped(&summary) }
            let head = try reading { try store.head() }.seq
            guard position.next <= head else { return }
            let end = min(head, position.next + UInt64(position.batchLimit) - 1)
            let records = try readBatch(position.next...end)
            let request = try await uploadRequest(records)
            if request.body.count > SyncLimits.maximumBodyBytes && records.count > 1 {
                position.batchLimit = max(1, records.count / 2)
                continue
            }
            let what = "uploading seq \(position.next)…\(end)"
            guard let response = try await exchange(request, what: what, summary: &summary) else { return try markStopped(&summary) }
            try await handle(response, to: records, head: head, what: what, key: key, position: &position, summary: &summary, progress: progress)
        }
    }

    /// The records of `seqs`, read whole before anything is sent: no LMDB transaction is open
    /// across an await.
    private func readBatch(_ seqs: ClosedRange<UInt64>) throws(SyncError) -> [Record] {
        let records = try reading { try store.records(in: seqs) }
        guard records.count == seqs.count, records.first?.seq == seqs.lowerBound, records.last?.seq == seqs.upperBound else {
            throw SyncError.store.with("the local log of \(store.path) lacks records between seq \(seqs.lowerBound) and \(seqs.upperBound); run onboard verify")
        }
        return records
    }

    /// What the server answered to the upload of `records`: an acknowledgement moves on, a gap
    /// rewinds, a body too large halves the batch; any other answer ends the run.
    private func handle(
        _ response: SyncResponse, to records: [Record], head: UInt64, what: String, key: SigningPublicKey?,
        position: inout UploadPosition, summary: inout SyncSummary,
        progress: (@Sendable (SyncProgress) -> Void)?
    ) async throws(SyncError) {
        let refused = SyncWire.error(from: response.body)
        switch response.status {
        case 200:
            try await accept(response, of: records, head: head, what: what, key: key, position: &position, summary: &summary, progress: progress)
        case 409 where refused?.code == .gap:
            try await rewind(to: refused?.expectedSeq, head: head, what: what, position: &position, summary: &summary)
        case 413 where records.count > 1:
            position.batchLimit = max(1, records.count / 2)
        case 413:
            throw SyncError.refused.with(
                "the server refuses record seq \(records[0].seq) of device \(device) as too large even alone (413); raise the server's body limit")
        default:
            throw refusal(response, what: what, batch: records[0].seq...records[records.count - 1].seq)
        }
    }

    /// A 200: checks that it acknowledges the batch, stores the cursor, carries out the forget
    /// requests it brings, counts each record once per run and reports progress.
    private func accept(
        _ response: SyncResponse, of records: [Record], head: UInt64, what: String, key: SigningPublicKey?,
        position: inout UploadPosition, summary: inout SyncSummary,
        progress: (@Sendable (SyncProgress) -> Void)?
    ) async throws(SyncError) {
        let end = records[records.count - 1].seq
        let acknowledged = try parseCursor(response.body, what: "answer to \(what)")
        let outcomes: [SyncWire.Outcome]
        do { outcomes = try SyncWire.outcomes(from: response.body) } catch {
            throw SyncError.badResponse.with(
                "the server's answer to \(what) has unreadable results (\(error)); nothing of the batch was marked acknowledged — \(Self.protocolAdvice)")
        }
        try checkAcknowledgement(acknowledged, outcomes: outcomes, of: records, what: what)
        // Never more than this batch: an acknowledgement beyond it (another run of this
        // device got further) moves on, but the durable cursor stays at what was sent.
        try await storeCursor(end)
        await forgetOnRequest(acknowledged, key: key, summary: &summary)
        // Each seq counts once per run, however often a rewind resent it.
        for outcome in outcomes where outcome.seq > position.countedThrough {
            if outcome.kind == .appended { summary.appended += 1 } else { summary.duplicates += 1 }
        }
        position.countedThrough = max(position.countedThrough, end)
        summary.batches += 1
        summary.acknowledgedSeq = acknowledged.acknowledgedSeq
        position.uploaded += records.count
        position.gapsInARow = 0
        position.next = acknowledged.acknowledgedSeq + 1
        progress?(SyncProgress(uploaded: position.uploaded, acknowledgedSeq: acknowledged.acknowledgedSeq, headSeq: head))
    }

    /// A 409 `gap`: uploads from the server's `expected_seq` next, which must be within the
    /// local log and not behind its prune point; ``SyncLimits/maximumAttempts`` gaps in a row end
    /// the run.
    private func rewind(
        to expectedSeq: UInt64?, head: UInt64, what: String, position: inout UploadPosition,
        summary: inout SyncSummary
    ) async throws(SyncError) {
        guard let expected = expectedSeq, expected >= 1, expected <= head + 1 else {
            throw SyncError.badResponse.with(
                "the server answered gap to \(what) with expected_seq \(expectedSeq.map(String.init) ?? "missing"), outside 1…\(head + 1); report this server bug"
            )
        }
        try checkNotBehindPrunePoint(expected - 1, try reading { try store.prunedThrough() })
        position.gapsInARow += 1
        guard position.gapsInARow <= SyncLimits.maximumAttempts else {
            throw SyncError.refused.with(
                "the server answered gap \(position.gapsInARow) times in a row (last expected seq \(expected)); its cursor keeps moving — sync again later")
        }
        summary.rewinds += 1
        // Only ever move the durable cursor back on a gap: it must never claim more than the
        // server holds.
        if expected - 1 < (try reading { try store.syncCursor() }) { try await storeCursor(expected - 1) }
        summary.acknowledgedSeq = expected - 1
        position.next = expected
    }

    /// The server's cursor must name a prefix of this store's log: not beyond its head, not
    /// behind its prune point, with this store's hash at that seq.
    private func checkServerCursor(_ cursor: SyncWire.Cursor) throws(SyncError) {
        let localHead = try reading { try store.head() }
        guard cursor.acknowledgedSeq <= localHead.seq else {
            throw SyncError.serverAhead.with(
                "the server holds device \(device) up to seq \(cursor.acknowledgedSeq) but this store ends at seq \(localHead.seq): the store was restored from an older copy or another store uses the same device id; enrol this store as a new device instead of syncing it"
            )
        }
        let prunedThrough = try reading { try store.prunedThrough() }
        try checkNotBehindPrunePoint(cursor.acknowledgedSeq, prunedThrough)
        if cursor.acknowledgedSeq > 0 {
            // At the prune point the record is gone; the hash it left stands for it.
            let localHash =
                cursor.acknowledgedSeq == prunedThrough?.seq
                ? prunedThrough?.hash : try reading { try store.storedRecord(at: cursor.acknowledgedSeq) }?.hash
            guard let localHash, localHash == cursor.headHash else {
                throw SyncError.fork.with(
                    "the server's record at seq \(cursor.acknowledgedSeq) of device \(device) has hash \(cursor.headHash.hex), this store's has \(localHash?.hex ?? "none"): the logs have diverged; nothing was uploaded — keep both and have an operator compare them (onboard verify, the server's audit log) before syncing this device again"
                )
            }
        }
    }

    /// Asks the server now how far it holds this device's log, and checks the answer against the
    /// store as a run does (a prefix of the log with the same hash). `onboard prune` calls it right
    /// before deleting anything and prunes no further than the seq it returns: a server that lost
    /// records, or lies, can then not make the device delete what it does not hold.
    ///
    /// ```swift
    /// let confirmed = try await client.confirmedAcknowledgement()
    /// ```
    public func confirmedAcknowledgement() async throws(SyncError) -> UInt64 {
        var summary = SyncSummary()
        guard let response = try await exchange(cursorRequest(), what: "reading the server's cursor", summary: &summary) else {
            throw SyncError.unavailable.with("asking the server for the cursor of device \(device) was stopped; nothing was confirmed")
        }
        guard response.status == 200 else { throw refusal(response, what: "reading the server's cursor") }
        let cursor = try parseCursor(response.body, what: "cursor")
        try checkServerCursor(cursor)
        return cursor.acknowledgedSeq
    }

    // MARK: Requests

    /// Forgets in the local store the users the server forgot (docs/audit.md § Erasure): each
    /// appends `user_forgotten`, which this run then uploads; the server stops asking once it
    /// holds it. Only requests signed with the pinned server key are carried out, and only for
    /// users this store holds (docs/security.md, "Server-driven forgets"); the rest are reported
    /// in the summary, as are requests the store cannot carry out. None of it stops the sync.
    private func forgetOnRequest(_ answer: SyncWire.Cursor, key: SigningPublicKey?, summary: inout SyncSummary) async {
        guard !answer.forgetUsers.isEmpty else { return }
        guard let key else {
            summary.forgetRequestsRefused =
                "the server asked to forget \(answer.forgetUsers.count) users, but this store has no pinned server key, so nothing was forgotten; pin the key onboard enroll printed (onboard sync --server-key) and sync again"
            return
        }
        guard answer.forgetRequestsAreSigned(by: key) else {
            summary.forgetRequestsRefused =
                "the server asked to forget \(answer.forgetUsers.count) users without a valid signature of the pinned server key \(key.hex.prefix(16))…, so nothing was forgotten; the answer did not come from the server this device enrolled with"
            return
        }
        for pseudonym in answer.forgetUsers where !summary.forgottenOnRequest.contains(pseudonym) {
            do {
                if try store.isForgotten(pseudonym) { continue } // its user_forgotten is on its way up
                guard try store.holdsLiveUser(pseudonym) else {
                    // Never seen here: a forget would only add an event for nothing.
                    unknownForgetRequests.insert(pseudonym)
                    summary.unknownForgetRequests = unknownForgetRequests.count
                    continue
                }
                _ = try await store.forgetUser(pseudonym, at: now())
                summary.forgottenOnRequest.append(pseudonym)
            } catch {
                if !summary.forgetFailures.contains(where: { $0.hasPrefix(pseudonym) }) {
                    summary.forgetFailures.append("\(pseudonym): \(error.message)")
                }
            }
        }
    }

    /// The key forget requests must be signed with: the one given (pinned now if the store has
    /// none) or the store's pinned one; nil when there is neither.
    private func resolveServerKey() async throws(SyncError) -> SigningPublicKey? {
        let store = self.store
        let given = serverKey
        let result: Result<SigningPublicKey?, StoreError> = await withCheckedContinuation { continuation in
            cursorQueue.async {
                continuation.resume(
                    returning: Result { () throws(StoreError) -> SigningPublicKey? in
                        guard let given else { return try store.pinnedServerKey() }
                        try store.pinServerKey(given)
                        return given
                    })
            }
        }
        do { return try result.get() } catch  where error.code == .conflict {
            throw SyncError.serverKeyMismatch.with("\(error.message); nothing was uploaded")
        } catch {
            throw SyncError.store.with("reading the pinned server key failed: \(error)")
        }
    }

    private func cursorRequest() -> SyncRequest {
        SyncRequest(method: "GET", path: SyncPaths.cursor(device: device), headers: ["authorization": "Bearer \(token)"])
    }

    /// The upload of `records`, with the store's signed head at its last record and the keys
    /// the server's replica needs for them.
    private func uploadRequest(_ records: [Record]) async throws(SyncError) -> SyncRequest {
        let signedHead = try await signHead(through: records[records.count - 1].seq)
        let keys = try reading { try store.syncKeys(for: records) }
        return SyncRequest(
            method: "POST", path: SyncPaths.events(device: device),
            headers: ["authorization": "Bearer \(token)", "content-type": SyncWire.contentType],
            body: SyncWire.uploadBody(device: device, records: records, signedHead: signedHead, keys: keys))
    }

    private var shouldStop: Bool { stopRequested || timeLimitPassed || Task.isCancelled }

    /// Sends `request` until it gets an answer that is not 429 or 5xx, waiting with back-off (or
    /// `Retry-After`) between tries. `nil` when stopped while retrying.
    private func exchange(
        _ request: SyncRequest, what: String,
        summary: inout SyncSummary
    ) async throws(SyncError) -> SyncResponse? {
        var failures = 0
        while true {
            if shouldStop { return nil }
            let problem: String
            var retryAfterSeconds: Int?
            do {
                let response = try await deliver(request)
                if (300...399).contains(response.status) { throw redirect(response, what: what) }
                guard response.status == 429 || (500...599).contains(response.status) else { return response }
                problem = "HTTP \(response.status)" + (SyncWire.error(from: response.body).map { " \($0)" } ?? "")
                retryAfterSeconds = response.retryAfterSeconds
            } catch let error as SyncError {
                throw error
            } catch let error as TransportError where error.isPermanent {
                throw SyncError.unavailable.with("\(what) for device \(device) failed: \(error.message); nothing was sent, and trying again would not help")
            } catch {
                problem = "\(error)"
            }
            failures += 1
            guard failures < SyncLimits.maximumAttempts else {
                throw SyncError.unavailable.with(
                    "\(what) for device \(device) failed \(failures) times in a row (last: \(problem)); the events stay in the local store and the next sync resumes where this one stopped — check the network and the server (\(SyncPaths.health)), then sync again"
                )
            }
            let wait: Duration
            if let retryAfterSeconds {
                wait = .seconds(min(max(retryAfterSeconds, 0), SyncLimits.maximumRetryAfterSeconds))
            } else {
                wait = .milliseconds(Int(random.next() % UInt64(Self.backoffCap(afterFailures: failures) / .milliseconds(1) + 1)))
            }
            summary.retries += 1
            await pause(wait)
        }
    }

    /// Sends in a task of its own, so cancelling the run lets the current request finish.
    private func deliver(_ request: SyncRequest) async throws -> SyncResponse {
        let transport = self.transport
        let task = Task { try await transport.send(request) }
        currentDelivery = task
        defer { currentDelivery = nil }
        if timeLimitPassed { task.cancel() }
        return try await task.value
    }

    /// Waits `duration` unless ``stop()`` or cancellation cuts it short.
    private func pause(_ duration: Duration) async {
        let sleep = self.sleep
        let task = Task { _ = try? await sleep(duration) }
        pendingPause = task
        await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
        pendingPause = nil
    }

    /// The upper bound of the full-jitter wait after `failures` consecutive failures:
    /// ``SyncLimits/initialBackoffMilliseconds`` doubled per failure, capped at
    /// ``SyncLimits/maximumBackoffMilliseconds``.
    static func backoffCap(afterFailures failures: Int) -> Duration {
        precondition(failures >= 1, "back-off follows at least one failure")
        let doublings = min(failures - 1, 30)
        return .milliseconds(min(SyncLimits.maximumBackoffMilliseconds, SyncLimits.initialBackoffMilliseconds << doublings))
    }

    // MARK: Answers and the store

    /// How the messages of protocol violations end.
    static let protocolAdvice =
        "the server does not follow the sync protocol (a bug, a proxy in the way, or not an onboard server); check the address and report it"

    /// `what`: "cursor" or "answer to uploading seq …", for the message.
    private func parseCursor(_ body: [UInt8], what: String) throws(SyncError) -> SyncWire.Cursor {
        let cursor: SyncWire.Cursor
        do { cursor = try SyncWire.cursor(from: body) } catch {
            throw SyncError.badResponse.with("the server's \(what) is unreadable (\(error)); nothing was marked acknowledged — \(Self.protocolAdvice)")
        }
        guard cursor.device == device else {
            throw SyncError.badResponse.with("asked about device \(device), the server's \(what) is about \(cursor.device); check the server address")
        }
        guard cursor.forgetUsers.count <= SyncLimits.maximumForgetUsersPerAnswer else {
            throw SyncError.badResponse.with(
                "the server's \(what) asks to forget \(cursor.forgetUsers.count) users, more than the protocol's \(SyncLimits.maximumForgetUsersPerAnswer) per answer; nothing was forgotten — \(Self.protocolAdvice)"
            )
        }
        return cursor
    }

    /// A 200 to an upload must acknowledge the batch: a result per record at its seq, none
    /// refused, and `acknowledged_seq` with `head_hash` naming a record of this store at or after
    /// the batch's last seq with this store's hash there (the hash chain makes that hash stand for
    /// every record before it). Beyond the batch is honest only when another run of this device
    /// uploaded further meanwhile, so it must be within this store's log and match it. Anything
    /// else is a protocol violation, and nothing of the batch is marked acknowledged — above all
    /// not more than was sent, which `prune` would then delete.
    private func checkAcknowledgement(
        _ acknowledged: SyncWire.Cursor, outcomes: [SyncWire.Outcome],
        of records: [Record], what: String
    ) throws(SyncError) {
        let first = records[0].seq
        let last = records[records.count - 1]
        if let refused = outcomes.first(where: { $0.kind == .refused }) {
            throw SyncError.badResponse.with(
                "the server answered 200 to \(what) but refused seq \(refused.seq) (\(refused.reason ?? "no reason")); a batch is all or nothing, so nothing was marked acknowledged — \(Self.protocolAdvice)"
            )
        }
        guard outcomes.count == records.count,
            outcomes.enumerated().allSatisfy({ $0.element.seq == first + UInt64($0.offset) })
        else {
            throw SyncError.badResponse.with(
                "the server answered \(what) with \(outcomes.count) results, not one for each of the \(records.count) records in order; nothing was marked acknowledged — \(Self.protocolAdvice)"
            )
        }
        let seq = acknowledged.acknowledgedSeq
        guard seq >= last.seq else {
            throw SyncError.badResponse.with(
                "the server acknowledged seq \(seq) in its answer to \(what), short of the batch (seq \(last.seq)); nothing was marked acknowledged — \(Self.protocolAdvice)"
            )
        }
        let local: Record? = seq == last.seq ? last : try reading { try store.storedRecord(at: seq) }
        guard let local else {
            throw SyncError.badResponse.with(
                "the server acknowledged seq \(seq) in its answer to \(what), beyond the last record this store holds; nothing was marked acknowledged, so nothing can be pruned on its word — \(Self.protocolAdvice)"
            )
        }
        guard acknowledged.headHash == local.hash else {
            throw SyncError.badResponse.with(
                "the server acknowledged seq \(seq) of device \(device) with hash \(acknowledged.headHash.hex), but this store's record there has \(local.hash.hex); nothing was marked acknowledged, so nothing can be pruned on its word — \(Self.protocolAdvice)"
            )
        }
    }

    /// A 3xx: never followed, so the token stayed with this request. Names the target's origin
    /// only (its path or query may carry anything).
    private func redirect(_ response: SyncResponse, what: String) -> SyncError {
        let target = response.headers["location"].flatMap { URL(string: $0) }.flatMap { url -> String? in
            guard let scheme = url.scheme, let host = url.host else { return nil }
            return "\(scheme)://\(host)\(url.port.map { ":\($0)" } ?? "")"
        }
        let whereTo = target.map { " to \($0)" } ?? (response.headers["location"] == nil ? " without a location" : " to a relative location")
        return SyncError.redirected.with(
            "the server answered \(what) with HTTP \(response.status), a redirect\(whereTo); redirects are never followed, so the device token was sent nowhere else — if that is the sync server, give its address itself (--server)"
        )
    }

    /// What the client does with a refusal that carries `code` at the code's status: one switch
    /// over every code, so a code added to ``SyncErrorCode`` must be given a handling here.
    enum RefusalHandling: Equatable {
        /// Upload from the refusal's `expected_seq` (a rewind).
        case rewind
        /// Send half the batch; a single record ends the run as ``SyncError/refused``.
        case halveBatch
        /// Send the same request again after `Retry-After` or a back-off
        /// (``exchange(_:what:summary:)``); ``SyncError/unavailable`` after
        /// ``SyncLimits/maximumAttempts`` tries.
        case retry
        /// End the run with an error of this code.
        case end(SyncError.Code)
    }

    static func handling(of code: SyncErrorCode) -> RefusalHandling {
        switch code {
        case .gap: .rewind
        case .tooLarge: .halveBatch
        case .busy, .rateLimited, .internal, .unavailable: .retry
        case .fork: .end(.fork)
        case .historyRewritten: .end(.historyRewritten)
        case .chainBroken: .end(.chainBroken)
        case .badSignature, .signatureRequired: .end(.badSignature)
        case .unauthorized: .end(.unauthorized)
        case .tokenExpired: .end(.tokenExpired)
        case .forbidden: .end(.forbidden)
        // Client bugs, a replaced device store, answers to requests a sync run never makes:
        // nothing a run can act on.
        case .malformed, .foreignDevice, .futureEvent, .notFound, .methodNotAllowed, .keysChanged, .pruned, .keyMismatch,
            .unsupportedMediaType, .tooManyHeaders:
            .end(.refused)
        }
    }

    /// The error a refusal ends the run with. Its code decides when it comes with the code's own
    /// status (``SyncErrorCode/status``); without a code this build knows, or with another
    /// status, the status decides. `batch`: the seqs of the upload refused (`nil` for the cursor
    /// request, which the codes about a batch never answer).
    private func refusal(_ response: SyncResponse, what: String, batch: ClosedRange<UInt64>? = nil) -> SyncError {
        let body = SyncWire.error(from: response.body)
        let detail = body.map { " (\($0))" } ?? ""
        if let body, let code = body.code, code.status == response.status, case .end(let ending) = Self.handling(of: code) {
            switch (ending, batch) {
            case (.fork, let batch?):
                return SyncError.fork.with(
                    "the server holds a different record than this store in seq \(batch.lowerBound)…\(batch.upperBound) of device \(device) (\(body.message)); the logs have diverged — nothing was resent; have an operator compare them (onboard verify, the server's audit log) before syncing again"
                )
            case (.historyRewritten, let batch?):
                return SyncError.historyRewritten.with(
                    "the server holds a head device \(device) signed earlier, and seq \(batch.lowerBound)…\(batch.upperBound) contradict it (\(body.message)); this log was rewritten after it was signed — nothing was resent; run onboard verify and have an operator audit the server copy (onboard audit)"
                )
            case (.chainBroken, let batch?):
                return SyncError.chainBroken.with(
                    "the server found the hash chain broken in seq \(batch.lowerBound)…\(batch.upperBound) of device \(device) (\(body.message)); run onboard verify on this store; nothing was resent"
                )
            case (.badSignature, let batch?):
                return SyncError.badSignature.with(
                    "the server refused the signed head of seq \(batch.upperBound) of device \(device) (\(body)); this store's signing.key is not the key registered at enrolment — enrol the device with this store's public key (onboard verify prints it)"
                )
            case (.tokenExpired, _):
                return SyncError.tokenExpired.with(
                    "the token of device \(device) expired (401\(detail)); ask the server's admin for a new one (onboard enroll --device \(device)), and rotate it before it expires next time (onboard token --rotate, or SyncTokenClient.rotate())"
                )
            default:
                break // what the status says below
            }
        }
        switch response.status {
        case 401:
            return SyncError.unauthorized.with(
                "the server refused the token of device \(device) (401\(detail)); enrol the device again or ask an operator for a new token")
        case 403:
            return SyncError.forbidden.with("the token may not write the log of device \(device) (403\(detail)); use the token issued to this device")
        default:
            return SyncError.refused.with(
                "\(what) for device \(device) was refused with HTTP \(response.status)\(detail); the client and server may disagree on the protocol — upgrade one of them"
            )
        }
    }

    private func reading<T>(_ body: () throws -> T) throws(SyncError) -> T {
        do { return try body() } catch {
            throw SyncError.store.with("reading the local store failed: \(error)")
        }
    }

    /// The store's signed head at `seq` (kept in the store), made on the cursor queue because it
    /// commits and fsyncs; `nil` when the store holds no signing key (a read-only or replica store).
    private func signHead(through seq: UInt64) async throws(SyncError) -> SignedHead? {
        let store = self.store
        guard store.canSignHeads else { return nil }
        let result: Result<SignedHead?, StoreError> = await withCheckedContinuation { continuation in
            cursorQueue.async { continuation.resume(returning: Result { () throws(StoreError) in try store.signHead(through: seq) }) }
        }
        do { return try result.get() } catch {
            throw SyncError.store.with("signing the head at seq \(seq) failed: \(error); fix the store (onboard verify) and sync again")
        }
    }

    /// A server behind the prune point asks for records this store no longer has: they exist
    /// only in the server's backups now.
    private func checkNotBehindPrunePoint(_ serverSeq: UInt64, _ point: PrunePoint?) throws(SyncError) {
        guard let point, serverSeq < point.seq else { return }
        throw SyncError.refused.with(
            "the server holds device \(device) only up to seq \(serverSeq) but this store pruned seq 1…\(point.seq) after the server had acknowledged them: the server lost acknowledged records; restore the server's data from a backup — this store cannot resend seq \(serverSeq + 1)…\(point.seq)"
        )
    }

    private func storeCursor(_ seq: UInt64) async throws(SyncError) {
        let store = self.store
        let result: Result<Void, StoreError> = await withCheckedContinuation { continuation in
            cursorQueue.async { continuation.resume(returning: Result { () throws(StoreError) in try store.setSyncCursor(seq) }) }
        }
        do { try result.get() } catch {
            throw SyncError.store.with(
                "storing the sync cursor (seq \(seq)) failed: \(error); the server keeps what it acknowledged — fix the store and sync again")
        }
    }
}
