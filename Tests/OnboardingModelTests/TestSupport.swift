import Foundation
@_exported import TestSupport
@testable import OnboardingModel

// Shared helpers for the model tests: a seeded generator, random valid events, hex and byte
// surgery. Nothing here asserts; the test files do.

extension SplitMix64 {
    /// A value in `0..<bound` (modulo bias is irrelevant for test data).
    mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0)
        return Int(next() % UInt64(bound))
    }

    /// A value in `range`, computed without Swift's `random(in:)` so replays do not depend on the
    /// standard library's algorithm.
    mutating func int(in range: ClosedRange<Int>) -> Int {
        let width = UInt64(range.upperBound - range.lowerBound) &+ 1
        if width == 0 { return Int(truncatingIfNeeded: next()) } // the full Int range
        return range.lowerBound + Int(next() % width)
    }

    mutating func int64(in range: ClosedRange<Int64>) -> Int64 {
        let width = UInt64(bitPattern: range.upperBound &- range.lowerBound) &+ 1
        if width == 0 { return Int64(bitPattern: next()) }
        return range.lowerBound &+ Int64(bitPattern: next() % width)
    }

    /// True with probability `numerator / denominator`.
    mutating func chance(_ numerator: Int, in denominator: Int) -> Bool {
        below(denominator) < numerator
    }

    mutating func bool() -> Bool { next() & 1 == 1 }

    mutating func element<T>(of array: [T]) -> T { array[below(array.count)] }

    mutating func pick<E: WireEnum>(_ type: E.Type = E.self) -> E { element(of: E.allCases) }

    mutating func uuid() -> UUID { makeUUID(bytes: (0..<16).map { _ in UInt8(truncatingIfNeeded: next()) }) }
}

/// The seed of a randomised test: `ONBOARDING_TEST_SEED` (decimal or 0x-hex) when set, so a
/// failure printed in CI can be replayed locally, otherwise `fallback`.
func testSeed(fallback: UInt64) -> UInt64 {
    guard let text = ProcessInfo.processInfo.environment["ONBOARDING_TEST_SEED"] else { return fallback }
    if text.hasPrefix("0x"), let value = UInt64(text.dropFirst(2), radix: 16) { return value }
    return UInt64(text) ?? fallback
}

func makeUUID(bytes: [UInt8]) -> UUID {
    precondition(bytes.count == 16)
    let b = bytes
    return UUID(
        uuid: (
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
            b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]
        ))
}

func uuid(_ text: String) -> UUID {
    guard let value = UUID(uuidString: text) else { preconditionFailure("bad UUID literal \(text)") }
    return value
}

func timestamp(_ text: String) -> Timestamp {
    do { return try Timestamp(iso8601: text) } catch { preconditionFailure("bad time literal \(text): \(error)") }
}

func hex(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    for byte in bytes {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0xF)])
    }
    return String(decoding: out, as: UTF8.self)
}

func bytes(hex text: String) -> [UInt8] {
    let characters = Array(text.utf8)
    precondition(characters.count % 2 == 0, "odd hex length")
    func nibble(_ c: UInt8) -> UInt8 {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        default: preconditionFailure("not lowercase hex")
        }
    }
    return stride(from: 0, to: characters.count, by: 2).map { nibble(characters[$0]) << 4 | nibble(characters[$0 + 1]) }
}

/// Byte surgery on encoded records, for crafting records that pass the hash check but carry a
/// bad body (a forger who recomputes the hash).
enum RecordBytes {
    static let header = RecordCodec.headerByteCount // 65

    /// Recomputes bytes 1..<33 as the hash of bytes 33…end.
    static func rehashed(_ record: [UInt8]) -> [UInt8] {
        var copy = record
        let hash = Digest.hash(Array(record[33...]))
        copy.replaceSubrange(1..<33, with: hash.bytes)
        return copy
    }

    /// `record` with its body replaced and the hash recomputed.
    static func withBody(_ record: [UInt8], _ body: [UInt8]) -> [UInt8] {
        rehashed(Array(record[..<header]) + body)
    }

    static func body(_ record: [UInt8]) -> [UInt8] { Array(record[header...]) }

    static func hash(_ record: [UInt8]) -> Digest { Digest(bytes: Array(record[1..<33])) }
}

