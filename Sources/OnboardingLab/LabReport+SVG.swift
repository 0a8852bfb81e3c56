import OnboardingModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The report's charts: inline SVG, each a well-formed XML fragment (no namespace declaration:
/// inline SVG in HTML needs none, and the report names no URL).
extension LabReport {
    /// Round tick values covering `low ... high`: about five steps of 1, 2 or 5 × 10ⁿ.
    static func ticks(_ low: Double, _ high: Double) -> (low: Double, high: Double, step: Double) {
        var low = low, high = high
        if !(high > low) { high = low + 1 }
        let raw = (high - low) / 5
        let magnitude = pow(10, floor(log10(raw)))
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? 10 * magnitude
        low = floor(low / step) * step
        high = ceil(high / step) * step
        if high <= low { high = low + step }
        return (low, high, step)
    }

    static func tickLabel(_ value: Double, step: Double) -> String {
        step >= 1 ? String(Int64(value.rounded())) : fixed(value, digits: step >= 0.1 ? 1 : 2)
    }

    /// A column chart of one figure per policy, in ``results`` order.
    func barChart(title: String, axis: String, className: String, values: [Double], format: (Double) -> String) -> String {
        let width = 580.0, height = 320.0
        let left = 64.0, right = 12.0, top = 30.0
        let named = values.count <= Self.namedColumns
        let bottom = named ? 70.0 : 44.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let scale = Self.ticks(0, values.max() ?? 1)
        func y(_ value: Double) -> Double { top + plotHeight * (1 - (value - scale.low) / (scale.high - scale.low)) }
        let c = Self.coordinate
        var out =
            "<svg class=\"chart bars \(className)\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"\(title) per policy\">\n"
        out += "<text class=\"axis-title\" x=\"\(c(left))\" y=\"18\">\(title)</text>\n"
        out += "<g class=\"grid\">"
        var tick = scale.low
        var labels = ""
        while tick <= scale.high + scale.step / 2 {
            out += "<line x1=\"\(c(left))\" x2=\"\(c(width - right))\" y1=\"\(c(y(tick)))\" y2=\"\(c(y(tick)))\"/>"
            labels += "<text x=\"\(c(left - 6))\" y=\"\(c(y(tick) + 4))\" text-anchor=\"end\">\(Self.tickLabel(tick, step: scale.step))</text>"
            tick += scale.step
        }
        out += "</g>\n<g class=\"ticks\">\(labels)</g>\n"
        let slot = plotWidth / Double(max(values.count, 1))
        let barWidth = max(1, slot * (named ? 0.6 : 0.8))
        out += "<g class=\"bar-group\">\n"
        for (index, value) in values.enumerated() {
            let x = left + slot * Double(index) + (slot - barWidth) / 2
            let barTop = y(max(value, scale.low)), barHeight = max(0, y(scale.low) - barTop)
            let name = Self.escape(results[index].policy)
            let rec = index == recommended ? " rec" : ""
            out +=
                "<rect class=\"bar \(className)\(rec)\" data-policy=\"\(index)\" x=\"\(c(x))\" y=\"\(c(barTop))\" width=\"\(c(barWidth))\" height=\"\(c(max(barHeight, 0.5)))\">"
                + "<title>\(name): \(format(value)) \(axis)</title></rect>\n"
            if named {
                out += "<text class=\"val\" x=\"\(c(x + barWidth / 2))\" y=\"\(c(barTop - 4))\" text-anchor=\"middle\">\(format(value))</text>\n"
                out +=
                    "<text class=\"policy-name\" x=\"\(c(x + barWidth / 2))\" y=\"\(c(top + plotHeight + 16))\" text-anchor=\"middle\">\(Self.escape(results[index].policy, limit: 16))</text>\n"
            }
        }
        out += "</g>\n"
        out +=
            "<g class=\"axis\"><line x1=\"\(c(left))\" x2=\"\(c(width - right))\" y1=\"\(c(top + plotHeight))\" y2=\"\(c(top + plotHeight))\"/>"
            + "<line x1=\"\(c(left))\" x2=\"\(c(left))\" y1=\"\(c(top))\" y2=\"\(c(top + plotHeight))\"/>"
        out +=
            "<text class=\"axis-title\" x=\"\(c(left + plotWidth / 2))\" y=\"\(c(height - 8))\" text-anchor=\"middle\">"
            + (named ? "policy" : "policy 1 … \(values.count), in grid order") + "</text>"
        out += "<text class=\"axis-title\" transform=\"translate(14 \(c(top + plotHeight / 2))) rotate(-90)\" text-anchor=\"middle\">\(axis)</text></g>\n"
        return out + "</svg>\n"
    }

