import Foundation
import OnboardingModel
import OnboardingStore
import Testing
import TestSupport

@testable import OnboardingImport

/// `onboard import --from okta|entra|cloudtrail|windows`: each vendor's log (our own samples in
/// its documented schema, `IdentityLogFixtures`) imported into a store, mapped as
/// docs/importers.md's tables say, in time order, with what is not a sign-in counted by kind.
@Suite struct IdentityLogImportTests {
    typealias F = IdentityLogFixtures

    /// 2026-12-03 at `clock` (UTC).
    static func at(_ clock: String) -> Timestamp {
        (try? Timestamp(iso8601: "2026-12-03T\(clock)\(clock.contains(".") ? "" : ".000")Z")) ?? .minimum
    }

    /// Imports `text` as `format` into a new store; the summary and the stored events.
    static func imported(_ text: String, _ format: ImportFormat, device: String? = nil, name: String = "log") throws -> (
        ImportSummary, [Event], TemporaryDirectory
    ) {
        let directory = try TemporaryDirectory()
        let file = try directory.write(name, text)
        let store = directory.appending("store")
        let summary = try LogImportTests.importer(store, format, device: device).run(try ImportInput(path: file))
        var stored = summary.appended > 0 ? try EventImporterTests.storedEvents(store) : []
        // The import's own summary is its last record (docs/importers.md § The summary in the store).
        if !stored.isEmpty {
            #expect(stored.last?.type == .logImported)
            stored.removeLast()
        }
        return (summary, stored, directory)
    }

    // MARK: Okta

