/// One line of a JSONL stream, as ``JSONLReader`` hands it out.
struct JSONLLine {
    enum Content {
        /// The line's bytes, without the newline and a carriage return before it: valid only
        /// during the call that receives it.
        case text(UnsafeRawBufferPointer)
        /// Longer than ``JSONLReader/maximumLineBytes``: never held whole, only checked as it
        /// went by.
        case tooLong(isValidUTF8: Bool)
    }

    /// 1-based, counting every line of the stream (blank ones too).
    let number: Int
    /// Where the line's first byte is in the stream (after a byte order mark on line 1).
    let offset: Int64
    let content: Content
}
