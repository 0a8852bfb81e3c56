import OnboardingModel
import OnboardingStore

/// What the lying server of the hostile mode knows: only what crossed the path between the
/// devices and the server (the hash of every record an upload carried, whether or not the server
/// kept it, and the real server's signed forget requests), and a signing key of its own. It never
/// holds the server's signing key: a lie signed with that key is a server bug, which the
/// simulator signs for it (``Lie/forgetsStrangers``, ``Lie/forgetsTooMany``).
struct LiarMemory {
    /// Signed forget requests kept to replay: a few are enough to replay one to the wrong device
    /// or with other users, and the bound keeps a long run's memory flat.
    static let keptForgetRequests = 8

    /// Per device (by its index), the hash of every seq an upload carried.
    private(set) var seenHashes: [Int: [UInt64: Digest]] = [:]
    /// Real answers' forget requests with their signatures, newest last.
    private(set) var signedForgets: [SyncWire.Cursor] = []
    /// The liar's own key: a signature it makes verifies with it, not with the server's.
    let key = SigningKeyPair.generate()

    /// Remembers what `request` of device `index` carried.
    mutating func hear(_ request: SyncRequest, device index: Int) {
        guard request.method == "POST", let upload = try? SyncWire.upload(from: request.body) else { return }
        for record in upload.records { seenHashes[index, default: [:]][record.seq] = record.hash }
    }

    /// Remembers the signed forget requests of a real answer.
    mutating func hear(_ response: SyncResponse) {
        guard response.status == 200, let cursor = try? SyncWire.cursor(from: response.body), cursor.forgetSignature != nil else { return }
        if signedForgets.count == Self.keptForgetRequests { signedForgets.removeFirst() }
        signedForgets.append(cursor)
    }

    /// The seqs of device `index` the path saw in `range`, with their hashes, in seq order.
    func seen(device index: Int, in range: ClosedRange<UInt64>) -> [(seq: UInt64, hash: Digest)] {
        (seenHashes[index] ?? [:]).filter { range.contains($0.key) }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
