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
        try logLineSeeds(&writer)
        try identityLogSeeds(&writer)
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
        try writer.dictionary(
            "FuzzRecordCodec",
            [
                [RecordCodec.formatVersion], [RecordCodec.legacyFormatVersion], [0x00, 0x00], [0xFF, 0xFF],
                [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], [0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
                [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], Array(FuzzFixtures.device.utf8)
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
            "loose-order":
                #"{ "type" : "sign_in_failed", "reason":"invalid_password", "method":"password", "at":"2026-11-29T16:00:00Z", "device":"kiosk-7", "id":"0F8FAD5B-D9CB-469F-A165-70867728950E" }"#,
            "nulls":
                #"{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","device":"kiosk-7","seq":null,"at":"2026-11-29T16:00:00.1Z","user":null,"session":null,"type":"account_creation_failed","field":null,"reason":"username_in_use"}"#,
            "escapes":
                #"{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","device":"kiosk-7","at":"2026-11-29T16:00:00.12Z","user":"al\u0069ce","type":"user_added","display_name":"A\u00e9 \ud83d\ude00 \"q\"","passcode_policy":"numeric","passcode_min_length":6}"#,
            "extremes":
                #"{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","device":"kiosk-7","seq":18446744073709551615,"at":"9999-12-31T23:59:59.999Z","type":"sign_in_throttled","method":"password","retry_after":"0001-01-01T00:00:00.000Z"}"#,
            // A list of choices as a hostile writer sends it: a repeat, a nested array, null, a number.
            "hostile-list":
                #"{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","device":"kiosk-7","at":"2026-11-29T16:00:00Z","type":"sign_in_options_shown","options":[ "google",["apple"],"google",null,1 ],"platform":"ios"}"#
        ]
        for (name, line) in variants.sorted(by: { $0.key < $1.key }) { try writer.seed("FuzzEventLine", "variant-\(name).json", Array(line.utf8)) }
        var tokens = [
            "id", "device", "seq", "at", "user", "session", "type", "null", "true", "false", "2026-11-29T16:00:00.000Z",
            "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "18446744073709551615", "-1", "1e3", "\\u0000", "\\ud800", "~"
        ]
        tokens += EventType.wireNames
        for type in EventType.allCases {
            for spec in type.fields {
                tokens.append(spec.name)
                switch spec.kind {
                case .choice(let names), .choices(let names, _): tokens += names
                default: break
                }
            }
        }
        try writer.dictionary("FuzzEventLine", tokens.map { Array("\"\($0)\"".utf8) })
    }

    static func uploadSeeds(_ writer: inout CorpusWriter) throws {
        let scratch = ServerHarness.newDirectory()
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        for upload in try SeedDevice.uploads(in: scratch) { try writer.seed("FuzzUploadBody", "\(upload.name).json", upload.body) }
        try writer.dictionary(
            "FuzzUploadBody",
            [
                "device", "records", "event", "prev", "hash", "signed_head", "signature", "keys",
                "pseudonym_key", "users", "sealed", "seq", FuzzFixtures.device,
                String(repeating: "0", count: 64), "18446744073709551615"
            ]
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
            ("unknown-path", 0, "GET", "/v2/x/../../%00", "a=%zz&&=", [])
        ]
        for (name, selector, method, path, query, body) in requests {
            let text = "\(method)\n\(path)\n\(query)\n"
            try writer.seed("FuzzRouter", "\(name).req", [selector] + Array(text.utf8) + body)
        }
        try writer.dictionary(
            "FuzzRouter",
            ([
                "GET", "POST", "DELETE", "HEAD", "/v1/", "/v1/devices/", "/v1/users/", "/cursor", "/events",
                "/tokens", "/history", "/lockout", "/forget", "/v1/auditors", "/v1/audit", "/v1/health",
                device, ServerHarness.signedDevice, "%2F", "%00", "%C3%A9", "%", "?", "&", "=", "/", "\n",
                "/v1/users", "/v1/devices", "/v1/actions", "/audit", "/counts", "/export", "/lockout/clear",
                "/console/", "search=", "order=", "wait=", "buckets=", "format=", "after=", "newest", "csv",
                "jsonl", "ocsf", "\"reason\"", "\"factor\""
            ]
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
        let cursor = SyncWire.Cursor(
            device: FuzzFixtures.device, acknowledgedSeq: 3, headHash: Digest(bytes: [UInt8](repeating: 9, count: 32)),
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
            ("unframed", http(200, [], cursorBody))
        ]
        for (name, bytes) in seeds { try writer.seed("FuzzServerAnswer", "\(name).http", bytes) }
        try writer.dictionary(
            "FuzzServerAnswer",
            ([
                "HTTP/1.1 ", "HTTP/1.0 ", "\r\n", "\r\n\r\n", "content-length: ", "transfer-encoding: chunked",
                "retry-after: ", "location: ", ";", "0\r\n\r\n", "ffffffff", "-1", "18446744073709551615",
                "\"acknowledged_seq\":", "\"head_hash\":", "\"forget_users\":", "\"forget_signature\":",
                "\"results\":", "\"outcome\":", "\"error\":", "\"expected_seq\":", pseudonym
            ])
            .map { Array($0.utf8) })
    }

    /// Foreign logs for `onboard import --from sshd|keycloak`: the first byte picks the mode and
    /// its settings (see FuzzLogLine), the rest is an sshd log, one Keycloak event, or an array.
    static func logLineSeeds(_ writer: inout CorpusWriter) throws {
        // sshd: bits 2-3 the start year (1970, 2026, 9999, 1), bits 4-5 the zone (UTC,
        // Europe/Berlin, Pacific/Chatham, Australia/Lord_Howe), bit 6 a default device.
        let sshd: [(String, UInt8, [String])] = [
            (
                "guess-and-cut", 0x14,
                [
                    "Dec  1 15:30:28 bastion-1 sshd[811]: Invalid user admin from 203.0.113.9 port 50120",
                    "Dec  1 15:30:28 bastion-1 sshd[811]: pam_unix(sshd:auth): check pass; user unknown",
                    "Dec  1 15:30:28 bastion-1 sshd[811]: pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=203.0.113.9",
                    "Dec  1 15:30:30 bastion-1 sshd[811]: Failed password for invalid user admin from 203.0.113.9 port 50120 ssh2",
                    "Dec  1 15:30:31 bastion-1 sshd[812]: Failed password for root from 203.0.113.9 port 50122 ssh2",
                    "Dec  1 15:30:33 bastion-1 sshd[812]: error: maximum authentication attempts exceeded for root from 203.0.113.9 port 50122 ssh2 [preauth]",
                    "Dec  1 15:30:33 bastion-1 sshd[812]: Disconnecting authenticating user root 203.0.113.9 port 50122: Too many authentication failures [preauth]",
                    "Dec  1 15:30:34 bastion-1 sshd[813]: Failed none for invalid user oracle from 203.0.113.9 port 50124 ssh2"
                ]
            ),
            (
                "session", 0x04,
                [
                    "Dec  1 09:02:11 bastion-1 sshd-session[2210]: Accepted publickey for maria from 2001:DB8::17 port 41822 ssh2: ED25519 SHA256:c2VlZCBrZXkgZm9yIEZ1enpMb2dMaW5l",
                    "Dec  1 09:02:11 bastion-1 sshd-session[2210]: pam_unix(sshd:session): session opened for user maria(uid=1000) by maria(uid=0)",
                    "Dec  1 12:10:40 bastion-1 sshd-session[2388]: Accepted keyboard-interactive/pam for ops from ::ffff:192.0.2.77 port 50500 ssh2",
                    "Dec  1 17:45:02 bastion-1 sshd-session[2210]: Disconnected from user maria 2001:db8::17 port 41822",
                    "Dec  1 17:45:02 bastion-1 sshd-session[2210]: pam_unix(sshd:session): session closed for user maria"
                ]
            ),
            (
                "year-rollover", 0x24,
                [
                    "Dec 31 23:59:58 gw sshd[77]: Failed password for backup from 198.51.100.4 port 60001 ssh2",
                    "Jan  1 00:00:03 gw sshd[77]: Failed password for backup from 198.51.100.4 port 60002 ssh2",
                    "Feb  1 00:00:00 gw sshd[78]: Connection closed by 198.51.100.4 port 60003 [preauth]",
                    "Jan 31 23:59:59 gw sshd[79]: Accepted password for backup from 198.51.100.4 port 60004 ssh2",
                    "Nov 30 08:00:00 gw CRON[80]: pam_unix(cron:session): session opened for user root(uid=0) by (uid=0)",
                    "Feb 29 12:00:00 gw sshd[81]: Failed password for backup from 198.51.100.4 port 60005 ssh2"
                ]
            ),
            (
                "dst-berlin", 0x14,
                [
                    "Mar 29 01:59:59 fw-2 sshd[5]: Failed password for pi from 192.0.2.200 port 2222 ssh2",
                    "Mar 29 02:30:00 fw-2 sshd[5]: Failed password for pi from 192.0.2.200 port 2223 ssh2",
                    "Oct 25 02:30:00 fw-2 sshd[6]: Failed password for pi from 192.0.2.200 port 2224 ssh2",
                    "Oct 25 03:00:30 fw-2 sshd[6]: Failed password for pi from 192.0.2.200 port 2225 ssh2"
                ]
            ),
            (
                "dst-lord-howe", 0x34,
                [
                    "Apr  5 01:45:00 syd-1 sshd[9]: Invalid user guest from 198.51.100.200",
                    "Oct  4 02:15:00 syd-1 sshd[9]: Failed password for invalid user guest from 198.51.100.200 port 1 ssh2"
                ]
            ),
            (
                "rfc3339", 0x00,
                [
                    "2026-12-01T15:30:30.123456+01:00 bastion-1 sshd[811]: Failed keyboard-interactive/pam for invalid user test from 192.0.2.44 port 51515 ssh2",
                    "2026-12-01T14:30:31Z bastion-1 sshd[811]: Failed publickey for git from 192.0.2.44 port 51516 ssh2: RSA SHA256:c2VlZA",
                    "2026-12-01T15:30:32+0100 bastion-1 sshd-auth[811]: Accepted password for git from 192.0.2.44 port 51517 ssh2",
                    "2026-12-01T15:30:33.654321+0100 bastion-1 sshd[900]: pam_faillock(sshd:auth): Consecutive login failures for user git account temporarily locked",
                    "2026-12-01T15:30:34 bastion-1 sshd[901]: Failed password for git from 192.0.2.44 port 51518 ssh2"
                ]
            ),
            (
                "no-host-default-device", 0x44,
                [
                    "Dec  1 15:30:30 sshd[811]: Failed password for root from 203.0.113.9 port 50122 ssh2",
                    "Dec  1 15:30:31 sshd: Invalid user a b from 203.0.113.9"
                ]
            ),
            ("no-host", 0x04, ["Dec  1 15:30:30 sshd[811]: Failed password for root from 203.0.113.9 port 50122 ssh2"]),
            (
                "extremes", 0x08,
                [
                    "9999-12-31T23:59:59.999Z h sshd: Failed password for x from 10.0.0.1 port 1 ssh2",
                    "9999-12-31T23:59:59.999-00:01 h sshd: Failed password for x from 10.0.0.1 port 1 ssh2",
                    "0001-01-01T00:00:00+00:01 h sshd: Failed password for x from 10.0.0.1 port 1 ssh2",
                    "Dec 31 23:59:59 h sshd[1]: Failed password for x from 10.0.0.1 port 99999999999999999999 ssh2",
                    "Jan  1 00:00:00 h sshd[1]: Failed password for x from 10.0.0.1 port 0 ssh2"
                ]
            ),
            (
                "year-one-berlin", 0x1C,
                [
                    "Jan  1 00:59:59 h sshd[1]: Failed password for x from 10.0.0.1 port 1 ssh2",
                    "Jan  1 01:00:00 h sshd[1]: Failed password for x from 10.0.0.1 port 1 ssh2"
                ]
            ),
            (
                "hostile-users", 0x44,
                [
                    "Dec  1 15:30:30 h sshd[1]: Invalid user a b from 10.0.0.1 port 22 from 192.0.2.1 port 22",
                    "Dec  1 15:30:30 h sshd[1]: Failed password for invalid user \u{1B}[31mred from 192.0.2.1 port 22 ssh2",
                    "Dec  1 15:30:30 h sshd[1]: Invalid user  from 192.0.2.1 port 22",
                    "Dec  1 15:30:30 h sshd[1]: Failed password for " + String(repeating: "u", count: 300) + " from 192.0.2.1 port 22 ssh2",
                    "Dec  1 15:30:30 h sshd[1]: Failed password for jos\u{E9} from fe80::1%eth0 port 22 ssh2\r",
                    "Dec  1 15:30:30 h sshd[1]: Failed password for e\u{301} from attacker.example port 22 ssh2",
                    "Dec  1 15:30:30 h/x sshd[1]: Failed password for x from 192.0.2.1 port 22 ssh2",
                    "Dec  1 15:30:30 h sshd[1]: Failed password for x from 192.0.2.1 port"
                ]
            ),
            (
                "other-lines", 0x00,
                [
                    "Dec  1 00:00:01 h sshd[1]: Server listening on 0.0.0.0 port 22.",
                    "Dec  1 00:00:02 h sshd[1]: Received disconnect from 192.0.2.9 port 3 11: Bye Bye [preauth]",
                    "Dec  1 00:00:03 h sshd[1]: Connection reset by authenticating user root 192.0.2.9 port 4 [preauth]",
                    "Dec  1 00:00:04 h sshd[1]: PAM 2 more authentication failures; logname= uid=0 euid=0 tty=ssh ruser= rhost=192.0.2.9  user=root",
                    "Dec  1 00:00:05 h sshd[1]: error: PAM: Authentication failure for root from 192.0.2.9",
                    "Dec  1 00:00:06 h systemd-logind[2]: New session 4 of user maria.",
                    "Dec 32 00:00:07 h sshd[1]: Failed password for x from 192.0.2.9 port 5 ssh2",
                    "Dec  1 24:00:00 h sshd[1]: Failed password for x from 192.0.2.9 port 5 ssh2",
                    ""
                ]
            )
        ]
        for (name, mode, lines) in sshd {
            try writer.seed("FuzzLogLine", "sshd-\(name).log", [mode] + Array(lines.joined(separator: "\n").utf8))
        }

        // Keycloak: one event; bit 6 a default device.
        let keycloak: [(String, UInt8, String)] = [
            (
                "login", 0x01,
                #"{"id":"5b1e0c3a-2f1d-4c5e-9a7b-0d1e2f3a4b5c","time":1796289240000,"type":"LOGIN","realmId":"acme","clientId":"account-console","userId":"3f1c2a9e-7b4d-4e1f-8c2a-9d0e1f2a3b4c","sessionId":"b7a1c2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d","ipAddress":"192.0.2.10","details":{"auth_method":"openid-connect","auth_type":"code","username":"maria.lopez","redirect_uri":"https://sso.acme.example/realms/acme/account/"}}"#
            ),
            (
                "login-otp", 0x01,
                #"{"time":1796289250000,"type":"LOGIN","realmId":"acme","userId":"3f1c2a9e","ipAddress":"2001:DB8:0:0::10","details":{"username":"maria.lopez","credential_type":"otp"}}"#
            ),
            (
                "login-broker", 0x01,
                #"{"time":1796289260000,"type":"LOGIN","realmId":"acme","userId":"u-9","details":{"identity_provider":"Google","username":"lee"}}"#
            ),
            (
                "wrong-password", 0x01,
                #"{"time":1796289270001,"type":"LOGIN_ERROR","realmId":"acme","clientId":"web","ipAddress":"::ffff:203.0.113.50","error":"invalid_user_credentials","details":{"auth_method":"openid-connect","credential_type":"password","username":"maria.lopez"}}"#
            ),
            (
                "unknown-user", 0x01,
                #"{"time":1796289270002,"type":"LOGIN_ERROR","realmId":"acme","ipAddress":"203.0.113.50","error":"user_not_found","details":{"username":"admin"}}"#
            ),
            (
                "wrong-otp", 0x01,
                #"{"time":1796289270003,"type":"LOGIN_ERROR","realmId":"acme","userId":"3f1c2a9e","error":"invalid_user_credentials","details":{"credential_type":"recovery-authn-codes"}}"#
            ),
            (
                "temporarily-disabled", 0x01,
                #"{"time":1796289270004,"type":"LOGIN_ERROR","realmId":"acme","userId":"3f1c2a9e","ipAddress":"203.0.113.50","error":"user_temporarily_disabled","details":{"username":"maria.lopez"}}"#
            ),
            ("logout-no-realm", 0x41, #"{"time":1796289280000,"type":"LOGOUT","userId":"3f1c2a9e","realmId":null}"#),
            ("reset-by-email", 0x01, #"{"time":1796289290000,"type":"RESET_PASSWORD","realmId":"acme","details":{"username":"maria@acme.example"}}"#),
            ("register", 0x41, #"{"time":0,"type":"REGISTER","userId":"new-user","details":{"username":"new.user","email":"new@acme.example"}}"#),
            ("skipped-kinds", 0x01, #"{"time":1796289300000,"type":"LOGIN_ERROR","realmId":"acme","error":"expired_code","details":{"username":"x"}}"#),
            ("time-maximum", 0x01, #"{"time":253402300799999,"type":"UPDATE_PASSWORD","realmId":"acme","userId":"u"}"#),
            ("time-past-maximum", 0x01, #"{"time":253402300800000,"type":"UPDATE_PASSWORD","realmId":"acme","userId":"u"}"#),
            ("duplicate-key", 0x01, #"{"time":1,"type":"LOGOUT","type":"LOGIN","realmId":"acme"}"#),
            (
                "escapes", 0x01,
                #"{"time":1796289310000,"type":"LOGIN_ERROR","realmId":"ac\u006de","error":"user_not_found","details":{"username":"\ud83d\ude00 \u0001 \"q\""}}"#
            ),
            ("lone-surrogate", 0x01, #"{"time":1796289310000,"type":"LOGOUT","realmId":"acme","details":{"username":"\ud800"}}"#),
            ("deep", 0x01, #"{"time":1,"type":"LOGOUT","x":[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]}"#),
            ("odd-numbers", 0x01, #"{"time":1.5e3,"type":"LOGOUT","realmId":"a b","x":-0.0E+1}"#),
            ("number-beyond-double", 0x01, #"{"time":1796289320000,"type":"LOGOUT","realmId":"acme","userId":"u-1","sessionId":1e400}"#)
        ]
        for (name, mode, event) in keycloak { try writer.seed("FuzzLogLine", "keycloak-\(name).json", [mode] + Array(event.utf8)) }

        // Arrays for the splitter: mode 2 with the import's limit, mode 3 with 1 + (bits 2-7) bytes.
        let arrays: [(String, UInt8, [UInt8])] = [
            (
                "pretty", 0x02,
                Array(
                    """
                    [ {
                      "time" : 1796289270004,
                      "type" : "LOGIN_ERROR",
                      "realmId" : "acme",
                      "error" : "user_temporarily_disabled",
                      "details" : {
                        "username" : "maria.lopez"
                      }
                    }, {
                      "time" : 1796289240000,
                      "type" : "LOGIN",
                      "realmId" : "acme",
                      "ipAddress" : "192.0.2.10",
                      "details" : { "username" : "maria.lopez" }
                    } ]

                    """.utf8)
            ),
            ("strings", 0x02, Array(#"[{"a":"],[{\""},{"b":[1,{"c":"\\"}]} , "x,y" ,7,null,true,[]]"#.utf8)),
            ("byte-order-mark", 0x02, [0xEF, 0xBB, 0xBF] + Array(" \r\n\t[ ]".utf8)),
            ("unterminated", 0x02, Array(#"[{"time":1,"type":"LOGOUT"},"#.utf8)),
            ("after-close", 0x02, Array("[1] x".utf8)),
            ("newline-in-string", 0x02, Array("[\"a\nb\",{\"k\":\"v\r\"}]".utf8)),
            ("small-limit", 0x13, Array(#"[1,22,333,4444,55555,666666]"#.utf8)),
            ("limit-64", 0xFF, Array(#"[{"time":1796289280000,"type":"LOGOUT","realmId":"acme","userId":"3f1c2a9e"}]"#.utf8))
        ]
        for (name, mode, bytes) in arrays { try writer.seed("FuzzLogLine", "array-\(name).json", [mode] + bytes) }

        try writer.dictionary(
            "FuzzLogLine",
            ([
                "sshd[", "sshd-session[", "sshd-auth[", "]: ", "Failed password for ", "Failed publickey for ", "Failed none for ",
                "Failed keyboard-interactive/pam for ", "invalid user ", "Invalid user ", "Accepted password for ", "Accepted publickey for ",
                " from ", " port ", " ssh2", " ssh2: ", " [preauth]", "error: maximum authentication attempts exceeded for ",
                "Disconnected from user ", "Disconnecting authenticating user ", ": Too many authentication failures",
                "pam_faillock(sshd:auth): Consecutive login failures for user ", " account temporarily locked", "pam_unix(sshd:auth): ",
                "Jan  1 00:00:00 ", "Feb 29 ", "Dec 31 23:59:59 ", "Mar 29 02:30:00 ", "Oct 25 02:30:00 ", "9999-12-31T23:59:59.999",
                "0001-01-01T00:00:00", "+01:00", "-0100", "+13:45", "Z ", ".123456", "::ffff:", "2001:DB8::1", "fe80::1%eth0", "\n", "\r",
                "\"time\":", "\"type\":", "\"realmId\":", "\"userId\":", "\"ipAddress\":", "\"error\":", "\"details\":", "\"username\":",
                "\"credential_type\":", "\"identity_provider\":", "\"LOGIN\"", "\"LOGIN_ERROR\"", "\"LOGOUT\"", "\"UPDATE_PASSWORD\"",
                "\"RESET_PASSWORD\"", "\"REGISTER\"", "\"invalid_user_credentials\"", "\"user_not_found\"", "\"invalid_totp\"",
                "\"invalid_otp\"", "\"user_temporarily_disabled\"", "\"user_disabled\"", "\"otp\"", "\"recovery-authn-codes\"",
                "\"webauthn\"", "\"google\"", "\"apple\"", "null", "253402300799999", "253402300800000", "9223372036854775807", "1e400", "-0.0E+1",
                "\\u0000", "\\ud800", "\\\"", "\\\\"
            ].map { Array($0.utf8) }) + [[0xEF, 0xBB, 0xBF]])
    }

    static func policySeeds(_ writer: inout CorpusWriter) throws {
        for policy in LockoutPolicy.presets { try writer.seed("FuzzLockoutPolicy", "\(policy.name).json", Array(policy.json.utf8)) }
        let everything = LockoutPolicy(
            name: "everything",
            password: .init(
                methods: [.password, .passcode], tiers: (1...8).map { LockoutPolicy.Tier(limit: $0, windowSeconds: $0 * 60) },
                backoff: .init(
                    threshold: 2, initialWaitSeconds: 1, growth: .doubling, maximumWaitSeconds: 366 * 86_400,
                    resetAfterSeconds: 3600, quickLoginMilliseconds: 500, quickLoginWaitSeconds: 30),
                consecutiveLimit: 1_000_000, permanentAfterLockouts: 0),
            secondFactor: .init(tiers: [.init(limit: 1, windowSeconds: 366 * 86_400)], consecutiveLimit: 1),
            clearing: .init(signInSucceeded: .none, passwordChanged: .counters, lockoutCleared: .all, passcodeResetCompleted: .none))
        try writer.seed("FuzzLockoutPolicy", "everything.json", Array(everything.json.utf8))
        try writer.dictionary(
            "FuzzLockoutPolicy",
            [
                "name", "password", "second_factor", "clearing", "methods", "tiers", "limit",
                "window_seconds", "backoff", "threshold", "initial_wait_seconds", "growth",
                "doubling", "linear", "maximum_wait_seconds", "reset_after_seconds",
                "quick_login_milliseconds", "quick_login_wait_seconds", "consecutive_limit",
                "permanent_after_lockouts", "sign_in_succeeded", "password_changed", "lockout_cleared",
                "passcode_reset_completed", "none", "counters", "all", "31622400", "1000000", "0"
            ]
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