    /// Every policy as a point at (guesses let through, honest lockout minutes), the frontier
    /// as a step line, the recommended point ringed and named.
    func frontierPlot() -> String {
        let width = 1200.0, height = 440.0
        let left = 76.0, right = 24.0, top = 20.0, bottom = 52.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let xs = results.map { Double($0.guessesLetThrough) }, ys = results.map(\.honestLockoutMinutes)
        let xScale = Self.ticks(xs.min() ?? 0, xs.max() ?? 1), yScale = Self.ticks(0, ys.max() ?? 1)
        func x(_ value: Double) -> Double { left + plotWidth * (value - xScale.low) / (xScale.high - xScale.low) }
        func y(_ value: Double) -> Double { top + plotHeight * (1 - (value - yScale.low) / (yScale.high - yScale.low)) }
        let c = Self.coordinate
        var out =
            "<svg class=\"chart frontier\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"guesses let through against honest lockout minutes\">\n"
        out += "<g class=\"grid\">"
        var labels = ""
        var tick = xScale.low
        while tick <= xScale.high + xScale.step / 2 {
            out += "<line x1=\"\(c(x(tick)))\" x2=\"\(c(x(tick)))\" y1=\"\(c(top))\" y2=\"\(c(top + plotHeight))\"/>"
            labels += "<text x=\"\(c(x(tick)))\" y=\"\(c(top + plotHeight + 16))\" text-anchor=\"middle\">\(Self.tickLabel(tick, step: xScale.step))</text>"
            tick += xScale.step
        }
        tick = yScale.low
        while tick <= yScale.high + yScale.step / 2 {
            out += "<line x1=\"\(c(left))\" x2=\"\(c(left + plotWidth))\" y1=\"\(c(y(tick)))\" y2=\"\(c(y(tick)))\"/>"
            labels += "<text x=\"\(c(left - 6))\" y=\"\(c(y(tick) + 4))\" text-anchor=\"end\">\(Self.tickLabel(tick, step: yScale.step))</text>"
            tick += yScale.step
        }
        out += "</g>\n<g class=\"ticks\">\(labels)</g>\n"
        out +=
            "<g class=\"axis\"><line x1=\"\(c(left))\" x2=\"\(c(left + plotWidth))\" y1=\"\(c(top + plotHeight))\" y2=\"\(c(top + plotHeight))\"/>"
            + "<line x1=\"\(c(left))\" x2=\"\(c(left))\" y1=\"\(c(top))\" y2=\"\(c(top + plotHeight))\"/>"
            + "<text class=\"axis-title\" x=\"\(c(left + plotWidth / 2))\" y=\"\(c(height - 10))\" text-anchor=\"middle\">guesses let through (attackers' failures allowed)</text>"
            + "<text class=\"axis-title\" transform=\"translate(16 \(c(top + plotHeight / 2))) rotate(-90)\" text-anchor=\"middle\">honest lockout minutes</text></g>\n"

        // The step line: from each frontier point right to the next one's guesses, then down.
        let front = frontier.sorted { xs[$0] != xs[$1] ? xs[$0] < xs[$1] : $0 < $1 }
        if let first = front.first {
            var path = "M\(c(x(xs[first]))) \(c(y(ys[first])))"
            for index in front.dropFirst() { path += "H\(c(x(xs[index])))V\(c(y(ys[index])))" }
            out += "<path class=\"step\" d=\"\(path)\"/>\n"
        }
        let onFrontier = Set(frontier)
        out += "<g class=\"points\">\n"
        for index in results.indices {
            let r = results[index]
            out +=
                "<circle class=\"pt\(onFrontier.contains(index) ? " front" : "")\" data-policy=\"\(index)\" cx=\"\(c(x(xs[index])))\" cy=\"\(c(y(ys[index])))\" r=\"\(onFrontier.contains(index) ? 4.5 : 3.5)\">"
                + "<title>\(Self.escape(r.policy)): \(r.guessesLetThrough) guesses, \(Self.number(r.honestLockoutMinutes)) honest minutes</title></circle>\n"
        }
        out += "</g>\n"
        func label(_ text: String, at index: Int, className: String, dy: Double) -> String {
            let px = x(xs[index]), py = y(ys[index])
            let anchor = px > left + plotWidth * 0.7 ? "end" : "start"
            let dx = anchor == "end" ? -10.0 : 10.0
            let ty = min(max(py + dy, top + 12), top + plotHeight - 6)
            return "<text class=\"\(className)\" x=\"\(c(px + dx))\" y=\"\(c(ty))\" text-anchor=\"\(anchor)\">\(text)</text>\n"
        }
        if mode == .compare || results.count <= Self.namedColumns {
            // Name every point; policies at the same point share one label.
            var groups: [[Int]] = []
            for index in results.indices {
                if let group = groups.firstIndex(where: { xs[$0[0]] == xs[index] && ys[$0[0]] == ys[index] }) {
                    groups[group].append(index)
                } else {
                    groups.append([index])
                }
            }
            for group in groups where group.first != recommended {
                out += label(group.map { Self.escape(results[$0].policy, limit: 40) }.joined(separator: ", "), at: group[0], className: "pt-label", dy: -6)
            }
        }
        if let recommended, results.indices.contains(recommended) {
            out += "<circle class=\"rec-ring\" cx=\"\(c(x(xs[recommended])))\" cy=\"\(c(y(ys[recommended])))\" r=\"9\"/>\n"
            out += label("recommended: \(Self.escape(results[recommended].policy, limit: 60))", at: recommended, className: "rec-label", dy: -12)
        }
        return out + "</svg>\n"
    }

