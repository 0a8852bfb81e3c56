/// Checks that bytes fed in pieces are well-formed UTF-8 (RFC 3629: no overlong forms, no
/// surrogates, nothing above U+10FFFF), for a line too long to keep whole: import reports a line
/// that is both too long and not UTF-8 as not UTF-8, as it does for a short one.
///
/// ```swift
/// var validator = UTF8Validator()
/// validator.feed(firstPiece); validator.feed(secondPiece)
/// validator.isValid // false if either piece, or the cut between them, broke the encoding
/// ```
struct UTF8Validator {
    /// Continuation bytes still expected for the current character.
    private var remaining = 0
    /// The allowed range of the next continuation byte (narrower right after some lead bytes).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF
    private(set) var sawError = false

    /// Whether everything fed so far is complete, valid UTF-8.
    var isValid: Bool { !sawError && remaining == 0 }

    mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        guard !sawError else { return }
        for byte in bytes {
            if remaining > 0 {
                guard byte >= lower, byte <= upper else {
                    sawError = true
                    return
                }
                remaining -= 1
                lower = 0x80
                upper = 0xBF
                continue
            }
            switch byte {
            case 0x00...0x7F: continue
            case 0xC2...0xDF: remaining = 1
            case 0xE0: remaining = 2; lower = 0xA0
            case 0xE1...0xEC, 0xEE, 0xEF: remaining = 2
            case 0xED: remaining = 2; upper = 0x9F
            case 0xF0: remaining = 3; lower = 0x90
            case 0xF1...0xF3: remaining = 3
            case 0xF4: remaining = 3; upper = 0x8F
            default:
                sawError = true
                return
            }
        }
    }
}
