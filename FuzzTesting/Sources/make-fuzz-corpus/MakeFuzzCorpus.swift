import Foundation
import FuzzSupport
import OnboardingStore

/// Writes the seed corpus of every target (`Corpus/<target>/`) and the libFuzzer dictionaries
/// (`Dictionaries/<target>.dict`) from the fixtures, the event vocabulary and the protocol's
/// paths. Deterministic: running it twice writes the same bytes.
///
/// ```sh
/// swift run --package-path FuzzTesting make-fuzz-corpus FuzzTesting
/// ```
@main
struct MakeFuzzCorpus {
    static func main() throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 2 else {
            FileHandle.standardError.write(Data("usage: make-fuzz-corpus FUZZTESTING_DIRECTORY\n".utf8))
            exit(64)
        }
        let root = URL(fileURLWithPath: arguments[1])
        var writer = CorpusWriter(root: root)
        try recordSeeds(&writer)
        try eventLineSeeds(&writer)
        try uploadSeeds(&writer)
        try routerSeeds(&writer)
        try policySeeds(&writer)
        try answerSeeds(&writer)
        try writer.finish()
        print("make-fuzz-corpus: wrote \(writer.fileCount) seed files and \(writer.dictionaryCount) dictionaries under \(root.path)")
    }

    // MARK: Targets

    static func recordSeeds(_ writer: inout CorpusWriter) throws {
        var previous = Digest.zero
        for (index, event) in FuzzFixtures.sampleEvents().enumerated() {
            // Seqs from 1, and the largest one, which no record can follow.
            let seq: UInt64 = index == 1 ? .max : UInt64(index + 1)
            let bytes = RecordCodec.encode(event, seq: seq, previousHash: previous, seal: FuzzFixtures.seal(for: event))
            try writer.seed("FuzzRecordCodec", "\(String(format: "%03d", index))-\(event.type.rawValue)\(userSuffix(event)).bin", bytes)
            previous = Digest(bytes: Array(bytes[1...Digest.byteCount]))
        }
        try writer.dictionary("FuzzRecordCodec", [
            [RecordCodec.formatVersion], [RecordCodec.legacyFormatVersion], [0x00, 0x00], [0xFF, 0xFF],
            [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], [0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
            [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], Array(FuzzFixtures.device.utf8),
        ] + FuzzFixtures.liveUsers.map { FuzzFixtures.ref(of: $0.name).bytes } + [FuzzFixtures.ref(of: FuzzFixtures.forgottenUser).bytes])
    }

    static func eventLineSeeds(_ writer: inout CorpusWriter) throws {
        for (index, event) in FuzzFixtures.sampleEvents().enumerated() {
            let line = EventJSON.encode(event, seq: index % 2 == 0 ? UInt64(index + 1) : nil)
            try writer.seed("FuzzEventLine", "\(String(format: "%03d", index))-\(event.type.rawValue)\(userSuffix(event)).json", Array(line.utf8))
        }
        // Forms import accepts that export never writes: any member order, whitespace, upper-case
        // ids, explicit nulls, a fraction of fewer digits, escapes.
        let variants = [
            "loose-order": #"{ "type" : "sign_in_failed", "reason":"invalid_password", "method":"password", "at":"2026-11-29T16:00:00Z", "device":"kiosk-7", "id":"0F8FAD5B-D9CB-469F-A165-70867728950E" }"#,
            "nulls": #"{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","device":"kiosk-7","seq":null,"at":"2026-11-29T16:00:00.1Z","user":null,"session":null,"type":"account_creation_failed","field":null,"reason":"username_in_use"}"#,
            "escapes": #"{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","device":"kiosk-7","at":"2026-11-29T16:00:00.12Z","user":"al\u0069ce","type":"user_added","display_name":"A\u00e9 \ud83d\ude00 \"q\"","passcode_policy":"numeric","passcode_min_length":6}"#,
            "extremes": #"{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","device":"kiosk-7","seq":18446744073709551615,"at":"9999-12-31T23:59:59.999Z","type":"sign_in_throttled","method":"password","retry_after":"0001-01-01T00:00:00.000Z"}"#,
        ]
        for (name, line) in variants.sorted(by: { $0.key < $1.key }) { try writer.seed("FuzzEventLine", "variant-\(name).json", Array(line.utf8)) }
        var tokens = ["id", "device", "seq", "at", "user", "session", "type", "null", "true", "false", "2026-11-29T16:00:00.000Z",
                      "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "18446744073709551615", "-1", "1e3", "\\u0000", "\\ud800", "~"]
        tokens += EventType.wireNames
        for type in EventType.allCases {
            for spec in type.fields {
                tokens.append(spec.name)
                if case .choice(let names) = spec.kind { tokens += names }
            }
        }
        try writer.dictionary("FuzzEventLine", tokens.map { Array("\"\($0)\"".utf8) })
    }

    static func uploadSeeds(_ writer: inout CorpusWriter) throws {
        let scratch = ServerHarness.newDirectory()
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        for upload in try SeedDevice.uploads(in: scratch) { try writer.seed("FuzzUploadBody", "\(upload.name).json", upload.body) }
        try writer.dictionary("FuzzUploadBody", ["device", "records", "event", "prev", "hash", "signed_head", "signature", "keys",
                                                 "pseudonym_key", "users", "sealed", "seq", FuzzFixtures.device,
                                                 String(repeating: "0", count: 64), "18446744073709551615"]
            .map { Array("\"\($0)\"".utf8) })
    }

    static func routerSeeds(_ writer: inout CorpusWriter) throws {
        // Token selectors (see FuzzRouter): 0 none, 1 kiosk-7, 2 kiosk-8, 3 auditor, 4 admin, 5 unknown; +8 JSON.
        let device = FuzzFixtures.device
        let scratch = ServerHarness.newDirectory()
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let upload = try SeedDevice.uploads(in: scratch)[0].body
        let requests: [(String, UInt8, String, String, String, [UInt8])] = [
            ("health", 0, "GET", SyncPaths.health, "", []),
            ("enrol", 4 | 8, "POST", SyncPaths.devices, "", SyncWire.enrolBody(device: "kiosk-9")),
            ("issue-token", 4 | 8, "POST", SyncPaths.tokens(device: device), "", []),
            ("revoke-tokens", 4, "DELETE", SyncPaths.tokens(device: "kiosk-9"), "", []),
            ("auditor-token", 4 | 8, "POST", SyncPaths.auditorTokens, "", []),
            ("cursor", 1, "GET", SyncPaths.cursor(device: device), "", []),
            ("cursor-other-device", 2, "GET", SyncPaths.cursor(device: device), "", []),
            ("upload", 1 | 8, "POST", SyncPaths.events(device: device), "", upload),
            ("user-history", 3, "GET", SyncPaths.history(user: "alice"), "since=2026-11-29T00:00:00Z&outcome=failed,succeeded&limit=2", []),
            ("user-history-cursor", 3, "GET", SyncPaths.history(user: "bob@example.org"), "factor=second_factor&method=totp,sms&cursor=x&device=kiosk-7", []),
            ("device-history", 4, "GET", SyncPaths.history(device: device), "until=2026-12-01T00:00:00Z&limit=10000", []),
            ("lockout", 3, "GET", SyncPaths.lockout(user: "alice"), "at=2026-11-29T16:00:05.000Z", []),
            ("forget", 4, "POST", SyncPaths.forget(user: "corp/alice"), "", []),
            ("audit", 3, "GET", "/v1/audit", "", []),
            ("wrong-method", 1, "PUT", SyncPaths.cursor(device: device), "", []),
            // The audit console's endpoints (docs/sync-protocol.md § The audit console).
            ("console-search", 3, "GET", "/v1/users", "search=jos%C3%A9 al&limit=5", []),
            ("console-devices", 3, "GET", "/v1/devices", "limit=2&after=\(device)", []),
            ("console-device-audit", 3, "GET", "/v1/devices/\(device)/audit", "", []),
            ("console-actions", 3, "GET", "/v1/actions", "limit=1&cursor=x", []),
            ("console-counts", 3, "GET", "/v1/users/alice/counts", "buckets=10&outcome=failed&since=2026-11-29T00:00:00Z", []),
            ("console-export", 3, "GET", "/v1/devices/\(device)/export", "format=csv&until=2026-12-01T00:00:00Z", []),
            ("console-newest", 3, "GET", SyncPaths.history(user: "alice"), "order=newest&limit=2&wait=0", []),
            ("console-clear", 4 | 8, "POST", "/v1/users/alice/lockout/clear", "", Array(#"{"factor":"password","reason":"ticket 7"}"#.utf8)),
            ("console-revoke", 4, "DELETE", "/v1/devices/\(device)/tokens/0123456789abcdef", "", []),
            ("console-file", 0, "GET", "/console/index.html", "", []),
            ("unknown-path", 0, "GET", "/v2/x/../../%00", "a=%zz&&=", []),
        ]
        for (name, selector, method, path, query, body) in requests {
            let text = "\(method)\n\(path)\n\(query)\n"
            try writer.seed("FuzzRouter", "\(name).req", [selector] + Array(text.utf8) + body)
        }
        try writer.dictionary("FuzzRouter", (["GET", "POST", "DELETE", "HEAD", "/v1/", "/v1/devices/", "/v1/users/", "/cursor", "/events",
                                              "/tokens", "/history", "/lockout", "/forget", "/v1/auditors", "/v1/audit", "/v1/health",
                                              device, ServerHarness.signedDevice, "%2F", "%00", "%C3%A9", "%", "?", "&", "=", "/", "\n",
                                              "/v1/users", "/v1/devices", "/v1/actions", "/audit", "/counts", "/export", "/lockout/clear",
                                              "/console/", "search=", "order=", "wait=", "buckets=", "format=", "after=", "newest", "csv",
                                              "jsonl", "ocsf", "\"reason\"", "\"factor\""]
                                             + HistoryQuery.parameterNames.map { $0 + "=" } + HistoryQuery.methodNames)
            .map { Array($0.utf8) })
    }

    /// Whole HTTP answers of each kind the client reads: cursors (with signed forget requests),
    /// upload answers, refusals, chunked bodies, 1xx, redirects.
    static func answerSeeds(_ writer: inout CorpusWriter) throws {
        func http(_ status: Int, _ headers: [String], _ body: [UInt8]) -> [UInt8] {
            Array(("HTTP/1.1 \(status) X\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n").utf8) + body
        }
        let key = SeedDevice.signingKey // fixed: the committed seeds are the same bytes every time
        let pseudonym = "~" + String(repeating: "ab", count: 16)
        let cursor = SyncWire.Cursor(device: FuzzFixtures.device, acknowledgedSeq: 3, headHash: Digest(bytes: [UInt8](repeating: 9, count: 32)),
                                     forgetUsers: [pseudonym], forgetSignature: key.sign(SyncWire.forgetMessage(device: FuzzFixtures.device, pseudonyms: [pseudonym])))
        let cursorBody = SyncWire.cursorBody(cursor)
        let upload = SyncWire.uploadResponseBody(cursor, outcomes: [.init(seq: 2, kind: .duplicate), .init(seq: 3, kind: .appended)])
        let refusal = SyncWire.errorBody(SyncWire.ErrorBody(code: .gap, message: "send from seq 4", expectedSeq: 4))
        let seeds: [(String, [UInt8])] = [
            ("cursor", http(200, ["content-type: application/json", "content-length: \(cursorBody.count)"], cursorBody)),
            ("upload", http(200, ["content-length: \(upload.count)"], upload)),
            ("gap", http(409, ["content-length: \(refusal.count)"], refusal)),
            ("chunked", http(200, ["transfer-encoding: chunked"], Array("10;x=y\r\n".utf8) + cursorBody.prefix(16) + Array("\r\n0\r\n\r\n".utf8))),
            ("continue", http(100, [], []) + http(503, ["retry-after: 2", "content-length: 0"], [])),
            ("redirect", http(308, ["location: http://198.51.100.7/v1/", "content-length: 0"], [])),
            ("unframed", http(200, [], cursorBody)),
        ]
        for (name, bytes) in seeds { try writer.seed("FuzzServerAnswer", "\(name).http", bytes) }
        try writer.dictionary("FuzzServerAnswer", (["HTTP/1.1 ", "HTTP/1.0 ", "\r\n", "\r\n\r\n", "content-length: ", "transfer-encoding: chunked",
                                                    "retry-after: ", "location: ", ";", "0\r\n\r\n", "ffffffff", "-1", "18446744073709551615",
                                                    "\"acknowledged_seq\":", "\"head_hash\":", "\"forget_users\":", "\"forget_signature\":",
                                                    "\"results\":", "\"outcome\":", "\"error\":", "\"expected_seq\":", pseudonym])
            .map { Array($0.utf8) })
    }

    static func policySeeds(_ writer: inout CorpusWriter) throws {
        for policy in LockoutPolicy.presets { try writer.seed("FuzzLockoutPolicy", "\(policy.name).json", Array(policy.json.utf8)) }
        let everything = LockoutPolicy(
            name: "everything",
            password: .init(methods: [.password, .passcode], tiers: (1...8).map { LockoutPolicy.Tier(limit: $0, windowSeconds: $0 * 60) },
                            backoff: .init(threshold: 2, initialWaitSeconds: 1, growth: .doubling, maximumWaitSeconds: 366 * 86_400,
                                           resetAfterSeconds: 3600, quickLoginMilliseconds: 500, quickLoginWaitSeconds: 30),
                            consecutiveLimit: 1_000_000, permanentAfterLockouts: 0),
            secondFactor: .init(tiers: [.init(limit: 1, windowSeconds: 366 * 86_400)], consecutiveLimit: 1),
            clearing: .init(signInSucceeded: .none, passwordChanged: .counters, lockoutCleared: .all, passcodeResetCompleted: .none))
        try writer.seed("FuzzLockoutPolicy", "everything.json", Array(everything.json.utf8))
        try writer.dictionary("FuzzLockoutPolicy", ["name", "password", "second_factor", "clearing", "methods", "tiers", "limit",
                                                    "window_seconds", "backoff", "threshold", "initial_wait_seconds", "growth",
                                                    "doubling", "linear", "maximum_wait_seconds", "reset_after_seconds",
                                                    "quick_login_milliseconds", "quick_login_wait_seconds", "consecutive_limit",
                                                    "permanent_after_lockouts", "sign_in_succeeded", "password_changed", "lockout_cleared",
                                                    "passcode_reset_completed", "none", "counters", "all", "31622400", "1000000", "0"]
            .map { Array("\"\($0)\"".utf8) } + SignInMethod.wireNames.map { Array("\"\($0)\"".utf8) })
    }

    static func userSuffix(_ event: Event) -> String {
        guard let user = event.user else { return "" }
        if UserRef.isLiteral(user) { return "-pseudonym" }
        return "-" + String(user.prefix { $0.isLetter })
    }
}

/// Replaces each target's seed directory and dictionary with what this run writes.
struct CorpusWriter {
    let root: URL
    private var written: [String: [(String, [UInt8])]] = [:]
    private var dictionaries: [String: [[UInt8]]] = [:]
    var fileCount: Int { written.values.reduce(0) { $0 + $1.count } }
    var dictionaryCount: Int { dictionaries.count }

    init(root: URL) { self.root = root }

    mutating func seed(_ target: String, _ name: String, _ bytes: [UInt8]) throws {
        precondition(!(written[target] ?? []).contains { $0.0 == name }, "seed \(name) of \(target) written twice")
        written[target, default: []].append((name, bytes))
    }

    mutating func dictionary(_ target: String, _ entries: [[UInt8]]) throws {
        dictionaries[target] = entries
    }

    /// A libFuzzer dictionary entry: quoted, printable ASCII as is, `"` and `\\` escaped,
    /// every other byte as \xNN.
    static func dictionaryLine(_ entry: [UInt8]) -> String {
        var line = "\""
        for byte in entry {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): line += "\\" + String(Unicode.Scalar(byte))
            case 0x20..<0x7F: line.unicodeScalars.append(Unicode.Scalar(byte))
            default: line += String(format: "\\x%02X", byte)
            }
        }
        return line + "\""
    }

    func finish() throws {
        let files = FileManager.default
        for (target, seeds) in written {
            let directory = root.appendingPathComponent("Corpus").appendingPathComponent(target)
            try? files.removeItem(at: directory)
            try files.createDirectory(at: directory, withIntermediateDirectories: true)
            for (name, bytes) in seeds { try Data(bytes).write(to: directory.appendingPathComponent(name)) }
        }
        let dictionaryDirectory = root.appendingPathComponent("Dictionaries")
        try files.createDirectory(at: dictionaryDirectory, withIntermediateDirectories: true)
        for (target, entries) in dictionaries {
            let lines = entries.map(CorpusWriter.dictionaryLine)
            let text = "# Written by make-fuzz-corpus; do not edit.\n" + lines.joined(separator: "\n") + "\n"
            try Data(text.utf8).write(to: dictionaryDirectory.appendingPathComponent("\(target).dict"))
        }
    }
}
