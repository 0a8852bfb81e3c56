import Foundation

/// One row of the report: a figure of the store, the same figure of a baseline measured in the
/// same run (alternating), and the target it is held to when there is one (the `target` column
/// of docs/benchmarks.md § Latest full results).
struct BenchResult {
    /// Whether a larger ratio is better (throughput) or a smaller one (latency, bytes).
    enum Goal { case atLeast, atMost }

    var name: String
    var unit: String
    var value: Double
    var baseline: String?
    var baselineValue: Double?
    /// Median of the per-repetition ratios value / baseline value.
    var ratio: Double?
    var ratioMin: Double?
    var ratioMax: Double?
    /// Readable target, e.g. "≥ 0.8 × C"; `nil` for figures reported without a target.
    var target: String?
    var met: Bool?
    var note: String?

    init(
        name: String, unit: String, paired: Paired, baseline: String, target: String? = nil,
        goal: Goal = .atLeast, threshold: Double? = nil, note: String? = nil
    ) {
        self.name = name
        self.unit = unit
        self.value = median(paired.subject)
        self.baseline = baseline
        self.baselineValue = median(paired.baseline)
        let ratios = paired.ratios
        self.ratio = median(ratios)
        self.ratioMin = ratios.min()
        self.ratioMax = ratios.max()
        self.target = target
        if let threshold, let ratio {
            self.met = goal == .atLeast ? ratio >= threshold : ratio <= threshold
        }
        self.note = note
    }

    init(name: String, unit: String, value: Double, target: String? = nil, met: Bool? = nil, note: String? = nil) {
        self.name = name
        self.unit = unit
        self.value = value
        self.target = target
        self.met = met
        self.note = note
    }

    var json: [String: Any] {
        // JSON has no NaN: a figure not measured is null.
        func number(_ value: Double?) -> Any { value.flatMap { $0.isFinite ? $0 : nil } ?? NSNull() }
        var object: [String: Any] = [
            "name": name, "unit": unit, "value": number(value),
            "baseline": baseline ?? NSNull(), "baseline_value": number(baselineValue),
            "ratio": number(ratio), "target": target ?? NSNull(), "met": met ?? NSNull()
        ]
        if let ratioMin, let ratioMax {
            object["ratio_min"] = ratioMin
            object["ratio_max"] = ratioMax
        }
        if let note { object["note"] = note }
        return object
    }
}

/// Collects results and prints each as it is measured, so a long run shows progress.
final class Report {
    private(set) var results: [BenchResult] = []

    func add(_ result: BenchResult) {
        results.append(result)
        emit(Report.row(result))
    }

    static let header = [
        pad("name", 40), pad("value", 14), pad("unit", 10), pad("baseline", 16),
        pad("baseline value", 14), pad("ratio (min–max)", 22), pad("target", 14), "met"
    ].joined(separator: " ")

    static func row(_ result: BenchResult) -> String {
        let ratio =
            result.ratio.map { ratio in
                "\(format(ratio)) (\(format(result.ratioMin ?? ratio))–\(format(result.ratioMax ?? ratio)))"
            } ?? "—"
        let met = result.met.map { $0 ? "yes" : "NO" } ?? "—"
        var line = [
            pad(result.name, 40), pad(format(result.value), 14), pad(result.unit, 10),
            pad(result.baseline ?? "—", 16), pad(result.baselineValue.map(format) ?? "—", 14),
            pad(ratio, 22), pad(result.target ?? "—", 14), met
        ].joined(separator: " ")
        if let note = result.note { line += "  (\(note))" }
        return line
    }

    func writeJSON(to path: String, machine: [String: Any]) throws {
        let object: [String: Any] = ["machine": machine, "results": results.map(\.json)]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: URL(fileURLWithPath: path))
    }
}

func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

/// Three significant digits, without exponent noise for the usual ranges.
func format(_ value: Double) -> String {
    if value == 0 { return "0" }
    let magnitude = abs(value)
    if magnitude >= 1000 { return String(format: "%.0f", value) }
    if magnitude >= 100 { return String(format: "%.1f", value) }
    if magnitude >= 1 { return String(format: "%.2f", value) }
    return String(format: "%.3g", value)
}
