import Foundation
#if canImport(FoundationXML)
    import FoundationXML
#endif
import OnboardingLab
import OnboardingModel
import OnboardingProjections
@testable import OnboardingWorkload
import Testing

/// The lab's trace and its HTML report (docs/lab.md § The report): the trace agrees with the
/// untraced replay, the report draws every policy, the frontier and the timeline, escapes every
/// name a hostile log can carry, names no URL and stays small.
@Suite("Lockout lab: trace and HTML report")
struct LabReportTests {
    static let start = Timestamp(millisecondsSince1970: 1_796_054_400_000)

    static func input(
        _ seconds: Double, _ user: String?, _ kind: LockoutInput.Kind = .passwordFailure, device: String = "host-1",
        address: String? = nil
    ) -> LockoutInput {
        LockoutInput(kind: kind, user: user, device: device, at: start.adding(milliseconds: Int64(seconds * 1000)), address: address)
    }

    static func log(_ inputs: [LockoutInput]) -> LabLog {
        LabLog(inputs: inputs, eventCount: inputs.count, firstAt: inputs.map(\.at).min(), lastAt: inputs.map(\.at).max(), truth: .heuristic)
    }

    static let generated: LabLog = {
        var generator = WorkloadGenerator(spec: WorkloadSpec(eventCount: 20_000, seed: 5, userCount: 200, deviceCount: 50))
        var events: [Event] = []
        while let (event, _) = generator.nextTagged() { events.append(event) }
        return LabLog(events: events)
    }()

    @Test("a traced replay gives the untraced result, one entry per attempt and one lock per lockout")
    func traceAgreesWithTheReplay() {
        let log = Self.generated
        for policy in LockoutPolicy.presets {
            var trace = LabTrace()
            let traced = LabReplay.run(log, policy: policy, trace: &trace)
            #expect(traced == LabReplay.run(log, policy: policy), "\(policy.name)")
            let attempts = log.inputs.filter { [.passwordFailure, .secondFactorFailure, .signInSucceeded].contains($0.kind) }.count
            #expect(trace.attempts.count == attempts)
            #expect(trace.attempts.map(\.index) == trace.attempts.map(\.index).sorted())
            let refusedAttacks = trace.attempts.filter { $0.outcome == .refused && { if case .attacker = log.parties[$0.index] { true } else { false } }($0) }
            #expect(refusedAttacks.count == traced.attackerAttemptsRefused, "\(policy.name)")
            // No policy of the presets but fail2ban locks by address, and fail2ban's accounts never lock.
            #expect(trace.locks.count == traced.lockouts, "\(policy.name)")
            for lock in trace.locks {
                #expect(lock.endMilliseconds.map { $0 >= lock.startMilliseconds } ?? lock.permanent)
                #expect(log.inputs[lock.index].at.millisecondsSince1970 == lock.startMilliseconds)
            }
        }
    }

    @Test("a lock ends at its own end, or when a clearing event lifts it; a lock by address is keyed by the address")
    func lockIntervals() throws {
        let log = Self.log(
            (0..<5).map { Self.input(Double($0), "alice") }
                + [Self.input(60, "alice", .passwordChanged)]
                + (0..<5).map { Self.input(100 + Double($0), "bob") }
                + (0..<5).map { Self.input(1000 + Double($0), "user-\($0)", address: "203.0.113.9") })
        var trace = LabTrace()
        _ = LabReplay.run(log, policy: .mediawiki, trace: &trace)
        let alice = try #require(trace.locks.first { if case .user("alice", _, _) = $0.key { true } else { false } })
        #expect(alice.endMilliseconds == Self.start.millisecondsSince1970 + 60_000, "lifted by the password change")
        let bob = try #require(trace.locks.first { if case .user("bob", _, _) = $0.key { true } else { false } })
        #expect(bob.endMilliseconds == Self.start.millisecondsSince1970 + 100_000 + 300_000, "the 5-minute window from bob's first failure")

        _ = LabReplay.run(log, policy: LockoutPolicy.named("fail2ban")!, trace: &trace)
        #expect(trace.locks.map(\.key) == [.address("203.0.113.9", user: nil)])
        #expect(trace.locks.first?.endMilliseconds == Self.start.millisecondsSince1970 + 1_004_000 + 600_000)
        let timeline = LabTimeline(log: log, trace: trace)
        #expect(timeline.lanes.filter { $0.kind == .address }.map(\.name) == ["203.0.113.9"])
        #expect(timeline.lanes.first { $0.kind == .address }?.locks.count == 1)
        #expect(timeline.lanes.filter { $0.kind == .user }.map(\.name) == ["alice", "bob", "user-0", "user-1", "user-2"])
    }

