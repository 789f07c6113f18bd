import Foundation
import SFXBenchMethod

/// `--repeat N`: the whole benchmark N times; every figure as its median and spread across the
/// runs, every goal's verdict in each run, then each run's own table.
struct RepeatReport: Codable {
    struct Row: Codable {
        var figure: String
        var unit: String
        /// Nil in a run that lacks the figure.
        var values: [Double?]
        var spread: Spread?
    }

    var runs: [BenchReport]
    var rows: [Row]
    /// Goal → its verdict in each run ("–" when a run did not judge it).
    var verdicts: [String: [String]]
    var goalOrder: [String]

    init(runs: [BenchReport]) {
        self.runs = runs
        var order: [String] = [], units: [String: String] = [:], values: [String: [Double?]] = [:]
        for (index, run) in runs.enumerated() {
            for figure in run.figures() {
                if values[figure.name] == nil {
                    order.append(figure.name)
                    units[figure.name] = figure.unit
                    values[figure.name] = Array(repeating: nil, count: runs.count)
                }
                values[figure.name]![index] = figure.value
            }
        }
        rows = order.map { name in
            Row(figure: name, unit: units[name]!, values: values[name]!, spread: Spread(values[name]!.compactMap { $0 }))
        }
        goalOrder = []
        verdicts = [:]
        for (index, run) in runs.enumerated() {
            for goal in run.goals {
                if verdicts[goal.goal] == nil {
                    goalOrder.append(goal.goal)
                    verdicts[goal.goal] = Array(repeating: "–", count: runs.count)
                }
                verdicts[goal.goal]![index] = goal.verdict.rawValue
            }
        }
    }

    func json() throws -> Data { try benchJSON(self) }

    func markdown() -> String {
        let quick = runs.contains { $0.quick }
        var lines = ["# sfx benchmark, \(runs.count) runs\(quick ? " (smoke test)" : "")", ""]
        if quick { lines += [BenchReport.smokeTestNotice, ""] }
        if let first = runs.first {
            lines += ["Machine: \(first.machine.cpu), \(first.machine.cores) cores, Linux \(first.machine.kernel); runs from \(first.machine.date) to \(runs.last!.machine.date)",
                      "Command: `\(first.machine.command)`", ""]
        }
        lines += ["Each figure: the median of the \(runs.count) runs' values, their range (min – max), and each run's value in order. The intervals of a run's CPU figures are in its own table below.", "",
                  "| figure | unit | median | min – max | runs |", "|---|---|---:|---:|---|"]
        for row in rows {
            let each = row.values.map { $0.map { format($0, digits: digits(row.unit)) } ?? "–" }.joined(separator: ", ")
            let spread = row.spread.map { (format($0.median, digits: digits(row.unit)), "\(format($0.min, digits: digits(row.unit))) – \(format($0.max, digits: digits(row.unit)))") } ?? ("–", "–")
            let flagged = (row.spread?.min ?? 0) < 0 && !row.unit.contains("may be negative") ? " ⚠ negative in a run: noise" : ""
            lines.append("| \(row.figure)\(flagged) | \(row.unit) | \(spread.0) | \(spread.1) | \(each) |")
        }
        if !quick {
            lines += ["", "## Goals in each run", "", "| goal | verdicts |", "|---|---|"]
            for goal in goalOrder { lines.append("| \(goal) | \(verdicts[goal]!.joined(separator: ", ")) |") }
        }
        for (index, run) in runs.enumerated() {
            lines += ["", "---", "", "# Run \(index + 1) of \(runs.count)", ""]
            // Each run's table one heading level down.
            lines += run.markdown().split(separator: "\n", omittingEmptySubsequences: false).dropFirst(2).map { $0.hasPrefix("#") ? "#" + $0 : String($0) }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private func digits(_ unit: String) -> Int { unit == "frames" || unit == "count" ? 0 : 3 }
}

/// One named figure of a run, for `RepeatReport`.
struct Figure {
    var name: String
    var unit: String
    var value: Double
}

extension BenchReport {
    /// Every figure of the run under a name that is the same in every run.
    func figures() -> [Figure] {
        var figures: [Figure] = []
        for row in latency {
            let name = "latency, \(row.client), \(row.label)"
            if row.label == StableResult.label, let setting = row.setting {
                figures.append(Figure(name: "\(name): buffer", unit: "frames", value: Double(setting.buffer)))
            }
            figures += [Figure(name: "\(name): p50", unit: "ms", value: row.milliseconds.p50),
                        Figure(name: "\(name): p95", unit: "ms", value: row.milliseconds.p95),
                        Figure(name: "\(name): xruns", unit: "count", value: Double(row.xruns))]
        }
        for fit in cpuFits {
            figures += [Figure(name: "CPU, \(fit.client): per extra voice b", unit: "µs/s", value: fit.slope * 1e6),
                        Figure(name: "CPU, \(fit.client): b, 95 % low", unit: "µs/s (may be negative)", value: fit.slopeInterval.low * 1e6),
                        Figure(name: "CPU, \(fit.client): b, 95 % high", unit: "µs/s", value: fit.slopeInterval.high * 1e6)]
            if let idle = fit.idle { figures.append(Figure(name: "CPU, \(fit.client): one voice (idle)", unit: "% of a core", value: idle.mean * 100)) }
            if fit.client != "sfx", let sfx = cpuFit("sfx"), sfx.slope > 0 {
                figures.append(Figure(name: "CPU, \(fit.client): b ÷ sfx's b", unit: "×", value: fit.slope / sfx.slope))
            }
        }
        for c in world.map(World.comparisons) ?? [] {
            let name = "CPU in a game world, \(c.feature.rawValue)"
            figures += [Figure(name: "\(name): sfx b", unit: "µs/s", value: c.sfx.slope * 1e6),
                        Figure(name: "\(name): OpenAL Soft b", unit: "µs/s", value: c.openAL.slope * 1e6),
                        Figure(name: "\(name): sfx ÷ OpenAL Soft", unit: "×", value: c.ratio)]
        }
        if let baseline = cardBaseline { figures.append(Figure(name: "CPU, floor playing silence", unit: "% of a core", value: baseline.mean * 100)) }
        figures.append(Figure(name: "offline render, \(offlineVoices) voices", unit: "s of audio per CPU s", value: offlineAudioSecondsPerCPUSecond))
        if let preload {
            figures += [Figure(name: "preload, \(preload.cues) cues", unit: "ms", value: preload.milliseconds),
                        Figure(name: "preload, resident growth", unit: "MB", value: preload.residentGrowthMB)]
        }
        for row in underLoad {
            figures.append(Figure(name: "xruns under load, \(row.client), period \(row.period)", unit: "count", value: Double(row.xruns)))
        }
        return figures
    }
}
