import Foundation
import HTTPServer
import OnboardingModel
import OnboardingServer
import Testing
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The access-log form of a request: no user id in clear, no query, nothing a client can use to
/// forge or hide a line.
@Suite struct AccessLogTests {
    static let key = SecretKey(bytes: Array(0..<32))

    @Test func userSegmentsArePseudonymisedTheWayTheRouterFindsThem() {
        let log = SyncServer.AccessLog(key: Self.key)
        let alice = log.pseudonym(forUser: "alice")
        #expect(alice.hasPrefix("u:") && alice.count == 18)
        #expect(alice.dropFirst(2).allSatisfy { $0.isHexDigit && !$0.isUppercase })
        #expect(alice != log.pseudonym(forUser: "bob"))
        #expect(alice != SyncServer.AccessLog(key: SecretKey(bytes: Array(repeating: 7, count: 32))).pseudonym(forUser: "alice"))
        let cases: [(String, String)] = [
            ("/v1/users/alice/history", "/v1/users/\(alice)/history"),
            ("/v1/users/alice/history?since=2026&token=obt_x", "/v1/users/\(alice)/history"),
            ("/v1/users/%61lice/lockout", "/v1/users/\(alice)/lockout"),
            ("//v1///users//alice/forget", "//v1///users//\(alice)/forget"),
            ("/v1/users/corp%2Fbob/history", "/v1/users/\(log.pseudonym(forUser: "corp/bob"))/history"),
            // Not valid percent-encoded UTF-8: the router answers 400, the log still hides it.
            ("/v1/users/al%ffice/history", "/v1/users/\(log.pseudonym(forUser: "al%ffice"))/history"),
            ("/v1/users/alice", "/v1/users/\(alice)"),
            ("/v1/users", "/v1/users"),
            ("/v1/devices/kiosk-7/cursor", "/v1/devices/kiosk-7/cursor"),
            ("/v2/users/alice/history", "/v2/users/alice/history"),
            ("", "-")
        ]
        for (raw, expected) in cases {
            #expect(log.loggablePath(raw) == expected, "\(raw)")
        }
    }

    @Test func everyFieldIsEscapedSoALineStaysOneLineOfSixFields() {
        let log = SyncServer.AccessLog(key: Self.key)
        #expect(
            log.loggablePath("/v1/devices/a\nb c\\d\u{0}\u{7f}é\u{202e}/cursor")
                == "/v1/devices/a\\x0ab\\x20c\\x5cd\\x00\\x7f\\xc3\\xa9\\xe2\\x80\\xae/cursor")
        #expect(HTTPAccessLogEntry.escaped("-") == "\\x2d")
        let entry = HTTPAccessLogEntry(
            method: "G\tET\r\nX", path: "ignored", status: 200, requestBodyBytes: 0, responseBodyBytes: 15,
            duration: .milliseconds(1234), completed: true, rawPath: "/v1/health?x=1\n2")
        let line = log.line(for: entry, at: "2026-12-01T10:00:00.000Z")
        #expect(line == "2026-12-01T10:00:00.000Z G\\x09ET\\x0d\\x0aX /v1/health 200 15B 1234ms")
        // An entry made without a raw path logs its (decoded) path, escaped the same way.
        let decoded = HTTPAccessLogEntry(
            method: "GET", path: "/a\nb", status: 404, requestBodyBytes: 0, responseBodyBytes: 0,
            duration: .zero, completed: true)
        #expect(log.line(for: decoded, at: "t").split(separator: " ").count == 6)
        #expect(!log.line(for: decoded, at: "t").contains("\n"))
    }

    @Test func hugeFieldsAreCutNeverInsideAnEscape() {
        let log = SyncServer.AccessLog(key: Self.key)
        for padding in 0..<4 {
            let raw = "/v1/devices/" + String(repeating: "a", count: padding) + String(repeating: "\n", count: 400)
            let path = log.loggablePath(raw)
            let kept = path.prefix { $0 != "." }
            #expect(kept.utf8.count <= SyncServer.AccessLog.maximumPathBytes)
            #expect(kept.hasSuffix("\\x0a"), "\(padding): \(kept.suffix(8))")
            #expect(path.hasSuffix("...(\(raw.utf8.count)B)"))
        }
        let entry = HTTPAccessLogEntry(
            method: String(repeating: "M", count: 5000), path: "/", status: 400, requestBodyBytes: 0,
            responseBodyBytes: 0, duration: .zero, completed: true)
        #expect(log.line(for: entry, at: "t").utf8.count < 100)
    }

    @Test func theKeyIsMadeOnceWithMode0600AndReused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = try SyncServer.AccessLog(dataDirectory: directory.path)
        let path = directory.appending(SyncServer.AccessLog.keyFileName)
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(info.st_size == 32)
        let second = try SyncServer.AccessLog(dataDirectory: directory.path)
        #expect(first.pseudonym(forUser: "alice") == second.pseudonym(forUser: "alice"))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path) == [SyncServer.AccessLog.keyFileName],
            "no temporary file left behind")
        // The key is what the pseudonyms are made with.
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(SyncServer.AccessLog(key: SecretKey(bytes: bytes)).pseudonym(forUser: "alice") == first.pseudonym(forUser: "alice"))
    }

    @Test func aDamagedKeyIsAClearErrorNotANewKey() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending(SyncServer.AccessLog.keyFileName)
        for size in [0, 31, 33, 4096] {
            try Data(repeating: 1, count: size).write(to: URL(fileURLWithPath: path))
            let error = #expect(throws: SyncServer.AccessLog.KeyError.self) { try SyncServer.AccessLog(dataDirectory: directory.path) }
            #expect(error?.description.contains("is \(min(size, 33)) bytes, not 32; delete it") == true, "\(error?.description ?? "")")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count == size, "the damaged key was overwritten")
        }
        // A directory we cannot write into: the error names the file and what to check.
        let missing = directory.appending("no/such/dir")
        let error = #expect(throws: SyncServer.AccessLog.KeyError.self) { try SyncServer.AccessLog(dataDirectory: missing) }
        #expect(error?.description.contains("cannot create the access-log key \(missing)/log.key") == true)
    }
}