    static func compareReport(_ log: LabLog, policies: [LockoutPolicy] = LockoutPolicy.presets) -> LabReport {
        var trace = LabTrace()
        var results = [LabReplay.run(log, policy: policies[0], trace: &trace)]
        results += policies.dropFirst().map { LabReplay.run(log, policy: $0) }
        return LabReport.compare(log: log, source: "traffic.jsonl", results: results, trace: trace)
    }

    @Test("compare: one bar per policy in each chart, every policy a point, the frontier's points and step line")
    func compareReport() throws {
        let report = Self.compareReport(Self.generated)
        let html = report.html
        try Self.checkSelfContained(html)
        #expect(Self.count("<rect class=\"bar guesses", in: html) == LockoutPolicy.presets.count)
        #expect(Self.count("<rect class=\"bar minutes", in: html) == LockoutPolicy.presets.count)
        #expect(Self.count("<circle class=\"pt", in: html) == LockoutPolicy.presets.count)
        #expect(Self.count("<circle class=\"pt front\"", in: html) == report.frontier.count && !report.frontier.isEmpty)
        #expect(report.frontier == LabSweep.paretoFrontier(report.results.map { (Double($0.guessesLetThrough), $0.honestLockoutMinutes) }))
        #expect(html.contains("<path class=\"step\""))
        #expect(html.contains("hash checks</dt><dd>off"))
        #expect(html.contains("the generated workload's ground truth"))
        #expect(html.contains("<section id=\"timeline\">") && html.contains("class=\"lane user\""))
        #expect(html.contains("<table class=\"first-lock\">") && html.contains("brute force"))
        for preset in LockoutPolicy.presets { #expect(html.contains(preset.name)) }
    }

    @Test("sweep: every grid policy a point, the frontier, the recommended point ringed and named")
    func sweepReport() throws {
        let log = Self.generated
        let sweep = LabSweep.run(log, grid: LabSweep.Grid(limits: 3...6, windowSeconds: 60...3600, windowSteps: 3))
        var trace = LabTrace()
        _ = LabReplay.run(log, policy: sweep.recommendedPolicy, trace: &trace)
        let html = LabReport.sweep(log: log, source: "traffic.jsonl", sweep: sweep, trace: trace).html
        try Self.checkSelfContained(html)
        #expect(Self.count("<rect class=\"bar guesses", in: html) == sweep.results.count)
        #expect(Self.count("<circle class=\"pt", in: html) == sweep.results.count)
        #expect(Self.count("<circle class=\"pt front\"", in: html) == sweep.frontier.count)
        #expect(Self.count("class=\"rec-ring\"", in: html) == 1)
        #expect(html.contains("recommended: \(sweep.recommendedPolicy.name)"))
        #expect(html.contains("data-policy=\"\(sweep.recommended)\""))
    }

    static let hostile = [
        "<script>alert(1)</script>", "a&b", "\"quoted\" 'single'", "nul\u{0}esc\u{1B}[31mbell\u{7}del\u{7F}c1\u{85}",
        "bidi\u{202E}txt.exe", "]]></svg><svg onload=alert(1)>", String(repeating: "long-", count: 40_000)
    ]

    @Test("hostile names from the log and a policy file are escaped in text, attributes and titles")
    func hostileNames() throws {
        var inputs: [LockoutInput] = []
        for (number, name) in Self.hostile.enumerated() {
            for attempt in 0..<6 { inputs.append(Self.input(Double(number * 100 + attempt), name, address: name)) }
            inputs.append(Self.input(Double(number * 100 + 50), name, .signInSucceeded, address: "192.0.2.1"))
        }
        var policy = LockoutPolicy.mediawiki
        policy.name = "<img src=x onerror=alert(1)> & \"policy\""
        var fail2ban = LockoutPolicy.named("fail2ban")!
        fail2ban.name = "</title><script>alert(2)</script>"
        let report = Self.compareReport(Self.log(inputs), policies: [policy, fail2ban])
        let html = report.html
        try Self.checkSelfContained(html)
        for raw in ["<script", "<img", "<svg onload", "\u{0}", "\u{1B}", "\u{7}", "\u{7F}", "\u{85}", "\u{202E}", "]]>"] {
            #expect(!html.contains(raw), "\(raw.debugDescription) is in the report")
        }
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(html.contains("a&amp;b"))
        #expect(html.contains("&quot;quoted&quot; &#39;single&#39;"))
        #expect(html.contains("&lt;img src=x onerror=alert(1)&gt; &amp; &quot;policy&quot;"))
        #expect(html.utf8.count < 200_000, "a 200,000-character name is cut: \(html.utf8.count) bytes")
        #expect(report.timeline.lanes.contains { $0.kind == .address && $0.name == Self.hostile[0] })
    }

    @Test("the timeline is bounded: a lane of 200,000 attempts is at most 3 marks per column")
    func boundedTimeline() throws {
        var inputs: [LockoutInput] = []
        for second in 0..<200_000 {
            inputs.append(
                Self.input(
                    Double(second) * 3, "mallory", second % 7 == 0 ? .signInSucceeded : .passwordFailure,
                    address: "198.51.100.\(second % 3)"))
        }
        let report = Self.compareReport(Self.log(inputs), policies: [.mediawiki, .nist])
        for lane in report.timeline.lanes {
            #expect(lane.marks.count <= 3 * LabTimeline.columns)
            #expect(lane.locks.count <= LabTimeline.columns + 1)
        }
        #expect(report.timeline.attemptsShown == 200_000 * 2, "each attempt in its user's lane and its address's")
        let html = report.html
        try Self.checkSelfContained(html)
        #expect(html.utf8.count < 1_500_000, "\(html.utf8.count) bytes")
    }

    @Test("escaping, figure by figure")
    func escape() {
        #expect(LabReport.escape("<a href=\"x\">&'</a>") == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;")
        #expect(LabReport.escape("tab\tnew\nline") == "tab\u{FFFD}new\u{FFFD}line")
        #expect(LabReport.escape("abcdef", limit: 3) == "abc…")
        #expect(LabReport.escape("josé 👩‍💻") == "josé 👩‍💻")
    }

    // MARK: Checks

    static func count(_ needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    /// No URL, no outside script or stylesheet, no script at all; every inline SVG well-formed XML.
    static func checkSelfContained(_ html: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        for forbidden in ["http://", "https://", "<script", "<link", "url(", "@import", "src=\""] {
            #expect(!html.lowercased().contains(forbidden), "the report contains \(forbidden)", sourceLocation: sourceLocation)
        }
        #expect(html.hasPrefix("<!DOCTYPE html>") && html.hasSuffix("</html>\n"), sourceLocation: sourceLocation)
        var rest = html[...]
        var svgs = 0
        while let open = rest.range(of: "<svg") {
            let close = try #require(rest.range(of: "</svg>", range: open.upperBound..<rest.endIndex), sourceLocation: sourceLocation)
            let fragment = String(rest[open.lowerBound..<close.upperBound])
            let parser = XMLParser(data: Data(fragment.utf8))
            let parsed = parser.parse()
            #expect(
                parsed, "svg \(svgs) is not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "?") at line \(parser.lineNumber)",
                sourceLocation: sourceLocation)
            svgs += 1
            rest = rest[close.upperBound...]
        }
        #expect(svgs >= 3, "\(svgs) svgs", sourceLocation: sourceLocation)
    }
}
