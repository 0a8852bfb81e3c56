import Foundation
import HTTPServer
import OnboardingStore
import Testing
import TestSupport
@testable import OnboardingServer

/// The query string is decoded once: by the HTTP server for a request off the network (its
/// arguments handed down as they are), by ``SyncRequest/queryArguments(of:)`` for one made in
/// process; the router reads ``SyncRequest/query`` and never decodes again.
@Suite("Query arguments are decoded once")
struct QueryDecodingTests {
    @Test(
        "hostile query strings decode as the HTTP server decodes them",
        arguments: [
            ("/v1/users?search=%zz", ["search": "%zz"]),
            ("/v1/users?search=a%00b", ["search": "a\u{0}b"]),
            ("/v1/users?search=first&search=second", ["search": "first"]),
            ("/v1/users?search=a+b%2Bc", ["search": "a b+c"]),
            ("/v1/users?search=%2561", ["search": "%61"]),
            ("/v1/users?flag&=x&&limit=", ["flag": "", "": "x", "limit": ""]),
            ("/v1/users?%zz=%C3%A9", ["%zz": "é"]),
            ("/v1/users?search=%C3", ["search": "%C3"]),
            ("/v1/users", [:])
        ])
    func hostile(path: String, expected: [String: String]) {
        #expect(SyncRequest.queryArguments(of: path) == expected)
        #expect(SyncRequest(method: "GET", path: path).query == expected)
    }

    @Test("a very long query decodes in one pass")
    func long() {
        let value = String(repeating: "%41", count: 30_000)
        #expect(SyncRequest.queryArguments(of: "/v1/users?search=" + value) == ["search": String(repeating: "A", count: 30_000)])
    }

    @Test("the HTTP handler hands the server's decoded arguments down as they are", arguments: TestDatabase.storages)
    func handedDown(storage: String) throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        let handler = SyncHTTPHandler(server: fixture.server)
        func refusal(_ query: [String: String]) -> String? {
            let response = handler.handle(
                HTTPRequest(
                    method: "GET", path: "/v1/users", rawPath: "/v1/users", query: query,
                    headers: HTTPHeaders([("Authorization", "Bearer \(fixture.admin)")])))
            return SyncWire.error(from: response.body)?.message
        }
        // "%31" is what arrived for `%2531`: decoding it again would make it "1", a valid limit.
        #expect(refusal(["search": "jo", "limit": "%31"]) == "query parameter limit: limit \"%31\" must be a whole number from 1 to 100")
        #expect(refusal(["search": "jo\u{0}"]) == "query parameter search must not contain control characters")
    }
}
