// Fuzzes the server's router with arbitrary requests: `SyncServer.handle(_:)` on a real server
// (``ServerHarness``) with a method, path, query string, token and body taken from the input.
//
// Input layout (so a crash file reads as the request it is):
//   byte 0      the token (bits 0–2: none, kiosk-7's, kiosk-8's, auditor, admin, unknown;
//               bit 3: send Content-Type: application/json)
//   then text   METHOD \n PATH \n QUERY \n BODY   (missing parts are empty; no ? when QUERY is empty)
//
// Properties: nothing traps; never 500 (nor 503/429, see ``ResponseCheck``); every answer of
// status ≥ 400 is JSON with an `error.code`; no answer carries a server path or a held token.
// After a request that may have changed the server (any method but GET answered 2xx), the
// server is reset, so every input meets the same server.
import FuzzEntry
import FuzzSupport
import OnboardingStore

private let target = "FuzzRouter"
private let harness = ServerHarness.shared

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRouter(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let input = UnsafeRawBufferPointer(start: start, count: count)
    guard let selector = input.first else { return 0 }
    let tokens = ServerHarness.Token.allCases
    let token = tokens[Int(selector & 0x07) % tokens.count]
    let json = selector & 0x08 != 0

    var parts: [ArraySlice<UInt8>] = []
    var rest = Array(input.dropFirst())[...]
    while parts.count < 3, let newline = rest.firstIndex(of: 0x0A) {
        parts.append(rest[rest.startIndex..<newline])
        rest = rest[(newline + 1)...]
    }
    parts.append(rest)
    while parts.count < 4 { parts.append([]) }
    func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }
    let query = text(parts[2])
    let path = text(parts[1]) + (query.isEmpty ? "" : "?" + query)
    let request = SyncRequest(method: text(parts[0]), path: path, headers: harness.headers(token, json: json), body: Array(parts[3]))

    let response = harness.handle(request)
    ResponseCheck.check(response, of: request, harness: harness, target: target)
    if request.method != "GET" && (200..<300).contains(response.status) { harness.reset() }
    return 0
}

/// See ``FuzzEntry``: SwiftPM's entry point for this executable, handed to libFuzzer's driver.
@_cdecl("FuzzRouter_main")
public func fuzzRouterMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzEntry.run(argc, argv, fuzzRouter)
}
