/// A log of JSON records (or Windows XML events), as ``JSONLogInput`` reads it: the parser of one
/// record, which also dates it for the sort, and the forms the file may take besides a JSON array
/// and one record per line.
struct RecordLog: Sendable {
    /// What the file should be, for the one-line error about a file that is not: "Okta System
    /// Log JSON".
    let title: String
    let parser: any JSONAuthLogParser
    /// The member of an object whose array holds the records (CloudTrail's `Records`, Graph's
    /// `value`), `nil` when the format has none.
    var wrapperMember: String?
    /// Whether the file may be XML (Windows' `<Event>` elements).
    var readsXML = false

    /// What the file's first byte may be, in words, for that error.
    var expected: String {
        var forms = ["a JSON array ('[')"]
        if let wrapperMember { forms.append("an object with \"\(wrapperMember)\": [...]") }
        forms.append("one JSON object per line ('{')")
        if readsXML { forms.append("XML events ('<Event')") }
        return forms.joined(separator: ", ")
    }
}