    /// One lane per user and per address of ``timeline``: successes (top row), allowed failures
    /// (middle) and refused attempts (bottom) as marks, locks as bars behind them.
    func timelineSection() -> String {
        let t = timeline
        var out =
            "<p class=\"note\">Under <b>\(results.indices.contains(timelinePolicy) ? Self.escape(results[timelinePolicy].policy) : "")</b>"
            + "\(mode == .sweep ? " (the recommended policy)" : " (the first policy compared)"): the \(LabTimeline.lanesPerKind) users and the \(LabTimeline.lanesPerKind) client addresses with the most attempts. "
            + "Attempts less than 1/\(LabTimeline.columns) of the axis apart are drawn as one mark, and so are locks: \(t.attemptsShown) attempts as \(t.marksDrawn) marks.</p>\n"
        if !t.lanes.contains(where: { $0.kind == .address }) {
            out += "<p class=\"note\">No attempt carries a client address: no address lanes.</p>\n"
        }
        guard !t.lanes.isEmpty else { return out + "<p class=\"note\">No attempt to show.</p>\n" }
        let width = 1200.0, labelWidth = 250.0, right = 16.0, laneHeight = 30.0, top = 30.0, bottom = 44.0
        let plotWidth = width - labelWidth - right
        let height = top + laneHeight * Double(t.lanes.count) + bottom
        let span = Double(t.endMilliseconds - t.startMilliseconds)
        func x(_ at: Int64) -> Double { labelWidth + plotWidth * Double(at - t.startMilliseconds) / span }
        let column = plotWidth / Double(LabTimeline.columns)
        let c = Self.coordinate
        out +=
            "<svg class=\"chart timeline\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"attempts and locks over time\">\n"
        // The legend.
        var lx = labelWidth
        for (className, text) in [("m0", "success"), ("m1", "allowed failure"), ("m2", "refused attempt"), ("lock", "lock"), ("lock perm", "permanent lock")] {
            out += "<rect class=\"\(className)\" x=\"\(c(lx))\" y=\"8\" width=\"12\" height=\"12\"/><text x=\"\(c(lx + 16))\" y=\"18\">\(text)</text>"
            lx += 24 + Double(text.count) * 6.5
        }
        out += "\n"
        for (number, lane) in t.lanes.enumerated() {
            let laneTop = top + laneHeight * Double(number)
            out += "<g class=\"lane \(lane.kind.rawValue)\">"
            out += "<rect class=\"lane-bg\" x=\"\(c(labelWidth))\" y=\"\(c(laneTop + 2))\" width=\"\(c(plotWidth))\" height=\"\(c(laneHeight - 4))\"/>"
            out +=
                "<text class=\"lane-name\" x=\"4\" y=\"\(c(laneTop + 14))\">\(lane.kind == .user ? "user" : "address") \(Self.escape(lane.name, limit: 28))<title>\(Self.escape(lane.name))</title></text>"
            out +=
                "<text class=\"lane-meta\" x=\"4\" y=\"\(c(laneTop + 26))\">\(lane.attempts) attempts, \(lane.party), \(lane.locks.reduce(0) { $0 + $1.count }) locks</text>\n"
            for bar in lane.locks {
                let x0 = x(bar.startMilliseconds), x1 = max(x(bar.endMilliseconds), x0 + 1)
                let what = bar.count == 1 ? (bar.permanent ? "permanent lock" : "lock") : "\(bar.count) locks"
                out +=
                    "<rect class=\"lock\(bar.permanent ? " perm" : "")\" x=\"\(c(x0))\" y=\"\(c(laneTop + 2))\" width=\"\(c(x1 - x0))\" height=\"\(c(laneHeight - 4))\">"
                    + "<title>\(what): \(Self.time(bar.startMilliseconds)) to \(Self.time(bar.endMilliseconds)) UTC</title></rect>\n"
            }
            for kind in LabTimeline.MarkKind.allCases {
                let marks = lane.marks.filter { $0.kind == kind }
                guard !marks.isEmpty else { continue }
                let rowTop = laneTop + 4 + Double(kind.rawValue) * 8
                var path = ""
                for mark in marks { path += "M\(c(labelWidth + column * Double(mark.column))) \(c(rowTop))h\(c(max(column, 1.2)))v6h-\(c(max(column, 1.2)))z" }
                let count = marks.reduce(0) { $0 + $1.count }
                out +=
                    "<path class=\"m\(kind.rawValue)\" d=\"\(path)\"><title>\(count) \(["successes", "allowed failures", "refused attempts"][kind.rawValue])</title></path>\n"
            }
            out += "</g>\n"
        }
        // The time axis.
        let axisY = top + laneHeight * Double(t.lanes.count) + 2
        out += "<g class=\"axis\"><line x1=\"\(c(labelWidth))\" x2=\"\(c(labelWidth + plotWidth))\" y1=\"\(c(axisY))\" y2=\"\(c(axisY))\"/>"
        for step in 0...4 {
            let at = t.startMilliseconds + Int64(span * Double(step) / 4)
            out += "<line x1=\"\(c(x(at)))\" x2=\"\(c(x(at)))\" y1=\"\(c(axisY))\" y2=\"\(c(axisY + 5))\"/>"
            let anchor = step == 0 ? "start" : step == 4 ? "end" : "middle"
            out += "<text x=\"\(c(x(at)))\" y=\"\(c(axisY + 18))\" text-anchor=\"\(anchor)\">\(Self.time(at))</text>"
        }
        out += "<text class=\"axis-title\" x=\"\(c(labelWidth + plotWidth / 2))\" y=\"\(c(axisY + 36))\" text-anchor=\"middle\">time (UTC)</text></g>\n"
        return out + "</svg>\n"
    }
}
