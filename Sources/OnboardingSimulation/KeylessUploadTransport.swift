import OnboardingModel
import OnboardingStore

/// An older or third-party client: it sends `keys` only with an upload whose records name a
/// user, so a batch of records without users (a first sync before anyone signed in) goes
/// without them, which the server accepts: no record of it needs a key. The reference client
/// always sends keys, so without this the simulator would never send such a batch.
struct KeylessUploadTransport: SyncTransport {
    let inner: any SyncTransport

    func send(_ request: SyncRequest) async throws -> SyncResponse {
        try await inner.send(Self.strippingKeys(request))
    }

    /// `request` without `keys` when it is an upload whose records name no user.
    static func strippingKeys(_ request: SyncRequest) -> SyncRequest {
        guard request.method == "POST", request.path.hasSuffix("/events"),
            let upload = try? SyncWire.uploadWithKeys(from: request.body), upload.keys != nil,
            upload.records.allSatisfy({ $0.event.user == nil })
        else { return request }
        var stripped = request
        stripped.body = SyncWire.uploadBody(device: upload.device, records: upload.records, signedHead: upload.signedHead, keys: nil)
        return stripped
    }
}
