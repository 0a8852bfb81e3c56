import Foundation
import Testing
@testable import OnboardingModel

@Suite("RecordCodec: the binary record")
struct RecordCodecTests {
    // MARK: Property: every valid event round trips

    @Test("thousands of random valid events of every type round trip with seq and hash chain")
    func randomEventsRoundTrip() throws {
        let seed = testSeed(fallback: 0x0B0A_4D1A_6E5E_ED01)
        var generator = EventGenerator(seed: seed)
        let count = 200 * EventType.allCases.count
        var previous = Digest.zero
        var perType: [EventType: Int] = [:]
        var sawMaximumText = false, sawNullUser = false, sawNullSession = false, sawAbsentOptional = false
        for iteration in 0..<count {
            let type = EventType.allCases[iteration % EventType.allCases.count]
            let event = generator.event(of: type)
            let seq = UInt64(iteration + 1)
            let context = "seed \(seed) (replay with ONBOARDING_TEST_SEED=\(seed)), iteration \(iteration), \(type.rawValue)"
            do {
                try event.validate()
            } catch {
                Issue.record("\(context): the generator made an invalid event: \(error)")
                return
            }
            let bytes = RecordCodec.encode(event, seq: seq, previousHash: previous)
            let record: Record
            do {
                record = try RecordCodec.decode(bytes, expectedSeq: seq)
            } catch {
                Issue.record("\(context): decode refused its own encoding: \(error)")
                return
            }
            let body = RecordCodec.body(of: event, seq: seq)
            guard record.event == event, record.seq == seq, record.previousHash == previous,
                record.hash == Digest.hash(Array(bytes[33...])), Array(bytes[1..<33]) == record.hash.bytes,
                bytes[0] == RecordCodec.formatVersion, Array(bytes[33..<65]) == previous.bytes,
                Array(bytes[65...]) == body,
                // Re-encoding the decoded event gives the same bytes, so text survives byte for
                // byte (String == alone would accept a differently normalised string).
                RecordCodec.encode(record.event, seq: seq, previousHash: previous) == bytes
            else {
                Issue.record("\(context): round trip changed the record: \(event) → \(record)")
                return
            }
            // The same bytes also decode without an expected seq, and through the raw-buffer API.
            let loose = try bytes.withUnsafeBytes { buffer in try RecordCodec.decode(buffer) }
            guard loose == record else {
                Issue.record("\(context): raw-buffer decode differs")
                return
            }
            // One random byte flipped anywhere is always refused.
            var damaged = bytes
            let position = generator.rng.below(bytes.count)
            damaged[position] ^= UInt8(generator.rng.int(in: 1...255))
            if (try? RecordCodec.decode(damaged, expectedSeq: seq)) != nil {
                Issue.record("\(context): flipping byte \(position) of \(bytes.count) went unnoticed")
                return
            }
            previous = record.hash
            perType[type, default: 0] += 1
            let texts = event.payload.fieldValues.compactMap { value -> String? in
                if case .text(let text)? = value { return text }
                return nil
            }
            sawMaximumText = sawMaximumText || texts.contains { $0.utf8.count == Limits.maximumTextBytes }
            sawNullUser = sawNullUser || event.user == nil
            sawNullSession = sawNullSession || event.flow == nil
            sawAbsentOptional = sawAbsentOptional || event.payload.fieldValues.contains { $0 == nil }
        }
        #expect(perType.count == EventType.allCases.count)
        #expect(perType.values.allSatisfy { $0 == count / EventType.allCases.count })
        #expect(sawMaximumText && sawNullUser && sawNullSession && sawAbsentOptional, "seed \(seed): generator coverage")
    }