/// Random valid events: every type, every optional field present or absent, Unicode text of
/// every script and size up to the limits.
struct EventGenerator {
    var rng: SplitMix64

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    /// Pieces that text is built from: ASCII with JSON-significant characters, accents
    /// (precomposed and combining), emoji (with ZWJ, skin tone, flags), right-to-left scripts
    /// and marks, CJK, astral-plane characters and separators JSON writers often trip on.
    static let pieces: [String] = [
        "a", "Z", "0", "9", " ", "-", "_", ".", "@", "\"", "\\", "/", "{", "}", "[", "]", ":", ",", "'",
        "é", "ñ", "ü", "Å", "ç", "ß", "ø", "e\u{301}", "\u{301}", "Ł", "ő",
        "😀", "👩‍💻", "🇫🇷", "👍🏽", "🧑‍🤝‍🧑", "❤️",
        "שלום", "مرحبا", "\u{200F}", "\u{200E}", "\u{202E}", "עברית", "فارسی",
        "漢字", "日本語", "한국어", "中文", "ｱ",
        "𝄞", "𐍈", "\u{00A0}", "\u{2028}", "\u{2029}", "\u{FEFF}", "\u{FFFD}", "\u{200B}"
    ]

    static let deviceCharacters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:")

    /// Text of 1…`maximumBytes` UTF-8 bytes without control characters; sometimes exactly at the
    /// limit.
    mutating func text(maximumBytes: Int) -> String {
        let target: Int
        switch rng.below(10) {
        case 0: target = maximumBytes // exactly at the limit
        case 1: target = rng.int(in: 1...maximumBytes)
        case 2: target = 1
        default: target = rng.int(in: 1...min(40, maximumBytes))
        }
        var text = ""
        var count = 0
        while count < target {
            let piece = rng.element(of: Self.pieces)
            let size = piece.utf8.count
            if count + size > target {
                // Top up with ASCII so the length hits the target exactly.
                text += String(repeating: "x", count: target - count)
                count = target
            } else {
                text += piece
                count += size
            }
        }
        return text
    }

    mutating func optionalText(maximumBytes: Int = Limits.maximumTextBytes) -> String? {
        rng.chance(1, in: 3) ? nil : text(maximumBytes: maximumBytes)
    }

    /// Absent half the time; else IPv4, IPv6 at its longest, or the erased marker.
    mutating func clientAddress() -> String? {
        switch rng.below(8) {
        case 0, 1, 2, 3: return nil
        case 4, 5: return "\(rng.below(256)).\(rng.below(256)).\(rng.below(256)).\(rng.below(256))"
        case 6: return ClientAddress.canonical((0..<8).map { _ in String(rng.below(0x10000) | 0x1000, radix: 16) }.joined(separator: ":"))!
        default: return ClientAddress.erased
        }
    }

    mutating func device() -> String {
        let length = rng.chance(1, in: 10) ? Limits.maximumDeviceBytes : rng.int(in: 1...Limits.maximumDeviceBytes)
        return String((0..<length).map { _ in rng.element(of: Self.deviceCharacters) })
    }

    mutating func user() -> String? {
        switch rng.below(4) {
        case 0: return nil
        case 1: return "user\(rng.below(1000))@example.org"
        default: return text(maximumBytes: Limits.maximumUserBytes)
        }
    }

    mutating func instant() -> Timestamp {
        switch rng.below(5) {
        case 0: return rng.chance(1, in: 2) ? Timestamp.minimum : Timestamp.maximum
        case 1: return Timestamp(millisecondsSince1970: rng.int64(in: -86_400_000 * 365...86_400_000 * 365))
        default:
            return Timestamp(
                millisecondsSince1970: rng.int64(
                    in: Timestamp.minimum.millisecondsSince1970...Timestamp.maximum.millisecondsSince1970))
        }
    }

    /// A `log_imported` count: at its bounds a quarter of the time.
    mutating func importCount() -> Int {
        rng.chance(1, in: 4) ? rng.element(of: [0, Payload.maximumImportCount]) : rng.int(in: 0...100_000)
    }

