import Foundation
import HTTPServer
import OnboardingModel
@testable import OnboardingServer
import OnboardingStore
import Testing
import TestSupport

/// `/console`: the console's files as the repository holds them, nothing else, and the security
/// headers on every answer, the console's and the API's, through the router and over HTTP.
@Suite struct ConsoleStaticTests {
    typealias Fixture = SyncServerTests.Fixture

    static let sourceDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/OnboardingServer/Console").path

    /// Every regular, non-hidden file of the console in the repository, by its path under it.
    static func sourceFiles() throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        let walker = try #require(FileManager.default.enumerator(atPath: sourceDirectory))
        while let relative = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let path = (sourceDirectory as NSString).appendingPathComponent(relative)
            guard !relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }),
                FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue
            else { continue }
            files[relative] = Array(try #require(FileManager.default.contents(atPath: path)))
        }
        return files
    }

    static func expectSecurityHeaders(_ response: SyncResponse, _ what: String) {
        #expect(response.headers["content-security-policy"] == SyncServer.contentSecurityPolicy, "\(what)")
        #expect(response.headers["x-content-type-options"] == "nosniff", "\(what)")
        #expect(response.headers["referrer-policy"] == "no-referrer", "\(what)")
    }

    @Test func thePolicyIsTheDocumentedOneWithoutUnsafeInline() {
        #expect(
            SyncServer.contentSecurityPolicy
                == "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
        )
        #expect(!SyncServer.contentSecurityPolicy.contains("unsafe"))
    }

    @Test func everyFileOfTheRepositorysConsoleIsServedAsItIsWithItsType() throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        let files = try Self.sourceFiles()
        #expect(files["index.html"] != nil, "the console has a page")
        for (name, bytes) in files {
            let response = fixture.call("GET", "/console/" + name, token: nil)
            #expect(response.status == 200, "\(name)")
            #expect(response.body == bytes, "\(name) is served as the repository holds it")
            #expect(response.headers["content-type"] == ConsoleFiles.contentType(of: name))
            #expect(response.headers["cache-control"] == "no-cache")
            Self.expectSecurityHeaders(response, name)
        }
        let page = fixture.call("GET", "/console/", token: nil)
        #expect(page.status == 200)
        #expect(page.body == files["index.html"])
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        let bare = fixture.call("GET", "/console", token: nil)
        #expect(bare.status == 301)
        #expect(bare.headers["location"] == "/console/")
        Self.expectSecurityHeaders(bare, "the redirect")
    }

    /// What the policy forbids is not in the page: the console works under it only without them.
    @Test func noPageOfTheConsoleHasInlineScriptStyleOrHandlers() throws {
        for (name, bytes) in try Self.sourceFiles() where name.hasSuffix(".html") {
            let html = String(decoding: bytes, as: UTF8.self).lowercased()
            let scripts = html.components(separatedBy: "<script").dropFirst()
            #expect(scripts.allSatisfy { $0.prefix { $0 != ">" }.contains("src=") }, "\(name): every script is a file (src=)")
            #expect(!html.contains("<style"), "\(name): no <style> element")
            #expect(html.range(of: #"\sstyle\s*="#, options: .regularExpression) == nil, "\(name): no style attribute")
            #expect(html.range(of: #"\son[a-z]+\s*="#, options: .regularExpression) == nil, "\(name): no inline event handler")
            #expect(!html.contains("javascript:"), "\(name): no javascript: URL")
        }
    }

    @Test(arguments: [
        "/console/nothing.js", "/console/../Package.swift", "/console/%2e%2e/Package.swift", "/console/..%2FPackage.swift",
        "/console/%2E%2E%2F%2E%2E%2FPackage.swift", "/console//etc/passwd", "/console/%2Fetc%2Fpasswd", "/console/.",
        "/console/./index.html", "/console/index.html/", "/console/index.html%00", "/console/%00", "/console/%ff", "/console/%",
        "/console/\u{1}", "/console/" + String(repeating: "a/", count: 200), "/console/INDEX.HTML", "/console/index.html%20",
        "/consoles", "/console.html"
    ])
    func anythingButAFileOfTheConsoleIs404(path: String) throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        let response = fixture.call("GET", path, token: nil)
        #expect(response.status == 404, "\(path.prefix(80))")
        #expect(SyncWire.error(from: response.body)?.code == .notFound)
        #expect(!String(decoding: response.body, as: UTF8.self).contains("/work"), "no path in the answer")
        Self.expectSecurityHeaders(response, path)
    }

    @Test(arguments: ["POST", "PUT", "DELETE", "HEAD", "PATCH"])
    func theConsoleTakesOnlyGET(method: String) throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        for path in ["/console", "/console/", "/console/index.html"] {
            let response = fixture.call(method, path, token: nil)
            #expect(response.status == 405, "\(method) \(path)")
            #expect(response.headers["allow"] == "GET")
        }
    }

    @Test(arguments: TestDatabase.storages) func everyAPIAnswerCarriesTheHeadersAndNoStore(storage: String) async throws {
        let fixture = try Fixture(storage: storage)
        defer { fixture.close() }
        let (store, token) = try await fixture.device("kiosk-7", events: 2)
        defer { store.close() }
        let answers: [(String, SyncResponse)] = [
            ("health", fixture.call("GET", SyncPaths.health, token: nil)),
            ("upload", try fixture.upload(store, 1...2, token: token)),
            ("history", fixture.call("GET", SyncPaths.history(user: "alice"), token: fixture.admin)),
            ("401", fixture.call("GET", SyncPaths.history(user: "alice"), token: nil)),
            ("403", fixture.call("GET", SyncPaths.history(user: "alice"), token: token)),
            ("404", fixture.call("GET", "/v1/nothing", token: nil)),
            ("405", fixture.call("PUT", SyncPaths.health, token: nil)),
            ("400", fixture.call("GET", SyncPaths.history(user: "alice") + "?limit=0", token: fixture.admin))
        ]
        for (what, response) in answers {
            Self.expectSecurityHeaders(response, what)
            #expect(response.headers["cache-control"] == "no-store", "\(what)")
            #expect(response.headers["set-cookie"] == nil, "\(what)")
        }
    }

    /// Over HTTP the same, and also on what the HTTP layer answers itself (here a 413).
    @Test func overHTTPTheHeadersAreOnTheConsoleTheAPIAndTheHTTPLayersOwnAnswers() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try SyncServer(dataDirectory: directory.appending("data"))
        var limits = SyncHTTPHandler.limits
        limits.maximumRequestBodyBytes = 1024
        limits.maximumBufferedBodyBytes = 1024
        let http = HTTPServer(port: 0, limits: limits, handler: SyncHTTPHandler(server: server), responseHeaders: SyncHTTPHandler.responseHeaders)
        try http.start()
        defer {
            server.beginShutdown()
            http.stop()
            server.close()
        }
        let transport = try HTTPTransport(baseURL: URL(string: "http://127.0.0.1:\(http.port)")!, timeout: .seconds(20))
        let page = try await transport.send(SyncRequest(method: "GET", path: "/console/"))
        #expect(page.status == 200)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        Self.expectSecurityHeaders(page, "page")
        let api = try await transport.send(SyncRequest(method: "GET", path: SyncPaths.health))
        Self.expectSecurityHeaders(api, "health")
        #expect(api.headers["cache-control"] == "no-store")
        let tooLarge = try await transport.send(
            SyncRequest(
                method: "POST", path: SyncPaths.devices, headers: ["content-type": "application/json"],
                body: [UInt8](repeating: 0x20, count: 4096)))
        #expect(tooLarge.status == 413)
        Self.expectSecurityHeaders(tooLarge, "the HTTP layer's 413")
        #expect(tooLarge.headers["cache-control"] == "no-store")
    }
}
