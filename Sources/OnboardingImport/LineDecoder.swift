import Foundation
import OnboardingModel

/// What the import makes of one line of its input.
enum LineDecoding {
    case event(EventJSON.Decoded)
    /// A line of a foreign log that is not an event, by kind (counted, never fatal).
    case skipped(String)
    /// A line that should hold an event and cannot: the import stops before its first commit.
    case invalid(String)
    /// What a line of an sshd log gave besides one event or one skip: several events (its own,
    /// or earlier lines' that it released), skipped kinds, or nothing yet (a PAM failure that
    /// waits to see how its connection ends).
    case several([LineEvent], skipped: [(kind: String, line: Int)])
    /// An event of another line (one that waited) that cannot be stored.
    case invalidLine(Int, String)
}

/// An event and the line it was read from, which may be an earlier line than the one being
/// decoded (an sshd event that waited).
struct LineEvent {
    var decoded: EventJSON.Decoded
    var line: Int
    var offset: Int64
    var length: Int
}

/// Turns the lines of an input into events, the same way in every pass: each pass makes a new
/// decoder (an sshd log's year moves on with its lines) and hands it the lines in order.
struct LineDecoder {
    private enum Reader {
        case jsonl
        case sshd(SSHDLogParser)
        case keycloak(KeycloakEventParser, hints: [Int: KeycloakEventParser.Hint])
        /// Okta, Entra ID, CloudTrail, Windows: one JSON record per line.
        case records(any JSONAuthLogParser, name: String)
    }

    private var reader: Reader
    /// The device of lines that name no host (`onboard import --device`).
    private let defaultDevice: String?

    /// - Parameter startYear: the first line's year, for sshd (``ImportFormat/sshd(year:timeZone:)``
    ///   or the inference).
    /// - Parameter keycloakHints: what earlier Keycloak events say about later ones, by line
    ///   (``KeycloakNames``).
    init(format: ImportFormat, startYear: Int?, defaultDevice: String?, keycloakHints: [Int: KeycloakEventParser.Hint] = [:]) {
        self.defaultDevice = defaultDevice
        switch format {
        case .jsonl: reader = .jsonl
        case .sshd(let year, let timeZone, let mode):
            reader = .sshd(SSHDLogParser(startYear: startYear ?? year ?? 1970, timeZone: timeZone, mode: mode))
        case .keycloak(let zone): reader = .keycloak(KeycloakEventParser(timeZone: zone), hints: keycloakHints)
        case .okta, .entra, .cloudtrail, .windows:
            guard let log = format.recordLog else { preconditionFailure("\(format.name) reads records") }
            reader = .records(log.parser, name: format.name)
        }
    }

    mutating func decode(_ line: JSONLLine) -> LineDecoding {
        switch line.content {
        case .tooLong(let isValidUTF8):
            if case .jsonl = reader {
                return .invalid(isValidUTF8 ? "line is longer than \(Limits.maximumJSONLineBytes) bytes" : "is not valid UTF-8")
            }
            return .skipped(isValidUTF8 ? "too long" : "not UTF-8")
        case .text(let bytes):
            return decode(bytes, line: line.number, offset: line.offset)
        }
    }

    /// What the end of the input says of the lines still waiting (an sshd log's open attempts).
    mutating func finish() -> LineDecoding {
        guard case .sshd(var parser) = reader else { return .several([], skipped: []) }
        reader = .jsonl
        let reading = parser.finish()
        reader = .sshd(parser)
        return .several([], skipped: Array(zip(reading.skipped, reading.skippedLines)).map { (kind: $0, line: $1) })
    }

    /// Whether any line had a BSD-syslog time (without a year): only then was a year used.
    var sawLocalTime: Bool {
        if case .sshd(let parser) = reader { return parser.sawLocalTime }
        return false
    }

    mutating func decode(_ bytes: UnsafeRawBufferPointer, line: Int, offset: Int64 = 0) -> LineDecoding {
        let read: AuthLogLine
        switch reader {
        case .jsonl:
            do throws(EventValidationError) {
                return .event(try EventJSON.decode(lineBytes: bytes))
            } catch {
                return .invalid(error.description)
            }
        case .sshd(var parser):
            guard let text = String(validating: bytes, as: UTF8.self) else { return .skipped("not UTF-8") }
            // The enum's copy is dropped first, so that the parser's connection table is
            // referenced once and grows in place (a second reference would copy it every line).
            reader = .jsonl
            let reading = parser.read(text, origin: SSHDOrigin(number: line, offset: offset, length: bytes.count, text: text))
            reader = .sshd(parser)
            if reading.events.count == 1, reading.skipped.isEmpty, reading.events[0].origin.number == line, reading.events[0].index == 0 {
                return event(reading.events[0].event, bytes: bytes, line: line)
            }
            if reading.events.isEmpty, reading.skipped.count == 1 { return .skipped(reading.skipped[0]) }
            return sshdEvents(reading.events, skipped: Array(zip(reading.skipped, reading.skippedLines)).map { (kind: $0, line: $1) })
        case .keycloak(let parser, let hints):
            read = parser.parse(bytes, hint: hints[line])
        case .records(let parser, _):
            read = parser.parse(bytes)
        }
        switch read {
        case .skipped(let kind): return .skipped(kind)
        case .event(let found): return event(found, bytes: bytes, line: line)
        }
    }