    @Test("the fast body decoder agrees with the reference decoder, and refuses whatever it refuses")
    func fastDecoderAgreesWithReference() {
        let seed = testSeed(fallback: 0x0FA5_7DEC_0DE5_0001)
        var generator = EventGenerator(seed: seed)
        var fastAccepted = 0, damagedAccepted = 0, deferred = 0
        func decodeBoth(_ body: [UInt8]) -> (fast: (UInt64, Event)?, reference: (UInt64, Event)?) {
            body.withUnsafeBytes { buffer in
                (RecordCodec.fastDecodeBody(buffer, users: TestKeys.directory), try? RecordCodec.referenceDecodeBody(buffer, users: TestKeys.directory))
            }
        }
        for iteration in 0..<3_000 {
            let type = EventType.allCases[iteration % EventType.allCases.count]
            let event = generator.event(of: type)
            let seq = UInt64(generator.rng.next() >> 1)
            let context = "seed \(seed), iteration \(iteration), \(type.rawValue)"
            let body = RecordCodec.body(of: event, seq: seq)
            let valid = decodeBoth(body)
            if (event.user != nil && event.hasPersonalFields) || event.payload.clientAddress != nil {
                // Sealed personal fields, or a client address in the clear: the fast path leaves them to the reference decoder.
                guard valid.fast == nil, valid.reference.map({ $0.0 == seq && $0.1 == event }) == true else {
                    Issue.record("\(context): a sealed event was not left to the reference decoder, or it misread it")
                    return
                }
                deferred += 1
                continue
            }
            guard let fast = valid.fast, fast.0 == seq, fast.1 == event, valid.reference.map({ $0.0 == seq && $0.1 == event }) == true else {
                Issue.record("\(context): the decoders disagree on a valid event")
                return
            }
            fastAccepted += 1
            // A damaged body: whatever the fast path accepts, the reference decoder accepts as the same event.
            var damaged = body
            if generator.rng.bool() {
                damaged[generator.rng.below(body.count)] = UInt8(truncatingIfNeeded: generator.rng.next())
            } else {
                damaged.removeLast(generator.rng.int(in: 1...body.count))
            }
            let both = decodeBoth(damaged)
            if let fast = both.fast {
                guard let reference = both.reference, reference.0 == fast.0, reference.1 == fast.1 else {
                    Issue.record("\(context): the fast decoder accepted a body the reference decoder reads otherwise: \(damaged)")
                    return
                }
                damagedAccepted += 1
            }
        }
        #expect(fastAccepted + deferred == 3_000)
        #expect(deferred > 0 && fastAccepted > 2_500)
        #expect(damagedAccepted > 0, "seed \(seed): some damage (in ids, times, choices) still decodes")
    }

    @Test("any seq from 1 to UInt64.max is carried exactly (seq 0 is refused: RecordCodecHostileBytesTests)")
    func extremeSeqs() throws {
        let event = Samples.event(.passcodeSet)
        var rng = SplitMix64(seed: testSeed(fallback: 99))
        let fixed: [UInt64] = [1, 2, 255, 256, 65_536, UInt64(UInt32.max) + 1, UInt64.max - 1, UInt64.max]
        for seq in fixed + (0..<100).map({ _ in max(1, rng.next()) }) {
            let record = try RecordCodec.decode(RecordCodec.encode(event, seq: seq, previousHash: .zero), expectedSeq: seq)
            #expect(record.seq == seq)
            #expect(record.event == event)
        }
    }

    // MARK: Golden bytes