    mutating func payload(of type: EventType) -> Payload {
        switch type {
        case .userAdded:
            return .userAdded(
                displayName: text(maximumBytes: Limits.maximumTextBytes), subtitle: optionalText(),
                imageRef: optionalText(), passcodePolicy: rng.pick(),
                passcodeMinLength: rng.chance(1, in: 4) ? rng.element(of: [1, 64]) : rng.int(in: 1...64))
        case .userProfileUpdated:
            return .userProfileUpdated(displayName: optionalText(), subtitle: optionalText(), imageRef: optionalText())
        case .userSelected: return .userSelected
        case .userRemoved: return .userRemoved(reason: rng.pick())
        case .passcodeSet: return .passcodeSet
        case .passcodeChanged: return .passcodeChanged
        case .passcodeResetStarted: return .passcodeResetStarted
        case .passcodeResetCompleted: return .passcodeResetCompleted
        case .biometricEnabled: return .biometricEnabled(kind: rng.pick())
        case .biometricDisabled: return .biometricDisabled
        case .signInStarted:
            return .signInStarted(method: rng.pick(), identifierKind: rng.chance(1, in: 2) ? nil : rng.pick(IdentifierKind.self))
        case .signInFailed: return .signInFailed(method: rng.pick(), reason: rng.pick(), clientAddress: clientAddress())
        case .signInThrottled: return .signInThrottled(method: rng.pick(), retryAfter: instant(), clientAddress: clientAddress())
        case .secondFactorRequired: return .secondFactorRequired(method: rng.pick())
        case .secondFactorFailed: return .secondFactorFailed(method: rng.pick(), clientAddress: clientAddress())
        case .secondFactorSucceeded: return .secondFactorSucceeded(method: rng.pick())
        case .signInSucceeded: return .signInSucceeded(method: rng.pick(), secondFactor: rng.bool(), clientAddress: clientAddress())
        case .signedOut: return .signedOut(reason: rng.pick())
        case .captchaPresented: return .captchaPresented(purpose: rng.pick())
        case .captchaFailed: return .captchaFailed
        case .captchaPassed: return .captchaPassed
        case .captchaAlternativesViewed: return .captchaAlternativesViewed
        case .passwordResetRequested: return .passwordResetRequested(route: rng.pick())
        case .temporaryPasswordSent: return .temporaryPasswordSent
        case .passwordChanged: return .passwordChanged(forced: rng.bool())
        case .accountCreationStarted: return .accountCreationStarted
        case .fieldValidated: return .fieldValidated(field: rng.pick(), result: rng.pick())
        case .accountCreationFailed:
            return .accountCreationFailed(field: rng.chance(1, in: 3) ? nil : rng.pick(FormField.self), reason: rng.pick())
        case .accountCreated: return .accountCreated
        case .lockoutCleared: return .lockoutCleared(reason: rng.pick())
        case .userForgotten: return .userForgotten
        case .fieldEdited:
            return .fieldEdited(field: rng.pick(), filled: rng.bool(), valid: rng.chance(1, in: 3) ? nil : rng.bool())
        case .accountCreationSubmitted: return .accountCreationSubmitted
        case .passwordResetStarted: return .passwordResetStarted
        case .passwordResetFailed: return .passwordResetFailed(reason: rng.pick())
        case .userSwitchOpened: return .userSwitchOpened
        case .userSwitchClosed: return .userSwitchClosed
        case .signInOptionsShown:
            // 1…all options, distinct, in a random order; a platform or none.
            var options: [SignInOption] = []
            for _ in 0..<rng.int(in: 1...SignInOption.allCases.count) {
                let option: SignInOption = rng.pick()
                if !options.contains(option) { options.append(option) }
            }
            return .signInOptionsShown(options: options, platform: rng.chance(1, in: 3) ? nil : rng.pick(DevicePlatform.self))
        case .signInAborted: return .signInAborted(reason: rng.pick(), clientAddress: clientAddress())
        case .accountLocked:
            return .accountLocked(source: rng.pick(), until: rng.chance(1, in: 3) ? nil : instant(), clientAddress: clientAddress())
        case .logImported:
            return .logImported(
                format: rng.pick(), events: importCount(), appended: importCount(), skipped: importCount(),
                skippedKinds: optionalText(maximumBytes: 512), firstAt: instant(), lastAt: instant())
        }
    }

    mutating func event(of type: EventType) -> Event {
        // user_forgotten names its user by the pseudonym literal only; log_imported names none.
        let user =
            switch type {
            case .userForgotten: UserRef(bytes: (0..<16).map { _ in UInt8(truncatingIfNeeded: rng.next()) }).literal
            case .logImported: nil as String?
            default: user()
            }
        return Event(
            id: rng.uuid(), device: device(), at: instant(), user: user,
            flow: rng.chance(1, in: 3) ? nil : rng.uuid(), payload: payload(of: type))
    }

    mutating func event() -> Event { event(of: rng.pick()) }
}

/// Fixed events, one per type, for golden and corpus tests.
enum Samples {
    static let id = uuid("0f8fad5b-d9cb-469f-a165-70867728950e")
    static let session = uuid("7c9e6679-7425-40de-944b-e07fc1f90ae7")
    static let at = timestamp("2026-11-29T16:00:00.123Z")

    static func event(
        _ payload: Payload, user: String? = "alice", session: UUID? = Samples.session,
        device: String = "kiosk-7"
    ) -> Event {
        Event(id: id, device: device, at: at, user: user, flow: session, payload: payload)
    }
}