    /// sshd events of any lines, each with the id its own line gives it.
    private func sshdEvents(_ events: [SSHDEvent], skipped: [(kind: String, line: Int)]) -> LineDecoding {
        var decoded: [LineEvent] = []
        for found in events {
            let origin = found.origin
            let result = Array(origin.text.utf8).withUnsafeBytes { bytes in
                event(found.event, bytes: bytes, line: origin.number, index: found.index)
            }
            switch result {
            case .event(let event): decoded.append(LineEvent(decoded: event, line: origin.number, offset: origin.offset, length: origin.length))
            case .invalid(let message): return .invalidLine(origin.number, message)
            default: continue
            }
        }
        return .several(decoded, skipped: skipped)
    }

    /// The event a foreign line maps to, with an id derived from the line (so that importing the
    /// same log again finds its events stored), checked as the store checks an append.
    private func event(_ found: AuthLogEvent, bytes: UnsafeRawBufferPointer, line: Int, index: Int = 0) -> LineDecoding {
        guard let device = found.host ?? defaultDevice else {
            return .invalid("names no host to be the device; give --device NAME")
        }
        do throws(EventValidationError) {
            try Event.validate(deviceID: device)
        } catch {
            return .invalid(
                "its host \(ErrorEcho.quoted(device)) cannot be a device id (letters, digits and - _ . : only, at most \(Limits.maximumDeviceBytes) bytes)")
        }
        // A name spelled like a pseudonym (`~` and 32 hex digits) would read as a forgotten user's
        // and lose its address to erasure; no real account has one. The attempt is kept, with
        // its address, as one that names no user (docs/importers.md).
        let user = found.user.flatMap { UserRef.isLiteral($0) ? nil : $0 }
        var event = Event(id: Self.zeroID, device: device, at: found.at, user: user, flow: nil, payload: found.payload)
        event.id = Self.id(of: event, bytes: bytes, line: line, index: index, mappedFormat: mappedFormat)
        do throws(EventValidationError) {
            try event.validate()
        } catch {
            return .invalid(error.description)
        }
        return .event(EventJSON.Decoded(event: event, seq: nil))
    }

    /// The name of a format whose ids are made from the event as mapped (every log of JSON
    /// records), `nil` for sshd's, made from the line.
    private var mappedFormat: String? {
        switch reader {
        case .keycloak: "keycloak"
        case .records(_, let name): name
        case .jsonl, .sshd: nil
        }
    }

    /// An id that the same line always gets: a version-8 UUID (RFC 9562) from a BLAKE2b hash.
    /// - sshd: of the line's number and bytes. A log read again — also after it grew, or once
    ///   rotated to `auth.log.1` — gives its lines the ids they had; two identical lines (same
    ///   second, same port) stay two events.
    /// - Keycloak and the other logs of JSON records (Okta, Entra ID, CloudTrail, Windows): of
    ///   the event as mapped (device, time, user, payload) and the format's name, since the same
    ///   events come as an array or as lines, in any order: an identical event twice (same
    ///   millisecond, user, address and outcome) is one event, reported as a repeat.
    static let zeroID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// `event` carries ``zeroID``: the id is made from the rest.
    static func id(of event: Event, bytes: UnsafeRawBufferPointer, line: Int, index: Int = 0, mappedFormat: String?) -> UUID {
        var input: [UInt8] = []
        if let mappedFormat {
            input += Array("onboard-import \(mappedFormat)\n".utf8)
            input += Array(EventJSON.encode(event, seq: nil).utf8)
        } else {
            // The first event of a line keeps the id it always had; `message repeated N times`
            // gives the others theirs.
            input += Array((index == 0 ? "onboard-import sshd \(line)\n" : "onboard-import sshd \(line)#\(index)\n").utf8)
            input += Array(bytes)
        }
        var digest = Digest.hash(input).bytes
        digest[6] = (digest[6] & 0x0F) | 0x80 // version 8
        digest[8] = (digest[8] & 0x3F) | 0x80 // the RFC's variant
        return UUID(
            uuid: (
                digest[0], digest[1], digest[2], digest[3], digest[4], digest[5], digest[6], digest[7],
                digest[8], digest[9], digest[10], digest[11], digest[12], digest[13], digest[14], digest[15]
            ))
    }
}
