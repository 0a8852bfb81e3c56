import OnboardingStore

/// What every answer of the server must satisfy, whatever the request (docs/sync-protocol.md
/// § Errors): a status of 2xx or 4xx (or the console's one 301, `/console` to `/console/`), never 500; no 503 or 429 (a single-threaded harness neither shuts down nor uploads
/// concurrently, so either means something leaked or ran out); a refusal is JSON with an
/// `error.code`; no answer carries a file path of the server or a token the server already holds.
///
/// ```swift
/// ResponseCheck.check(response, of: request, harness: .shared, target: "FuzzRouter")
/// ```
public enum ResponseCheck {
    public static func check(_ response: SyncResponse, of request: SyncRequest, harness: ServerHarness, target: String) {
        func fail(_ what: String) -> Never {
            let log = harness.failureLog.text
            FuzzCheck.fail(
                target,
                """
                \(what)
                  request: \(request.method) \(request.path) (\(request.body.count) body bytes: \(FuzzCheck.hex(request.body)))
                  answer: \(response.status) \(String(decoding: response.body.prefix(2048), as: UTF8.self))
                  operator log: \(log.isEmpty ? "(empty)" : log)
                """)
        }
        switch response.status {
        case 500: fail("the server answered 500")
        case 503: fail("the server answered 503 without shutting down or running short of anything a fuzz input can use up")
        case 429: fail("the server answered 429 busy although no other upload is in flight (an upload left its device marked busy)")
        case 200..<300, 400..<500: break
        // The console's one redirect: `/console` (any query) to `/console/`, a GET only.
        case 301
        where request.method == "GET" && request.path.split(separator: "?", maxSplits: 1).first == "/console"
            && response.headers["location"] == "/console/":
            break
        default: fail("status \(response.status) is not one the protocol uses")
        }
        if response.status >= 400 {
            guard response.headers["content-type"] == SyncWire.contentType else { fail("a refusal without Content-Type: application/json") }
            guard let error = SyncWire.error(from: response.body), !error.wireCode.isEmpty else {
                fail("a refusal whose body is not {\"error\": {\"code\", \"message\"}}")
            }
        }
        let text = String(decoding: response.body, as: UTF8.self)
        // What the request itself carried may come back in a refusal's message (a bad query
        // value, quoted): that tells the client nothing it did not send. libFuzzer learns the
        // strings these checks compare with and puts them into requests, so it does.
        let sent =
            [request.path, SyncPaths.percentDecoded(request.path) ?? "", String(decoding: request.body, as: UTF8.self)]
            + request.headers.values
        func echoes(_ secret: String) -> Bool { sent.contains { $0.contains(secret) } }
        if text.contains(harness.directory) && !echoes(harness.directory) {
            fail("the answer names a file path of the server")
        }
        for (kind, token) in harness.tokens where kind != .unknown && text.contains(token) && !echoes(token) {
            fail("the answer carries the \(kind) token")
        }
    }
}
