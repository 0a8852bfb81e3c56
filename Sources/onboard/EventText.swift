import OnboardingModel

/// The one-line human form of a record used by `log` and `demo`.
enum EventText {
    static func line(_ record: Record) -> String {
        let event = record.event
        let at = event.at.iso8601.replacingOccurrences(of: "T", with: " ").dropLast()
        let seq = String(record.seq)
        var parts = [String(repeating: " ", count: max(0, 7 - seq.count)) + seq, String(at), event.device,
                     event.user ?? "-", event.type.rawValue]
        let details = zip(event.type.fields, event.payload.fieldValues).compactMap { spec, value -> String? in
            guard let value else { return nil }
            return "\(spec.name)=\(describe(value, spec: spec))"
        }
        if !details.isEmpty { parts.append(details.joined(separator: " ")) }
        return parts.joined(separator: "  ")
    }

    static func describe(_ value: FieldValue, spec: FieldSpec) -> String {
        switch value {
        case .text(let text): return "\"\(text)\""
        case .choice(let code):
            if case .choice(let names) = spec.kind { return names[Int(code)] }
            return String(code)
        case .flag(let flag): return flag ? "true" : "false"
        case .instant(let instant): return instant.iso8601
        case .count(let count): return String(count)
        }
    }
}