    @Test("golden: the exact bytes of one user_added record")
    func goldenRecord() throws {
        let event = Samples.event(
            .userAdded(
                displayName: "Zoë 😀", subtitle: nil, imageRef: "img/1",
                passcodePolicy: .alphanumeric, passcodeMinLength: 6))
        let previous = Digest(bytes: Array(0..<32))
        // Format 2 with the test keys (TestKeys): pseudonym key 32 × 0x5a; the user's key is
        // BLAKE2b-256("test-user-key" ‖ pseudonym); the nonce is keyed BLAKE2b-192 under the user's
        // key of "onboarding-nonce-v2" ‖ id ‖ seq (u64 BE) ‖ plaintext. Computed independently
        // (Python hashlib and a pure-Python XSalsa20-Poly1305 checked against libsodium).
        let expected = [
            "02", // record format version
            "1e98279c121095c2ca2a0da88b4d776b24290204971ed6c81aa177744435c16a", // BLAKE2b-256(previous ‖ body)
            "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", // previous hash
            "0001", // type code: user_added
            "01", // schema version
            "0000000000000007", // seq, big-endian
            "0f8fad5bd9cb469fa16570867728950e", // id, RFC 4122 byte order
            "000001a22808e07b", // at: 1795968000123 ms
            "07", "6b696f736b2d37", // device "kiosk-7"
            "01", "0a6aa75016284b39480657ac40453740", // user present: pseudonym of "alice"
            "01", "7c9e6679742540de944be07fc1f90ae7", // session present
            "01", "003c", // sealed personal fields: 60 bytes
            "ce9ad35bf05f7257996c82e40f94e0c8b691956b05093fa6", //   nonce (24)
            "272481e50909b8a06e89c9277c82d2d1", //   Poly1305 tag (16)
            "1aef1b6f57d858209e6032532f3a4673c5dc9579", //   secretbox of the 20 bytes below
            "01", // passcode_policy: alphanumeric
            "00000006" // passcode_min_length: 6
        ].joined()
        // The sealed plaintext: display_name "Zoë 😀", subtitle absent, image_ref "img/1".
        let plaintext = "0009" + "5a6fc3ab20f09f9880" + "00" + "01" + "0005" + "696d672f31"
        let ref = UserRef(user: "alice", pseudonymKey: TestKeys.pseudonymKey)
        #expect(ref.hex == "0a6aa75016284b39480657ac40453740")
        let sealed = bytes(hex: expected).suffix(5 + 60)
        #expect(
            sealed.withUnsafeBytes { PersonalData.open(UnsafeRawBufferPointer(rebasing: $0[..<60]), key: TestKeys.key(for: ref)) }.map { hex($0) } == plaintext)
        let encoded = RecordCodec.encode(event, seq: 7, previousHash: previous)
        #expect(hex(encoded) == expected)
        #expect(!hex(encoded).contains("616c696365"), "the readable user id is not in the record")
        let record = try RecordCodec.decode(bytes(hex: expected), expectedSeq: 7)
        #expect(record.event == event)
        #expect(record.previousHash == previous)
        #expect(record.hash.hex == "1e98279c121095c2ca2a0da88b4d776b24290204971ed6c81aa177744435c16a")
        // Without the user's key (forgotten) the same bytes read as the pseudonym, erased.
        let forgotten = try bytes(hex: expected).withUnsafeBytes { buffer in
            try RecordCodec.decode(buffer, expectedSeq: 7, users: UserDirectory(pseudonymKey: TestKeys.pseudonymKey))
        }
        #expect(forgotten.event.user == ref.literal)
        #expect(
            forgotten.event.payload
                == .userAdded(
                    displayName: "[erased]", subtitle: nil, imageRef: nil,
                    passcodePolicy: .alphanumeric, passcodeMinLength: 6))
        #expect(forgotten.hash == record.hash)
    }

    static let goldenBodyCases: [(Payload, UInt64, String)] = [
        // sign_in_throttled: choice + instant before 1970, no user, no session.
        (
            .signInThrottled(method: .google, retryAfter: Timestamp(millisecondsSince1970: -1000)), 1,
            "000d 01 0000000000000001 | 04 fffffffffffffc18"
        ),
        // sign_in_succeeded: flag, largest seq.
        (.signInSucceeded(method: .biometric, secondFactor: true), UInt64.max, "0011 01 ffffffffffffffff | 02 01"),
        (.signInSucceeded(method: .password, secondFactor: false), 2, "0011 01 0000000000000002 | 00 00"),
        // account_creation_failed: optional choice absent, then present.
        (.accountCreationFailed(field: nil, reason: .captchaFailed), 3, "001c 01 0000000000000003 | 00 04"),
        (.accountCreationFailed(field: .email, reason: .serverError), 3, "001c 01 0000000000000003 | 01 03 06"),
        // user_profile_updated with every optional absent.
        (.userProfileUpdated(displayName: nil, subtitle: nil, imageRef: nil), 4, "0002 01 0000000000000004 | 00 00 00"),
        // No payload at all.
        (.captchaPassed, 5, "0015 01 0000000000000005 |"),
        (.lockoutCleared(reason: .passcodeReset), 6, "001e 01 0000000000000006 | 02"),
        // Schema 2 types: written at schema 1 while they use nothing schema 2 added (byte for byte
        // what the builds before schema 2 wrote), at schema 2 otherwise.
        (.signInStarted(method: .password), 7, "000b 01 0000000000000007 | 00"),
        (.signInStarted(method: .password, identifierKind: .email), 7, "000b 02 0000000000000007 | 00 01 01"),
        (.fieldValidated(field: .username, result: .usernameInUse), 8, "001b 01 0000000000000008 | 00 03"),
        (.fieldValidated(field: .email, result: .emailInUse), 8, "001b 02 0000000000000008 | 03 07"),
        (.fieldValidated(field: .phone, result: .passwordsMatch), 8, "001b 02 0000000000000008 | 05 00"),
        (.accountCreationFailed(field: nil, reason: .emailInUse), 9, "001c 02 0000000000000009 | 00 07"),
        (.accountCreationFailed(field: .phone, reason: .serverError), 9, "001c 02 0000000000000009 | 01 05 06"),
        // The types schema 2 of the vocabulary added: an optional flag absent, then present.
        (.fieldEdited(field: .passcode, filled: true, valid: nil), 10, "0020 01 000000000000000a | 06 01 00"),
        (.fieldEdited(field: .secondFactorCode, filled: false, valid: false), 10, "0020 01 000000000000000a | 07 00 01 00"),
        (.accountCreationSubmitted, 11, "0021 01 000000000000000b |"),
        (.passwordResetStarted, 12, "0022 01 000000000000000c |"),
        (.passwordResetFailed(reason: .rateLimited), 13, "0023 01 000000000000000d | 03"),
        // Schema 2 of the sign-in types: the client address (in the clear here, with no user).
        (.signInFailed(method: .password, reason: .unknownUser), 14, "000c 01 000000000000000e | 00 02"),
        (
            .signInFailed(method: .password, reason: .unknownUser, clientAddress: "192.0.2.7"), 14,
            "000c 02 000000000000000e | 00 02 01 0009 3139322e302e322e37"
        ),
        (.secondFactorFailed(method: .sms, clientAddress: "2001:db8::1"), 15, "000f 02 000000000000000f | 01 01 000b 323030313a6462383a3a31"),
        // sign_in_aborted: the reason alone at schema 1, the address appended at schema 2.
        (.signInAborted(reason: .noIdentification), 16, "0027 01 0000000000000010 | 04"),
        (
            .signInAborted(reason: .closedBeforeAuthentication, clientAddress: "192.0.2.7"), 16,
            "0027 02 0000000000000010 | 06 01 0009 3139322e302e322e37"
        )
    ]

    @Test("golden: body bytes of events with every other field kind", arguments: goldenBodyCases)
    func goldenBodies(payload: Payload, seq: UInt64, layout: String) throws {
        // "|" marks where the envelope goes: id, at, device "kiosk-7", user absent, session absent.
        let envelope = "0f8fad5bd9cb469fa16570867728950e 000001a22808e07b 07 6b696f736b2d37 00 00"
        let expected = layout.replacingOccurrences(of: "|", with: envelope).replacingOccurrences(of: " ", with: "")
        let event = Samples.event(payload, user: nil, session: nil)
        #expect(hex(RecordCodec.body(of: event, seq: seq)) == expected)
        let record = try RecordCodec.decode(RecordCodec.encode(event, seq: seq, previousHash: .zero), expectedSeq: seq)
        #expect(record.event == event)
    }

    @Test("the smallest record is 104 bytes: header, 36 fixed body bytes, a 1-byte device, two absent markers")
    func smallestRecord() throws {
        let event = Samples.event(.captchaPassed, user: nil, session: nil, device: "k")
        let record = RecordCodec.encode(event, seq: 1, previousHash: .zero)
        #expect(record.count == 104)
        #expect(RecordCodec.headerByteCount == 65)
        #expect(try RecordCodec.decode(record, expectedSeq: 1).event == event)
        // Each type's fixed payload size, with user and session absent and a 7-byte device.
        let payloadSizes: [EventType: Int] = [
            .signInThrottled: 9, .signInSucceeded: 2, .passwordChanged: 1,
            .fieldValidated: 2, .userRemoved: 1, .accountCreated: 0
        ]
        for (type, size) in payloadSizes {
            var generator = EventGenerator(seed: 5)
            var payload = generator.payload(of: type)
            // Schema 1: no client address.
            if case let .signInThrottled(method, retryAfter, _) = payload { payload = .signInThrottled(method: method, retryAfter: retryAfter) }
            if case let .signInSucceeded(method, secondFactor, _) = payload { payload = .signInSucceeded(method: method, secondFactor: secondFactor) }
            let body = RecordCodec.body(of: Samples.event(payload, user: nil, session: nil), seq: 1)
            #expect(body.count == 36 + 7 + 2 + size, "\(type.rawValue)")
        }
    }

    @Test("the hash covers the previous hash and the seq")
    func hashCoversLinkAndSeq() {
        let event = Samples.event(.signedOut(reason: .revoked))
        let a = RecordCodec.encode(event, seq: 1, previousHash: .zero)
        let b = RecordCodec.encode(event, seq: 1, previousHash: Digest.hash([1]))
        let c = RecordCodec.encode(event, seq: 2, previousHash: .zero)
        #expect(Array(a[65...]) == Array(b[65...]))
        #expect(RecordBytes.hash(a) != RecordBytes.hash(b))
        #expect(Array(a[65...]) != Array(c[65...]))
        #expect(RecordBytes.hash(a) != RecordBytes.hash(c))
        #expect(RecordCodec.encode(event, seq: 1, previousHash: .zero) == a, "encoding is deterministic")
    }

    // MARK: Refusals

    /// A small event with no user and no session, so body offsets are easy to name:
    /// 0 type, 2 schema, 3 seq, 11 id, 27 at, 35 device length, 36 device, 43 user presence,
    /// 44 session presence, 45 payload.
    static func plain(_ payload: Payload, seq: UInt64 = 7) -> [UInt8] {
        RecordCodec.encode(Samples.event(payload, user: nil, session: nil), seq: seq, previousHash: Digest.hash([42]))
    }

    static func refusal(_ bytes: [UInt8], expectedSeq: UInt64? = nil) -> String? {
        do {
            let record = try RecordCodec.decode(bytes, expectedSeq: expectedSeq)
            return "accepted: \(record)"
        } catch {
            return error.message
        }
    }

    /// Edits the body of `record` and fixes up the hash, as a forger would.
    static func forged(_ record: [UInt8], _ edit: (inout [UInt8]) -> Void) -> [UInt8] {
        var body = RecordBytes.body(record)
        edit(&body)
        return RecordBytes.withBody(record, body)
    }

    @Test("records shorter than the header, or with only a header, are refused", arguments: [0, 1, 32, 33, 64, 65])
    func tooShort(length: Int) {
        let record = Self.plain(.captchaPassed)
        #expect(Self.refusal(Array(record.prefix(length))) == "record is \(length) bytes, shorter than its 65-byte header")
    }

    @Test("every truncation is refused; a re-hashed truncation says where it is truncated")
    func truncation() {
        let records = [
            Self.plain(.captchaPassed),
            RecordCodec.encode(
                Samples.event(
                    .userAdded(
                        displayName: "Zoë 😀", subtitle: "שלום", imageRef: nil,
                        passcodePolicy: .numeric, passcodeMinLength: 4)),
                seq: 1, previousHash: .zero),
            Self.plain(.signInThrottled(method: .apple, retryAfter: Samples.at))
        ]
        for record in records {
            for length in 0..<record.count {
                let prefix = Array(record.prefix(length))
                let message = Self.refusal(prefix) ?? ""
                if length <= 65 {
                    #expect(message.hasPrefix("record is \(length) bytes, shorter"), "length \(length)")
                } else {
                    #expect(message == "hash does not match the record's bytes (the record was modified)", "length \(length)")
                    let rehashed = Self.refusal(RecordBytes.rehashed(prefix)) ?? ""
                    #expect(rehashed.hasPrefix("record is truncated in "), "length \(length): \(rehashed)")
                }
            }
        }
    }

    @Test("a flipped bit or byte anywhere in a record is refused", arguments: EventType.allCases)
    func flippedBytesAnywhere(type: EventType) {
        var generator = EventGenerator(seed: UInt64(type.code))
        // Keep records small so every position can be tried with several masks.
        // `user_forgotten` names its user by the pseudonym literal, or the record is invalid;
        // `log_imported` names none.
        var event = Samples.event(
            generator.payload(of: type),
            user: type == .userForgotten
                ? UserRef(bytes: [UInt8](repeating: 0xAB, count: 16)).literal : type == .logImported ? nil : "alice")
        if case .userAdded(_, _, _, let policy, let length) = event.payload {
            event.payload = .userAdded(displayName: "Ana", subtitle: "x", imageRef: nil, passcodePolicy: policy, passcodeMinLength: length)
        } else if case .userProfileUpdated = event.payload {
            event.payload = .userProfileUpdated(displayName: "Ana", subtitle: nil, imageRef: "i")
        }
        let record = RecordCodec.encode(event, seq: 12, previousHash: Digest.hash([7]))
        #expect((try? RecordCodec.decode(record, expectedSeq: 12)) != nil)
        for position in record.indices {
            for mask: UInt8 in [0x01, 0x80, 0xFF] {
                var damaged = record
                damaged[position] ^= mask
                let message = Self.refusal(damaged, expectedSeq: 12)
                if position == 0 {
                    #expect(message == "record format version \(2 ^ mask) is not supported (this build reads 2)")
                } else {
                    #expect(
                        message == "hash does not match the record's bytes (the record was modified)",
                        "\(type.rawValue) byte \(position) ^ \(mask)")
                }
            }
        }
    }

    @Test("a flipped byte inside a 4096-byte text is refused")
    func flippedByteInLargeRecord() {
        let unit = "漢字😀e\u{301}" // 13 bytes
        let long = String(repeating: unit, count: 4096 / 13) + String(repeating: "x", count: 4096 % 13)
        #expect(long.utf8.count == 4096)
        let record = RecordCodec.encode(
            Samples.event(
                .userAdded(
                    displayName: long, subtitle: long, imageRef: long,
                    passcodePolicy: .numeric, passcodeMinLength: 64)),
            seq: 1, previousHash: .zero)
        #expect((try? RecordCodec.decode(record, expectedSeq: 1))?.event.payload.fieldValues.first == .text(long))
        var rng = SplitMix64(seed: testSeed(fallback: 4096))
        for _ in 0..<500 {
            var damaged = record
            let position = rng.int(in: 1...record.count - 1)
            damaged[position] ^= UInt8(rng.int(in: 1...255))
            #expect(Self.refusal(damaged) == "hash does not match the record's bytes (the record was modified)", "byte \(position)")
        }
    }

    @Test("an unsupported record format byte is refused before anything else", arguments: [UInt8(0), 1, 3, 0x7F, 0xFF])
    func badFormatByte(format: UInt8) {
        var record = Self.plain(.captchaPassed)
        record[0] = format
        // Format 1 too: only a store's migration reads it (decodeLegacy).
        #expect(Self.refusal(record) == "record format version \(format) is not supported (this build reads 2)")
    }

    @Test("an unknown type code is refused even with a valid hash", arguments: [UInt16(0), 42, 0x0100, 0xFFFF])
    func unknownTypeCode(code: UInt16) {
        let record = Self.forged(Self.plain(.captchaPassed)) { body in
            body[0] = UInt8(code >> 8)
            body[1] = UInt8(code & 0xFF)
        }
        #expect(Self.refusal(record) == "unknown event type code \(code)")
    }

    @Test("an unknown schema version is refused rather than misread", arguments: [UInt8(0), 2, 0xFF])
    func unknownSchemaVersion(schema: UInt8) {
        let record = Self.forged(Self.plain(.signedOut(reason: .user))) { $0[2] = schema }
        #expect(Self.refusal(record) == "signed_out schema version \(schema) is not supported (this build reads 1)")
    }

    @Test("a schema past a type's newest is refused, naming the versions this build reads", arguments: [UInt8(0), 3, 0xFF])
    func unknownSchemaOfATypeWithTwo(schema: UInt8) {
        let record = Self.forged(Self.plain(.signInStarted(method: .passcode, identifierKind: .phone))) { $0[2] = schema }
        #expect(Self.refusal(record) == "sign_in_started schema version \(schema) is not supported (this build reads 1…2)")
    }

    @Test("a record at schema 1 holds only schema 1's choice values; one at schema 2 must need it")
    func schemasHoldOnlyTheirOwnValues() {
        // A value schema 2 added, in a record that says schema 1: refused as an unknown code.
        let newer = Self.forged(Self.plain(.fieldValidated(field: .username, result: .emailInUse))) { $0[2] = 1 }
        #expect(Self.refusal(newer) == "field_validated.result has unknown code 7")
        let newerField = Self.forged(Self.plain(.accountCreationFailed(field: .passcode, reason: .serverError))) { $0[2] = 1 }
        #expect(Self.refusal(newerField) == "account_creation_failed.field has unknown code 6")
        // Schema 2 bytes of a payload schema 1 holds: not the canonical form, so refused.
        let widened = Self.forged(Self.plain(.signInStarted(method: .biometric))) { body in
            body[2] = 2
            body.append(0) // identifier_kind absent
        }
        #expect(
            Self.refusal(widened)
                == "sign_in_started is written at schema version 2 but holds nothing an older schema cannot; a record is written at the lowest schema that holds its values"
        )
        let relabelled = Self.forged(Self.plain(.fieldValidated(field: .email, result: .usernameAvailable))) { $0[2] = 2 }
        #expect(Self.refusal(relabelled)?.hasPrefix("field_validated is written at schema version 2") == true)
        // And a schema 1 record of a type that has a schema 2 reads as it always did.
        let old = Self.plain(.signInStarted(method: .passcode))
        #expect(old[RecordCodec.headerByteCount + 2] == 1)
        #expect((try? RecordCodec.decode(old))?.event.payload == .signInStarted(method: .passcode, identifierKind: nil))
    }

    @Test("trailing bytes after the payload are refused")
    func trailingBytes() {
        let record = Self.plain(.signedOut(reason: .user))
        #expect(Self.refusal(record + [0]) == "hash does not match the record's bytes (the record was modified)")
        #expect(Self.refusal(Self.forged(record) { $0.append(0) }) == "1 unexpected bytes after the payload")
        #expect(Self.refusal(Self.forged(record) { $0 += [1, 2, 3] }) == "3 unexpected bytes after the payload")
        // Relabelling a signed_out record as user_selected (no payload) leaves its reason byte over.
        #expect(
            Self.refusal(Self.forged(record) { $0[1] = UInt8(EventType.userSelected.code) })
                == "1 unexpected bytes after the payload")
    }

    @Test("a seq different from where the record is stored is refused")
    func expectedSeqMismatch() throws {
        let record = Self.plain(.captchaFailed, seq: 7)
        #expect(try RecordCodec.decode(record, expectedSeq: 7).seq == 7)
        #expect(try RecordCodec.decode(record).seq == 7)
        #expect(Self.refusal(record, expectedSeq: 8) == "record says seq 7 but is stored at seq 8 (records were moved)")
        #expect(Self.refusal(record, expectedSeq: 6) == "record says seq 7 but is stored at seq 6 (records were moved)")
        #expect(Self.refusal(record, expectedSeq: 0) == "record says seq 7 but is stored at seq 0 (records were moved)")
    }

    @Test("out-of-range codes, flags, presence bytes and counts are refused")
    func badFieldBytes() {
        let signedOut = Self.plain(.signedOut(reason: .user))
        #expect(Self.refusal(Self.forged(signedOut) { $0[45] = 3 }) == "signed_out.reason has unknown code 3")
        #expect(Self.refusal(Self.forged(signedOut) { $0[45] = 0xFF }) == "signed_out.reason has unknown code 255")
        #expect(Self.refusal(Self.forged(signedOut) { $0[43] = 2 }) == "presence byte of user is 2, expected 0 or 1")
        #expect(Self.refusal(Self.forged(signedOut) { $0[44] = 0xFF }) == "presence byte of session is 255, expected 0 or 1")

        let succeeded = Self.plain(.signInSucceeded(method: .password, secondFactor: true))
        #expect(Self.refusal(Self.forged(succeeded) { $0[46] = 2 }) == "sign_in_succeeded.second_factor flag byte is 2")
        #expect(Self.refusal(Self.forged(succeeded) { $0[45] = 6 }) == "sign_in_succeeded.method has unknown code 6")

        let failed = Self.plain(.accountCreationFailed(field: nil, reason: .serverError))
        #expect(Self.refusal(Self.forged(failed) { $0[45] = 2 }) == "presence byte of field is 2, expected 0 or 1")
        #expect(Self.refusal(Self.forged(failed) { $0[46] = 7 }) == "account_creation_failed.reason has unknown code 7")

        let added = Self.plain(
            .userAdded(
                displayName: "Ana", subtitle: nil, imageRef: nil,
                passcodePolicy: .numeric, passcodeMinLength: 6))
        for (count, bytes) in [(0, [0, 0, 0, 0]), (65, [0, 0, 0, 0x41]), (4_294_967_295, [0xFF, 0xFF, 0xFF, 0xFF])] as [(Int, [UInt8])] {
            let forged = Self.forged(added) { $0.replaceSubrange($0.count - 4..<$0.count, with: bytes) }
            #expect(Self.refusal(forged) == "user_added.passcode_min_length is \(count), outside 1...64")
        }
        #expect(Self.refusal(Self.forged(added) { $0[$0.count - 5] = 2 }) == "user_added.passcode_policy has unknown code 2")
    }

    @Test("stored text that is not valid UTF-8 or breaks the event rules is refused")
    func badStoredText() {
        let added = Self.plain(
            .userAdded(
                displayName: "Ana", subtitle: nil, imageRef: nil,
                passcodePolicy: .numeric, passcodeMinLength: 6))
        // display_name: length at 45…46, text at 47…49.
        #expect(Self.refusal(Self.forged(added) { $0[47] = 0xFF }) == "display_name is not valid UTF-8")
        #expect(
            Self.refusal(Self.forged(added) { $0[48] = 0x0A })
                == "stored event is invalid: field \"display_name\": must not contain control characters")
        #expect(Self.refusal(Self.forged(added) { $0[36] = 0xC3 }) == "device is not valid UTF-8")
        #expect(
            Self.refusal(Self.forged(added) { $0[36] = 0x20 })
                == "stored event is invalid: field \"device\": may only contain letters, digits and - _ . : (got \" iosk-7\")")
        // at = Int64.max lies past year 9999.
        #expect(
            Self.refusal(Self.forged(added) { $0.replaceSubrange(27..<35, with: [0x7F] + Array(repeating: 0xFF, count: 7)) })
                == "stored event is invalid: field \"at\": time must lie between years 0001 and 9999")
    }

    // MARK: Links

    @Test("links(of:) reads the hash and previous hash without decoding the body")
    func links() throws {
        let previous = Digest.hash(Array("previous".utf8))
        let record = RecordCodec.encode(Samples.event(.accountCreated), seq: 3, previousHash: previous)
        let links = try record.withUnsafeBytes { buffer in try RecordCodec.links(of: buffer) }
        #expect(links.previous == previous)
        #expect(links.hash == RecordBytes.hash(record))
        #expect(links.hash == (try RecordCodec.decode(record)).hash)

        let damagedHeaders: [[UInt8]] = [Array(record.prefix(65)), [1] + Array(record.dropFirst()), [3] + Array(record.dropFirst()), []]
        for damaged in damagedHeaders {
            let error = #expect(throws: RecordDecodingError.self) {
                try damaged.withUnsafeBytes { buffer in try RecordCodec.links(of: buffer) }
            }
            #expect(error?.description == "record header is damaged")
        }
    }
}

@Suite("UserRef: pseudonym order")
struct UserRefOrderTests {
    @Test("refs sort in the byte order LMDB keeps by_user entries in, first differing byte deciding")
    func orderIsByteOrder() {
        var rng = SystemRandomNumberGenerator()
        var refs: [[UInt8]] = (0..<500).map { _ in (0..<UserRef.byteCount).map { _ in UInt8.random(in: 0...255, using: &rng) } }
        // Refs equal up to a late byte, and differing only in the second word.
        refs.append([UInt8](repeating: 1, count: 15) + [2])
        refs.append([UInt8](repeating: 1, count: 15) + [1])
        refs.append([UInt8](repeating: 1, count: 8) + [0] + [UInt8](repeating: 9, count: 7))
        let sorted = refs.map { UserRef(bytes: $0) }.sorted().map(\.bytes)
        #expect(sorted == refs.sorted { $0.lexicographicallyPrecedes($1) })
        #expect(!(UserRef(bytes: refs[0]) < UserRef(bytes: refs[0])))
    }
}
