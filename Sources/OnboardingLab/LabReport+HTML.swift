import OnboardingModel
import OnboardingProjections

extension LabReport {
    /// The report as one HTML document: inline CSS and SVG, no script, no reference to anything
    /// outside the file (its Content-Security-Policy forbids loading anything). Every string from
    /// the log or a policy file goes through ``escape(_:limit:)``.
    public var html: String {
        var out = ""
        out.reserveCapacity(64 * 1024)
        out += """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="referrer" content="no-referrer">
            <title>Lockout lab report: \(mode.rawValue) of \(Self.escape(summary.source, limit: 80))</title>
            <style>\(Self.css)</style>
            </head>
            <body>

            """
        header(&out)
        out += "<section id=\"frontier\">\n<h2>The frontier: guesses let through against honest lockout minutes</h2>\n"
        out += frontierCaption
        out += frontierPlot()
        out += "</section>\n"
        out += "<section id=\"timeline\">\n<h2>Timeline of the most attacked users and addresses</h2>\n"
        out += timelineSection()
        out += "</section>\n"
        out += "<section id=\"bars\">\n<h2>Per policy</h2>\n"
        out +=
            results.count > Self.namedColumns
            ? "<p class=\"note\">\(results.count) policies in grid order (each limit with every window); the recommended one is dark. Hover a bar for its policy and value.</p>\n"
            : "<p class=\"note\">Each policy of the comparison, in the order given.</p>\n"
        out += "<div class=\"pair\">\n"
        out += barChart(
            title: "Guesses let through", axis: "guesses", className: "guesses",
            values: results.map { Double($0.guessesLetThrough) }, format: { String(Int($0)) })
        out += barChart(
            title: "Honest lockout minutes", axis: "minutes", className: "minutes",
            values: results.map(\.honestLockoutMinutes), format: Self.number)
        out += "</div>\n"
        out += resultsTable()
        out += "</section>\n"
        out += "<section id=\"first-lock\">\n<h2>Time to the first lock, per attack</h2>\n"
        out += firstLockTable()
        out += "</section>\n"
        out += "</body>\n</html>\n"
        return out
    }

    /// Policies past which the charts name no policy under its bar and the tables show only
    /// the frontier.
    static let namedColumns = 12

    static let css = """
        body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2433;background:#fff;margin:0 auto;padding:16px 20px 40px;max-width:1240px}
        h1{font-size:22px;margin:4px 0 8px}h2{font-size:17px;margin:28px 0 6px;border-bottom:1px solid #d9dde5;padding-bottom:3px}
        dl.facts{display:grid;grid-template-columns:max-content minmax(0,1fr) max-content minmax(0,1fr);gap:2px 14px;margin:8px 0}dl.facts dt{color:#5a6275}dl.facts dd{margin:0;overflow-wrap:anywhere}
        .note{color:#5a6275;margin:4px 0 8px}.warn{background:#fff6e0;border:1px solid #e8cf8a;padding:6px 10px;border-radius:4px}
        svg{display:block;max-width:100%;height:auto;font:12px system-ui,sans-serif}
        .pair{display:flex;flex-wrap:wrap;gap:16px}.pair svg{flex:1 1 560px}
        .axis line,.axis path{stroke:#8a91a1;stroke-width:1;fill:none}.grid line{stroke:#eceef3}.axis text,.ticks text{fill:#4a5163}
        .axis-title{fill:#1d2433;font-weight:600}
        .bar.guesses{fill:#d9534f}.bar.minutes{fill:#3b7dd8}.bar.rec{fill:#1d2433}.val{fill:#1d2433;font-size:11px}
        .pt{fill:#a8b0c0;stroke:#fff;stroke-width:.5}.pt.front{fill:#3b7dd8}.step{fill:none;stroke:#3b7dd8;stroke-width:2}
        .rec-ring{fill:none;stroke:#d9534f;stroke-width:2.5}.rec-label{fill:#b52b27;font-weight:600}.pt-label{fill:#1d2433;font-size:11px}
        .lane-bg{fill:#f6f7fa}.lock{fill:#8e5bd6;fill-opacity:.28}.lock.perm{fill:#5b2aa6;fill-opacity:.45}
        .m0{fill:#2e9d57}.m1{fill:#e39b21}.m2{fill:#d9534f}.lane-name{fill:#1d2433}.lane-meta{fill:#6b7386;font-size:10px}
        table{border-collapse:collapse;margin:8px 0;font-size:13px}th,td{border:1px solid #d9dde5;padding:3px 8px;text-align:right;white-space:nowrap}
        th:first-child,td:first-child{text-align:left;white-space:normal;overflow-wrap:anywhere;max-width:380px}th{background:#f1f3f7}
        tr.rec td{font-weight:600;background:#fff1f0}
        """

