import OnboardingModel

/// The one-line human form of a record used by `log` and `demo`.
enum EventText {
    static func line(_ record: Record) -> String {
        let event = record.event
        let at = event.at.iso8601.replacingOccurrences(of: "T", with: " ").dropLast()
        let seq = String(record.seq)
        var parts = [
            String(repeating: " ", count: max(0, 7 - seq.count)) + seq, String(at), event.device,
            event.user ?? "-", event.type.rawValue
        ]
        let fields = details(event)
        if !fields.isEmpty { parts.append(fields) }
        return parts.joined(separator: "  ")
    }

    /// The payload as `name=value` pairs, e.g. `method=password reason=invalid_password`.
    static func details(_ event: Event) -> String {
        zip(event.type.fields, event.payload.fieldValues).compactMap { spec, value -> String? in
            value.map { "\(spec.name)=\(describe($0, spec: spec))" }
        }.joined(separator: " ")
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
        case .choices(let codes):
            // `options=apple,google,password`: the order the screen showed them in.
            guard case .choices(let names, _) = spec.kind else { return codes.map(String.init).joined(separator: ",") }
            return codes.map { names[Int($0)] }.joined(separator: ",")
        }
    }
}
