import OnboardingModel

extension ImportSummary {
    /// The summary as `onboard import --json` prints it: one object, every member present
    /// (`null` when it does not apply), documented in docs/importers.md § The summary.
    ///
    /// ```swift
    /// var writer = JSONWriter()
    /// writer.append(summary.json(format: importer.format, input: "auth.log"))
    /// print(writer.text)
    /// ```
    public func json(format: ImportFormat, input: String) -> JSONValue {
        func number(_ value: some BinaryInteger) -> JSONValue { .number(String(value)) }
        func optional<T>(_ value: T?, _ wrap: (T) -> JSONValue) -> JSONValue { value.map(wrap) ?? .null }
        let kinds = skippedLines.kinds.map { kind in
            JSONValue.object([
                .init("kind", .string(kind.kind)), .init("count", number(kind.count)),
                .init("first_lines", .array(kind.firstLines.map { number($0) }))
            ])
        }
        let repeatLines = repeatExamples.map { example in
            JSONValue.object([.init("line", number(example.line)), .init("first_line", number(example.firstLine))])
        }
        return .object([
            .init("format", .string(format.name)),
            .init("input", .string(input)),
            .init("events", number(events)),
            .init("appended", number(appended)),
            .init("already_stored", number(alreadyStored)),
            .init("repeats", number(repeats)),
            .init("repeat_lines", .array(repeatLines)),
            .init("commits", number(commits)),
            .init("first_seq", optional(firstSeq) { number($0) }),
            .init("last_seq", optional(lastSeq) { number($0) }),
            .init("first_at", optional(firstAt) { .string($0.iso8601) }),
            .init("last_at", optional(lastAt) { .string($0.iso8601) }),
            .init("skipped", number(skippedLines.total)),
            .init("skipped_kinds", .array(kinds)),
            .init("start_year", optional(startYear) { number($0) }),
            .init("summary_seq", optional(summarySeq) { number($0) })
        ])
    }
}
