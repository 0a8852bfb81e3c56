/// How an error message shows text that came from its input: in double quotes, with quotes,
/// backslashes, control characters and invisible formatting characters escaped, and cut when
/// long, so a message stays one readable line whatever a hostile line held (a `\n` escape in an
/// id must not start a new line of output, nor an escape sequence recolour the terminal).
///
/// ```swift
/// ErrorEcho.quoted("kiosk\n7")   // "\"kiosk\\n7\""
/// ```
public enum ErrorEcho {
    /// Echoed text is cut after this many Unicode scalars: enough to recognise a value, short
    /// enough that an error about a 4 KiB text or a 64 KiB key still fits on a line.
    public static let maximumScalars = 64

    public static func quoted(_ text: String) -> String {
        var result = "\""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == maximumScalars {
                result += "…"
                break
            }
            count += 1
            switch scalar.value {
            case 0x22: result += "\\\""
            case 0x5C: result += "\\\\"
            case 0x0A: result += "\\n"
            case 0x0D: result += "\\r"
            case 0x09: result += "\\t"
            case 0x00..<0x20, 0x7F...0x9F, 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069, 0xFEFF:
                result += "\\u{" + hex4(scalar.value) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// `U+XXXX`, the way messages name a single character that cannot be shown.
    public static func codePoint(_ value: UInt32) -> String { "U+" + hex4(value) }

    static func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return digits.count >= 4 ? digits : String(repeating: "0", count: 4 - digits.count) + digits
    }
}