    // MARK: Header

    func header(_ out: inout String) {
        let s = summary
        out += "<header>\n<h1>Lockout lab report: \(mode == .compare ? "compare" : "sweep")</h1>\n<dl class=\"facts\">\n"
        func fact(_ name: String, _ value: String) { out += "<dt>\(name)</dt><dd>\(value)</dd>\n" }
        fact("log", "<code>\(Self.escape(s.source, limit: 300))</code>")
        fact("events", String(s.events))
        fact("attempts", "\(s.attempts) (the inputs a lockout reads)")
        var span = Self.number(s.days)
        if let first = s.firstAt, let last = s.lastAt { span += " (\(Self.time(first.millisecondsSince1970)) to \(Self.time(last.millisecondsSince1970)) UTC)" }
        fact("days", span)
        fact("parties told apart by", s.truth == .generated ? "the generated workload's ground truth (its device names)" : "the heuristic of docs/lab.md")
        fact("keys", s.acrossDevices ? "per user across devices (--across-devices)" : "per user and device")
        fact("hash checks", "off")
        fact("policies", String(results.count))
        if let recommended, results.indices.contains(recommended) {
            let weight = Self.number(honestMinuteWeight ?? 1)
            fact("recommended", "<b>\(Self.escape(results[recommended].policy))</b> (least guesses + \(weight) × honest minutes on the frontier)")
        }
        if results.indices.contains(timelinePolicy) { fact("timeline under", Self.escape(results[timelinePolicy].policy)) }
        out += "</dl>\n"
        out += importsList()
        out +=
            "<p class=\"warn\">This file shows user names and client addresses from the log. It is a local file for the security engineer: do not publish, mail or upload it.</p>\n"
        out += "</header>\n"
    }

    /// What each import of a foreign log left out (its `log_imported` event), at most
    /// ``LabImport/maximumListed``: a replay of a log with holes measures the holes too.
    func importsList() -> String {
        let imports = summary.imports
        guard !imports.isEmpty else { return "" }
        var out = "<section id=\"imports\">\n<h2>What the imports left out</h2>\n<ul>\n"
        for summary in imports.prefix(LabImport.maximumListed) { out += "<li>\(Self.escape(summary.sentence))</li>\n" }
        if imports.count > LabImport.maximumListed { out += "<li>… and \(imports.count - LabImport.maximumListed) more imports</li>\n" }
        return out + "</ul>\n</section>\n"
    }

    var frontierCaption: String {
        let front = frontier.count
        return mode == .sweep
            ? "<p class=\"note\">Every grid policy is a point; the \(front) on the Pareto frontier (no policy beats them on both axes) are blue, joined by the step line; the recommended one is ringed in red.</p>\n"
            : "<p class=\"note\">Each compared policy is a point, named; the \(front) on the Pareto frontier among them are blue, joined by the step line.</p>\n"
    }

    // MARK: Tables

    /// The policies the tables show: all of them for a short comparison, else the frontier.
    var tablePolicies: [Int] {
        results.count <= Self.namedColumns || mode == .compare ? Array(results.indices) : frontier
    }