    @Test("Okta: the API's array, newest first, imported oldest first as the table maps it; the rest counted by kind")
    func okta() throws {
        let (summary, stored, directory) = try Self.imported(F.oktaArray, .okta, device: "okta-acme")
        defer { directory.remove() }
        #expect(summary.skipped == ["other outcome": 1, "not authentication": 1])
        #expect(stored.map(\.at) == ["09:14:00", "09:14:05", "09:14:10", "09:14:20", "09:14:30", "09:15:00", "09:15:20", "09:15:30", "09:16:00"].map(Self.at))
        #expect(
            stored.map(\.user) == [
                "tom@acme.example", "ghost@acme.example", "nobody@acme.example", "tom@acme.example", "tom@acme.example",
                "maria@acme.example", "maria@acme.example", "maria@acme.example", "maria@acme.example"
            ])
        #expect(Set(stored.map(\.device)) == ["okta-acme"], "Okta's records name no device: --device")
        #expect(
            stored.map(\.payload) == [
                .signInFailed(method: .password, reason: .invalidPassword, clientAddress: F.sprayer),
                .signInFailed(method: .password, reason: .unknownUser, clientAddress: F.sprayer),
                .signInFailed(method: .password, reason: .unknownUser, clientAddress: F.sprayer),
                .accountLocked(source: .okta, until: nil, clientAddress: F.sprayer),
                .signInThrottled(method: .password, retryAfter: Self.at("09:14:30"), clientAddress: F.sprayer),
                .signInSucceeded(method: .password, secondFactor: false, clientAddress: F.honest),
                .secondFactorFailed(method: .sms, clientAddress: F.honest),
                .secondFactorSucceeded(method: .totp),
                .signedOut(reason: .user)
            ])
    }

    @Test("Okta without --device: the import stops naming the record, and nothing is written")
    func oktaNeedsADevice() throws {
        #expect(throws: ImportError.self) { _ = try Self.imported(F.oktaArray, .okta) }
    }

    @Test(
        "Okta's hostile records are skipped by kind, never fatal",
        arguments: [
            (#"{"eventType":"user.session.start","published":1796289240,"outcome":{"result":"SUCCESS"}}"#, "unreadable time"),
            (#"{"eventType":"user.session.start","published":"2026-12-03T09:14:00","outcome":{"result":"SUCCESS"}}"#, "unreadable time"),
            (#"{"eventType":"user.session.start","published":"10000-01-01T00:00:00Z","outcome":{"result":"SUCCESS"}}"#, "unreadable time"),
            (#"{"eventType":"user.session.start","published":"0000-12-31T23:59:59Z","outcome":{"result":"SUCCESS"}}"#, "unreadable time"),
            (#"{"eventType":"user.session.start","published":"\#(String(repeating: "2", count: 100_000))","outcome":{"result":"SUCCESS"}}"#, "unreadable time"),
            (#"{"eventType":"user.session.start","published":"2026-12-03T09:14:00Z","outcome":{"result":18446744073709551615}}"#, "other outcome"),
            (#"{"eventType":"user.session.start","published":"2026-12-03T09:14:00Z","outcome":"SUCCESS"}"#, "other outcome"),
            (
                #"{"eventType":"user.session.start","published":"2026-12-03T09:14:00Z","outcome":{"result":"SUCCESS"},"actor":{"alternateId":"a\u001b[31mb"}}"#,
                "unreadable user"
            ),
            (
                #"{"eventType":"user.session.start","published":"2026-12-03T09:14:00Z","outcome":{"result":"SUCCESS"},"actor":{"alternateId":42}}"#,
                "unreadable user"
            ),
            (
                #"{"eventType":"user.session.start","published":"2026-12-03T09:14:00Z","outcome":{"result":"SUCCESS"},"actor":{"alternateId":"\#(String(repeating: "x", count: 300))"}}"#,
                "unreadable user"
            ),
            (#"{"eventType":7}"#, "not a record"), ("[1,2]", "not a record"), (#"{"eventType":"user.session.start""#, "not JSON"),
            (#"{"eventType":"a","eventType":"b"}"#, "not JSON")
        ])
    func oktaHostile(record: String, kind: String) {
        #expect(Array(record.utf8).withUnsafeBytes { OktaLogParser().parse($0) } == .skipped(kind))
    }

    @Test("Okta: a record without actor or address still maps; an address that is no IP is none")
    func oktaMissingFields() {
        let record =
            #"{"eventType":"user.session.start","published":"2026-12-03T09:14:00+01:00","outcome":{"result":"FAILURE","reason":"INVALID_CREDENTIALS"},"client":{"ipAddress":"portal.acme.example"}}"#
        #expect(
            Array(record.utf8).withUnsafeBytes { OktaLogParser().parse($0) }
                == .event(AuthLogEvent(at: Self.at("08:14:00"), host: nil, user: nil, payload: .signInFailed(method: .password, reason: .invalidPassword))))
    }

    // MARK: Entra ID

    @Test("Entra ID: Graph's {\"value\":[…]}, pretty-printed, imported oldest first; the portal's array of the same sign-ins appends nothing")
    func entra() throws {
        let (summary, stored, directory) = try Self.imported(F.entraGraph, .entra, device: "entra-acme")
        defer { directory.remove() }
        #expect(summary.skipped == ["other sign-in error": 1])
        #expect(stored.map(\.at) == ["09:14:00", "09:14:10", "09:14:30", "09:15:10", "09:15:20", "09:15:30"].map(Self.at))
        #expect(
            stored.map(\.payload) == [
                .signInFailed(method: .password, reason: .invalidPassword, clientAddress: F.sprayer),
                .signInFailed(method: .password, reason: .unknownUser, clientAddress: F.sprayer),
                .signInThrottled(method: .password, retryAfter: Self.at("09:14:30"), clientAddress: F.sprayer),
                .secondFactorRequired(method: .sms),
                .secondFactorFailed(method: .sms, clientAddress: F.honest),
                .signInSucceeded(method: .password, secondFactor: true, clientAddress: F.honest)
            ])
        #expect(stored.map(\.user) == ["tom@acme.example", "ghost@acme.example", "tom@acme.example"] + Array(repeating: "maria@acme.example", count: 3))

        // The same sign-ins as the portal's JSON array: the same ids.
        let start = try #require(F.entraGraph.range(of: "\"value\": ")).upperBound
        let array = String(F.entraGraph[start...].dropLast())
        let file = try directory.write("array.json", array)
        let again = try LogImportTests.importer(directory.appending("store"), .entra, device: "entra-acme").run(try ImportInput(path: file))
        #expect(again.appended == 0 && again.alreadyStored == 6, "\(again)")
    }

    @Test(
        "Entra ID: an error code that is no whole number is unreadable; an unknown code is another error",
        arguments: [
            (#""errorCode":"50126""#, "unreadable status"), (#""errorCode":18446744073709551615"#, "unreadable status"),
            (#""errorCode":50126.5"#, "unreadable status"), (#""errorCode":null"#, "unreadable status"), ("", "unreadable status"),
            (#""errorCode":-1"#, "other sign-in error"), (#""errorCode":9223372036854775807"#, "other sign-in error")
        ])
    func entraStatus(member: String, kind: String) {
        let record = #"{"createdDateTime":"2026-12-03T09:14:00Z","userPrincipalName":"tom@acme.example","status":{\#(member)}}"#
        #expect(Array(record.utf8).withUnsafeBytes { EntraSignInParser().parse($0) } == .skipped(kind))
    }

    @Test("Entra ID: a Graph answer whose value is no array, is cut, or names it twice stops the import naming it; an object without it is one record")
    func entraWrapperErrors() throws {
        let (summary, _, directory) = try Self.imported(#"{"@odata.context":"x"}"#, .entra, device: "x")
        directory.remove()
        #expect(summary.events == 0 && summary.skipped == ["not a record": 1])
        for text in [#"{"value": 7}"#, #"{"@odata.context":"x", "value": {"a":[]}}"#, #"{"value":[{"a":1}"#, #"{"value":[],"value":[]}"#, #"{"value":[]"#] {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let file = try directory.write("signins.json", text)
            let error = #expect(throws: ImportError.self) {
                try LogImportTests.importer(directory.appending("store"), .entra, device: "x").run(try ImportInput(path: file))
            }
            #expect(error?.kind == .invalidInput && error?.message.hasSuffix("nothing was imported") == true, "\(text): \(String(describing: error))")
            #expect(!FileManager.default.fileExists(atPath: directory.appending("store")))
        }
    }

    // MARK: CloudTrail

    @Test(
        "CloudTrail: a log file's {\"Records\":[…]}: console sign-ins on the account's device, a hidden name as no user, root by its ARN; other calls counted")
    func cloudTrail() throws {
        let (summary, stored, directory) = try Self.imported(F.cloudTrailFile, .cloudtrail)
        defer { directory.remove() }
        #expect(summary.skipped == ["other event": 1])
        #expect(Set(stored.map(\.device)) == ["123456789012"])
        #expect(stored.map(\.user) == ["tom", nil, "arn:aws:iam::123456789012:root", "maria"])
        #expect(
            stored.map(\.payload) == [
                .signInFailed(method: .password, reason: .invalidPassword, clientAddress: F.sprayer),
                .signInFailed(method: .password, reason: .unknownUser, clientAddress: F.sprayer),
                .signInFailed(method: .password, reason: .invalidPassword, clientAddress: F.sprayer),
                .signInSucceeded(method: .password, secondFactor: true, clientAddress: F.honest)
            ])
    }

    @Test("CloudTrail: one record per line reads as the file does")
    func cloudTrailLines() throws {
        let lines = [
            F.consoleLogin("2026-12-03T09:15:00Z", user: "maria", address: F.honest, outcome: "Success"),
            F.consoleLogin("2026-12-03T09:14:00Z", user: "tom", address: "AWS Internal", outcome: "Failure", error: "Failed authentication")
        ].joined(separator: "\n")
        let (_, stored, directory) = try Self.imported(lines, .cloudtrail)
        defer { directory.remove() }
        #expect(
            stored.map(\.payload) == [
                .signInFailed(method: .password, reason: .invalidPassword, clientAddress: nil),
                .signInSucceeded(method: .password, secondFactor: false, clientAddress: F.honest)
            ])
    }

    @Test(
        "CloudTrail's hostile records are skipped by kind, never fatal",
        arguments: [
            (#""eventTime":"99999-01-01T00:00:00Z""#, #""userName":"tom""#, #""123456789012""#, "unreadable time"),
            (#""eventTime":18446744073709551615"#, #""userName":"tom""#, #""123456789012""#, "unreadable time"),
            (#""eventTime":"2026-12-03T09:14:00Z""#, #""userName":"to\u0000m""#, #""123456789012""#, "unreadable user"),
            (#""eventTime":"2026-12-03T09:14:00Z""#, #""userName":["tom"]"#, #""123456789012""#, "unreadable user"),
            (#""eventTime":"2026-12-03T09:14:00Z""#, #""userName":"\#(String(repeating: "t", count: 257))""#, #""123456789012""#, "unreadable user"),
            (#""eventTime":"2026-12-03T09:14:00Z""#, #""userName":"tom""#, #""123/456""#, "unreadable device"),
            (#""eventTime":"2026-12-03T09:14:00Z""#, #""userName":"tom""#, "123456789012", "unreadable device")
        ])
    func cloudTrailHostile(time: String, user: String, account: String, kind: String) {
        let record =
            #"{\#(time),"eventName":"ConsoleLogin","userIdentity":{\#(user)},"recipientAccountId":\#(account),"responseElements":{"ConsoleLogin":"Success"}}"#
        #expect(Array(record.utf8).withUnsafeBytes { CloudTrailLoginParser().parse($0) } == .skipped(kind))
        // A ConsoleLogin whose outcome is of the wrong type is another outcome, whatever else it holds.
        let wrongType = record.replacingOccurrences(of: #"{"ConsoleLogin":"Success"}"#, with: #"{"ConsoleLogin":true}"#)
        #expect(Array(wrongType.utf8).withUnsafeBytes { CloudTrailLoginParser().parse($0) } == .skipped("other outcome"))
    }

    // MARK: Windows

    @Test("Windows: wevtutil's XML: 4625 by SubStatus, 4740 as the lock, 4624 for a person; services, computers and other events counted")
    func windowsXML() throws {
        let (summary, stored, directory) = try Self.imported("<Events>\n" + F.windowsExport + "\n</Events>\n", .windows)
        defer { directory.remove() }
        #expect(summary.skipped == ["logon failure without a credential check": 1, "service or computer logon": 2, "other event": 1])
        #expect(stored.map(\.device) == ["WS-01.acme.example", "WS-01.acme.example", "dc01.acme.example", "WS-01.acme.example", "WS-01.acme.example"])
        #expect(stored.map(\.user) == ["tom", "gh<ost", "tom", "tom", "maria"], "entities and character references decoded")
        #expect(stored.map(\.at) == ["09:14:00.123", "09:14:10", "09:14:20", "09:14:30", "09:15:00"].map(Self.at), "seven fraction digits cut to milliseconds")
        #expect(
            stored.map(\.payload) == [
                .signInFailed(method: .password, reason: .invalidPassword, clientAddress: F.sprayer),
                .signInFailed(method: .password, reason: .unknownUser, clientAddress: F.sprayer),
                .accountLocked(source: .windows, until: nil, clientAddress: nil),
                .signInThrottled(method: .password, retryAfter: Self.at("09:14:30"), clientAddress: F.sprayer),
                .signInSucceeded(method: .password, secondFactor: false, clientAddress: F.honest)
            ])
    }

    @Test("Windows: winlogbeat's JSON lines (event_id a number or a string) map as the XML does; a loopback address is none")
    func winlogbeat() throws {
        let lines = [
            F.winlogbeat(
                4625, "2026-12-03T09:14:00.000Z", #""TargetUserName":"tom","SubStatus":"0x0","Status":"0xC000006A","LogonType":"3","IpAddress":"203.0.113.77""#),
            F.winlogbeat("4740", "2026-12-03T09:14:20.000Z", #""TargetUserName":"tom","TargetDomainName":"WS-07""#, computer: "dc01"),
            F.winlogbeat(4624, "2026-12-03T09:15:00.000Z", #""TargetUserName":"maria","LogonType":"3","IpAddress":"127.0.0.1""#),
            F.winlogbeat("99999999", "2026-12-03T09:15:00.000Z", ""),
            F.winlogbeat(4625, "2026-12-03T09:15:00.000Z", #""TargetUserName":"x\u0007","SubStatus":"0xc000006a""#)
        ].joined(separator: "\n")
        let (summary, stored, directory) = try Self.imported(lines, .windows)
        defer { directory.remove() }
        #expect(summary.skipped == ["unreadable event id": 1, "unreadable user": 1])
        #expect(
            stored.map(\.payload) == [
                .signInFailed(method: .password, reason: .invalidPassword, clientAddress: F.sprayer),
                .accountLocked(source: .windows),
                .signInSucceeded(method: .other, secondFactor: false, clientAddress: nil)
            ])
        #expect(stored.map(\.device) == ["WS-01.acme.example", "dc01", "WS-01.acme.example"])
    }

    @Test("Windows XML: a DTD stops the import; a bad entity, a cut or an oversized event is one skipped event")
    func windowsHostileXML() throws {
        let good = F.windowsXML(4740, "2026-12-03T09:14:20.0000000Z", data: [("TargetUserName", "tom")])
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let dtd = try directory.write("dtd.xml", #"<!DOCTYPE Events [<!ENTITY a "aaaa">]>"# + "\n" + good)
        let error = #expect(throws: ImportError.self) { try LogImportTests.importer(directory.appending("s1"), .windows).run(try ImportInput(path: dtd)) }
        #expect(error?.message.contains("document type") == true)

        let badEntity = F.windowsXML(4740, "2026-12-03T09:14:21.0000000Z", data: [("TargetUserName", "&a;")])
        let badReference = F.windowsXML(4740, "2026-12-03T09:14:22.0000000Z", data: [("TargetUserName", "&#x110000;")])
        let unclosed = "<Event><System><EventID>4740</EventID></System><EventData></Event>"
        let huge = F.windowsXML(4740, "2026-12-03T09:14:23.0000000Z", data: [("TargetUserName", String(repeating: "y", count: 70_000))])
        let file = try directory.write("events.xml", [good, badEntity, badReference, unclosed, huge].joined(separator: "\n"))
        let summary = try LogImportTests.importer(directory.appending("s2"), .windows).run(try ImportInput(path: file))
        #expect(summary.appended == 1 && summary.skipped == ["unreadable event XML": 4], "\(summary)")

        let cut = try directory.write("cut.xml", String(good.prefix(good.count / 2)))
        #expect(throws: ImportError.self) { try LogImportTests.importer(directory.appending("s3"), .windows).run(try ImportInput(path: cut)) }
    }

    // MARK: Every format

    @Test(
        "a file that is not the format stops the import with one line naming the file and what was expected",
        arguments: [
            (ImportFormat.okta, "Okta System Log JSON"), (.entra, "Entra ID sign-in JSON"), (.cloudtrail, "CloudTrail JSON"),
            (.windows, "Windows event XML or winlogbeat JSON"), (.keycloak(timeZone: TimeZone(identifier: "UTC")!), "Keycloak event JSON")
        ])
    func notTheFormat(format: ImportFormat, title: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write("auth.log", "Dec  3 09:14:00 bastion sshd[1]: Failed password for tom from 203.0.113.77 port 22 ssh2\n")
        let error = #expect(throws: ImportError.self) { try LogImportTests.importer(directory.appending("store"), format).run(try ImportInput(path: file)) }
        #expect(error?.kind == .invalidInput)
        #expect(
            error?.message.hasPrefix("\(file): not \(title): it starts with 'D', expected a JSON array ('[')") == true, "\(String(describing: error?.message))")
        #expect(error?.message.contains("\n") == false)
        #expect(!FileManager.default.fileExists(atPath: directory.appending("store")))
    }

    @Test("a UTF-16 export (PowerShell's Out-File) is refused with a line saying how to convert it")
    func utf16() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.appending("security.xml")
        try Data([0xFF, 0xFE] + Array("<Event></Event>".utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }).write(to: URL(fileURLWithPath: file))
        let error = #expect(throws: ImportError.self) { try LogImportTests.importer(directory.appending("store"), .windows).run(try ImportInput(path: file)) }
        #expect(error?.kind == .invalidInput && error?.message.contains("it is UTF-16") == true && error?.message.contains("iconv") == true)
    }

    @Test("an empty file imports nothing, in every format")
    func emptyFile() throws {
        for format in [ImportFormat.okta, .entra, .cloudtrail, .windows] {
            let (summary, _, directory) = try Self.imported(" \n", format, device: "x")
            directory.remove()
            #expect(summary.events == 0 && summary.skipped.isEmpty)
        }
    }
}
