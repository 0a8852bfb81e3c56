import Foundation
import Testing
@testable import OnboardingModel

/// `sign_in_aborted` through every codec (docs/events.md § `sign_in_aborted`): the JSON form, the
/// binary record (reference and fast decoders) at schema 1 (no address) and 2 (with one), what
/// each refuses, erasure of its address, and its OCSF form.
@Suite("sign_in_aborted: JSON, the binary record, erasure and OCSF")
struct SignInAbortedCodecTests {
    static let reasons =
        "too_many_failures, refused, client_gave_up, user_changed, no_identification, bad_protocol, closed_before_authentication, negotiation_failed, no_authentication_methods, banner_error, timeout"

    /// A canonical line of the type: `user` and `extra` as raw JSON.
    static func line(user: String = "null", reason: String? = #""timeout""#, address: String? = nil, extra: String = "") -> String {
        var text = #"{"id":"6d2f0b7a-3c1e-4f5a-9b8d-2e7c4a1f0d63","device":"bastion-1","seq":7,"at":"2026-12-03T09:14:05.000Z","#
        text += #""user":\#(user),"session":null,"type":"sign_in_aborted""#
        if let reason { text += #","reason":"# + reason }
        if let address { text += #","client_address":"# + address }
        return text + extra + "}"
    }

    @Test(
        "JSON → event → binary → event → JSON gives the same bytes, both binary decoders agree, and the schema is 1 without an address",
        arguments: [
            (line(), 1),
            (line(reason: #""closed_before_authentication""#, address: #""203.0.113.50""#), 2),
            (line(user: #""root""#, reason: #""too_many_failures""#, address: #""2001:db8::7""#), 2),
            (line(user: #""~0123456789abcdef0123456789abcdef""#, reason: #""bad_protocol""#), 1)
        ] as [(String, UInt8)])
    func roundTrip(line: String, schema: UInt8) throws {
        let decoded = try EventJSON.decode(line: line)
        #expect(EventJSON.encode(decoded.event, seq: decoded.seq) == line)
        #expect(decoded.event.type.schemaVersion(holding: decoded.event.payload.fieldValues) == schema)
        let bytes = RecordCodec.encode(decoded.event, seq: 7, previousHash: .zero)
        let record = try RecordCodec.decode(bytes, expectedSeq: 7, users: TestKeys.directory)
        #expect(record.event == decoded.event)
        let body = RecordBytes.body(bytes)
        let fast = body.withUnsafeBytes { RecordCodec.fastDecodeBody($0, users: TestKeys.directory) }
        // The fast decoder may leave a client address to the reference decoder; what it reads agrees.
        if let fast { #expect(fast.0 == 7 && fast.1 == decoded.event) }
        let viaBytes = try Array(line.utf8).withUnsafeBytes { raw throws(EventValidationError) in try EventJSON.decode(lineBytes: raw) }
        #expect(viaBytes.event == decoded.event)
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let line: String
        let field: String
        /// The message's beginning.
        let message: String
        var testDescription: String { "\(field): \(message)" }
    }

    static let refusals: [Refusal] = [
        Refusal(line: line(reason: nil), field: "reason", message: "is required for sign_in_aborted"),
        Refusal(line: line(reason: "null"), field: "reason", message: "is required for sign_in_aborted"),
        Refusal(line: line(reason: #""aborted""#), field: "reason", message: #""aborted" is not one of: \#(reasons)"#),
        Refusal(line: line(reason: #""Timeout""#), field: "reason", message: #""Timeout" is not one of: \#(reasons)"#),
        // The control character is echoed escaped.
        Refusal(line: line(reason: #""timeout\u0000""#), field: "reason", message: "\"timeout\\u{0000}\" is not one of"),
        Refusal(line: line(reason: "10"), field: "reason", message: "must be a string, got a number"),
        Refusal(line: line(reason: "-1"), field: "reason", message: "must be a string, got a number"),
        Refusal(line: line(reason: "18446744073709551615"), field: "reason", message: "must be a string, got a number"),
        Refusal(line: line(reason: #"["timeout"]"#), field: "reason", message: "must be a string, got an array"),
        Refusal(line: line(address: #""2001:DB8::7""#), field: "client_address", message: "must be an IPv4 or IPv6 address in canonical form"),
        Refusal(line: line(address: #""203.0.113.50:22""#), field: "client_address", message: "must be an IPv4 or IPv6 address in canonical form"),
        Refusal(line: line(address: #""203.0.113.050""#), field: "client_address", message: "must be an IPv4 or IPv6 address in canonical form"),
        Refusal(line: line(address: #""bastion-1.example.org""#), field: "client_address", message: "must be an IPv4 or IPv6 address in canonical form"),
        Refusal(
            line: line(address: "\"" + String(repeating: "1", count: 5000) + "\""), field: "client_address",
            message: "must be 1 to 4096 bytes of UTF-8, got 5000"),
        Refusal(line: line(address: "3405803826"), field: "client_address", message: "must be a string, got a number"),
        // A sign-in method is not a field of an aborted attempt: it never reached one.
        Refusal(
            line: line(extra: #","method":"password""#), field: "method",
            message: "is not a field of sign_in_aborted (its payload fields: reason, client_address)")
    ]

    @Test("a hostile line is refused naming the field, by both JSON paths", arguments: refusals)
    func jsonRefusal(_ refusal: Refusal) {
        do {
            let decoded = try EventJSON.decode(line: refusal.line)
            Issue.record("accepted: \(decoded.event)")
        } catch {
            #expect(error.field == refusal.field)
            #expect(error.message.hasPrefix(refusal.message), "\(error.message)")
        }
        let viaBytes: String = Array(refusal.line.utf8).withUnsafeBytes { raw in
            do throws(EventValidationError) { return "accepted: \(try EventJSON.decode(lineBytes: raw).event)" } catch { return error.description }
        }
        #expect(viaBytes.hasPrefix("field \"\(refusal.field)\": \(refusal.message)"), "\(viaBytes)")
    }

    @Test("a forgotten user's aborted attempt keeps its schema and reads its address as [erased]; one without an address stays without")
    func erasure() throws {
        let ref = UserRef(bytes: Array(repeating: 0x3C, count: 16))
        let event = Samples.event(.signInAborted(reason: .userChanged, clientAddress: "198.51.100.9"), user: "alice", session: nil)
        let erased = event.erasingPersonalData(ref: ref)
        #expect(erased.user == ref.literal)
        #expect(erased.payload == .signInAborted(reason: .userChanged, clientAddress: ClientAddress.erased))
        #expect(erased.type.schemaVersion(holding: erased.payload.fieldValues) == 2)
        #expect(event.hasPersonalFields)
        let bare = Samples.event(.signInAborted(reason: .userChanged), user: "alice", session: nil)
        #expect(!bare.hasPersonalFields)
        #expect(bare.erasingPersonalData(ref: ref).payload == .signInAborted(reason: .userChanged))
    }

    @Test("an app's own invalid address is refused by validate before it reaches a store")
    func validateRefusesBadAddresses() {
        for address in ["", "::ffff:192.0.2.1", "192.0.2.1\n", "fe80::1%eth0", "10.0.0.0/8"] {
            #expect(throws: EventValidationError.self, "\(address.debugDescription)") {
                try Samples.event(.signInAborted(reason: .refused, clientAddress: address), user: nil).validate()
            }
        }
        #expect(throws: Never.self) { try Samples.event(.signInAborted(reason: .refused, clientAddress: ClientAddress.erased)).validate() }
    }

    @Test("OCSF: a failed logon from the client's address, the reason as status_detail, no method")
    func ocsf() throws {
        let encoder = OCSFEncoder(product: .init(version: "9.9.9"))
        func line(_ payload: Payload) throws -> JSONValue {
            let record = Record(seq: 3, event: Samples.event(payload, user: nil, session: nil), previousHash: .zero, hash: .zero)
            var bytes: [UInt8] = []
            #expect(encoder.appendLine(record, to: &bytes))
            return try JSONValue.parse(String(decoding: bytes.dropLast(), as: UTF8.self))
        }
        let value = try line(.signInAborted(reason: .negotiationFailed, clientAddress: "2001:db8::7"))
        #expect(value["activity_id"] == .number("1") && value["status_id"] == .number("2"))
        #expect(value["status_detail"] == .string("NEGOTIATION_FAILED"))
        #expect(value["src_endpoint"]?["ip"] == .string("2001:db8::7"))
        #expect(value["auth_protocol_id"] == nil && value["logon_type_id"] == nil)
        #expect(value["unmapped"]?["reason"] == .string("negotiation_failed"))
        let erased = try line(.signInAborted(reason: .refused, clientAddress: ClientAddress.erased))
        #expect(erased["src_endpoint"]?["ip"] == nil, "an erased address is left out")
    }
}