    func resultsTable() -> String {
        var out =
            mode == .sweep && results.count > Self.namedColumns
            ? "<p class=\"note\">The frontier's policies, by guesses let through:</p>\n" : ""
        out +=
            "<table class=\"results\">\n<tr><th>policy</th><th>guesses let through</th><th>attacks refused</th><th>honest locked out</th><th>honest minutes</th><th>lockouts/day</th></tr>\n"
        for index in tablePolicies {
            let r = results[index]
            out +=
                "<tr\(index == recommended ? " class=\"rec\"" : "")><td>\(Self.escape(r.policy))</td><td>\(r.guessesLetThrough)</td><td>\(r.attackerAttemptsRefused)</td>"
                + "<td>\(r.honestUsersLockedOut) / \(r.honestUsers)</td><td>\(Self.number(r.honestLockoutMinutes))</td><td>\(Self.number(r.lockoutsPerDay))</td></tr>\n"
        }
        return out + "</table>\n"
    }

    func firstLockTable() -> String {
        let columns = tablePolicies
        var names = Set<String>()
        for index in columns { for attack in results[index].attacks { names.insert(attack.name) } }
        guard !names.isEmpty else { return "<p class=\"note\">No attack in this log.</p>\n" }
        var out =
            "<p class=\"note\">From each attack's first attempt to its first refused attempt or the failure that first locked its key; <i>never</i>: the policy never locked it."
        out += columns.count < results.count ? " The frontier's policies only.</p>\n" : "</p>\n"
        out += "<table class=\"first-lock\">\n<tr><th>attack</th>"
        for index in columns { out += "<th>\(Self.escape(results[index].policy, limit: 40))</th>" }
        out += "</tr>\n"
        for name in names.sorted() {
            out += "<tr><td>\(Self.escape(name))</td>"
            for index in columns {
                let attack = results[index].attacks.first { $0.name == name }
                out += "<td>\(attack?.timeToFirstLockMilliseconds.map(Self.duration) ?? "never")</td>"
            }
            out += "</tr>\n"
        }
        return out + "</table>\n"
    }

    // MARK: Text

    /// `text` made safe for HTML and SVG text and attributes: `& < > " '` as entities; control
    /// characters, bidirectional overrides and the characters XML forbids as U+FFFD; cut to
    /// `limit` characters with `…` (a hostile log's names can be megabytes long).
    public static func escape(_ text: String, limit: Int = 200) -> String {
        var out = ""
        var characters = 0
        for character in text {
            if characters == limit { out += "…"; break }
            characters += 1
            for scalar in character.unicodeScalars {
                switch scalar.value {
                case 0x26: out += "&amp;"
                case 0x3C: out += "&lt;"
                case 0x3E: out += "&gt;"
                case 0x22: out += "&quot;"
                case 0x27: out += "&#39;"
                case 0x00...0x1F, 0x7F...0x9F, 0x200E, 0x200F, 0x061C, 0x202A...0x202E, 0x2066...0x2069, 0xFFFE, 0xFFFF:
                    out += "\u{FFFD}"
                default: out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// `2.50`, `12.5`, `1234.5`: as the CLI prints figures.
    static func number(_ value: Double) -> String { fixed(value, digits: value < 10 ? 2 : 1) }

    /// A coordinate: one decimal.
    static func coordinate(_ value: Double) -> String { fixed(value, digits: 1) }

    /// `value` with `digits` decimals, rounded half away from zero (no Foundation, no locale).
    static func fixed(_ value: Double, digits: Int) -> String {
        guard value.isFinite else { return "0" }
        var scale: Double = 1
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 9e15 else { return String(Int64(value)) }
        let whole = Int64(scaled) / Int64(scale), fraction = Int64(scaled) % Int64(scale)
        var text = (value < 0 && scaled > 0 ? "-" : "") + String(whole)
        if digits > 0 {
            let digitsText = String(fraction)
            text += "." + String(repeating: "0", count: digits - digitsText.count) + digitsText
        }
        return text
    }

    /// `2026-01-05 00:00` (UTC).
    static func time(_ milliseconds: Int64) -> String {
        let iso = Timestamp(millisecondsSince1970: milliseconds).iso8601
        return String(iso.prefix(16).map { $0 == "T" ? " " : $0 })
    }

    static func duration(_ milliseconds: Int64) -> String {
        if milliseconds < 1000 { return "\(milliseconds) ms" }
        if milliseconds < 120_000 { return "\(milliseconds / 1000) s" }
        if milliseconds < 7_200_000 { return "\(milliseconds / 60_000) min" }
        return "\(milliseconds / 3_600_000) h"
    }
}
