// Fuzzes the body of `POST /v1/devices/kiosk-7/events` (docs/sync-protocol.md § Upload):
// `SyncWire.uploadWithKeys(from:)`, then the server's whole validation and append against a
// real replica that holds the seed story's first batch (``ServerHarness``).
//
// Properties: nothing traps; the answer is one of the documented ones for an upload (never 500,
// see ``ResponseCheck``); a 200 answers every record; a body the wire reader refuses is a 400
// `malformed`. After an upload that stored records the server is reset, so every input meets
// the same replica.
import FuzzEntry
import FuzzSupport
import OnboardingServer
import OnboardingStore

private let target = "FuzzUploadBody"
private let harness = ServerHarness.shared
private let path = "/v1/devices/\(FuzzFixtures.device)/events"

/// The codes docs/sync-protocol.md's status table gives an upload, by status (429 and 503 are
/// left out on purpose: see ``ResponseCheck``).
private let documented: [Int: Set<SyncErrorCode>] = [
    400: [.malformed, .foreignDevice, .futureEvent],
    409: [.gap, .fork, .historyRewritten, .chainBroken, .keysChanged],
    413: [.tooLarge],
    422: [.badSignature, .signatureRequired]
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzUploadBody(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let body = Array(UnsafeRawBufferPointer(start: start, count: count))
    let parsed = Result { () throws(SyncWireError) in try SyncWire.uploadWithKeys(from: body) }
    if case .success(let upload) = parsed {
        for (index, record) in upload.records.enumerated() where record.seq == 0 || (index > 0 && record.seq != upload.records[index - 1].seq &+ 1) {
            FuzzCheck.fail(target, "uploadWithKeys accepted non-consecutive seqs at records[\(index)]\n  body: \(FuzzCheck.hex(body))")
        }
    }

    let request = SyncRequest(method: "POST", path: path, headers: harness.headers(.device, json: true), body: body)
    let response = harness.handle(request)
    ResponseCheck.check(response, of: request, harness: harness, target: target)
    func fail(_ message: String) -> Never {
        FuzzCheck.fail(
            target, "\(message)\n  answer: \(response.status) \(String(decoding: response.body.prefix(2048), as: UTF8.self))\n  body: \(FuzzCheck.hex(body))")
    }

    if response.status == 200 {
        guard case .success(let upload) = parsed else { fail("200 for a body uploadWithKeys refuses") }
        let outcomes: [SyncWire.Outcome]
        do { outcomes = try SyncWire.outcomes(from: response.body) } catch { fail("a 200 whose results do not parse: \(error)") }
        guard outcomes.map(\.seq) == upload.records.map(\.seq) else { fail("a 200 that does not answer each record once, in order") }
        if outcomes.contains(where: { $0.kind == .appended }) { harness.reset() }
        return 0
    }
    guard let error = SyncWire.error(from: response.body), let code = error.code, documented[response.status]?.contains(code) == true else {
        fail("status \(response.status) with a code the upload's documentation does not give it")
    }
    if case .failure = parsed, response.status != 400 || code != .malformed {
        fail("a body uploadWithKeys refuses was answered \(response.status) \(error.wireCode), not 400 malformed")
    }
    return 0
}

/// See ``FuzzEntry``: SwiftPM's entry point for this executable, handed to libFuzzer's driver.
@_cdecl("FuzzUploadBody_main")
public func fuzzUploadBodyMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzEntry.run(argc, argv, fuzzUploadBody)
}
