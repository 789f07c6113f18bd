import Foundation

/// Trigger → DAC through sfx's two foreign front ends, beside each other: the C API
/// (`probes/sfxc`, linked against this build's libsfx) and the Python binding
/// (`probes/sfxpython`, bindings/python over the same libsfx), each one `play` of the click per
/// trigger at rewind mode's buffer (the engine's default mode), on a fresh card each run. Runs
/// alternate C, Python, C, Python… so that a shared machine's load falls on both alike; each
/// row pools its runs. What the Python row adds to the C row is the binding's cost on the way to
/// the DAC: ctypes' call, the options structure built per play.
enum BindingLatency {
    static let cClient = "sfx (C API)"
    static let pythonClient = "sfx (Python)"
    /// The C clients' executables: `sfxc` (Bench/probes/sfxc.c) and `sfxpython` (a copy of
    /// Bench/probes/sfxpython.py), as Bench/run builds and copies them.
    static let executables = (c: "sfxc", python: "sfxpython")

    static func rows(rounds: Int, count: Int, options: BenchOptions, scratch: URL) throws -> [LatencyRow] {
        let gaps = Latency.gaps(period: Latency.rewindPeriod, periods: Latency.rewindPeriods)
        let arguments = ["--count", "\(count)", "--min-gap-ms", "\(gaps.min)", "--max-gap-ms", "\(gaps.max)",
                         "--period", "\(Latency.rewindPeriod)", "--periods", "\(Latency.rewindPeriods)"]
        let repository = URL(filePath: FileManager.default.currentDirectoryPath)
        let python = ["PYTHONPATH": repository.appending(path: "bindings/python/src").path,
                      "SFX_LIBRARY": options.probes.appending(path: "libsfx.so.0").path,
                      "PYTHONDONTWRITEBYTECODE": "1"]
        var c: [LatencyRun] = [], py: [LatencyRun] = []
        for round in 1...rounds {
            for (executable, environment) in [(executables.c, [String: String]()), (executables.python, python)] {
                let run = try CardRun(scratch: scratch, name: "\(executable)-\(round)")
                defer { run.remove() }
                let output = try run.runClient(options.probes.appending(path: executable), arguments + ["--seed", "\(round)"],
                                               environment: environment)
                let measured = LatencyRun(triggers: output.split(separator: "\n").compactMap { UInt64($0) }, log: try run.log())
                if executable == executables.c { c.append(measured) } else { py.append(measured) }
            }
        }
        return [LatencyRow(client: cClient, label: Latency.rewindLabel, requestedPeriod: Latency.rewindPeriod, runs: c),
                LatencyRow(client: pythonClient, label: Latency.rewindLabel, requestedPeriod: Latency.rewindPeriod, runs: py)]
    }

    /// The printed lines of `sfx-bench --bindings`: the two rows and the difference of their p50s.
    static func lines(_ rows: [LatencyRow]) -> [String] {
        var lines = ["| client | setting | matched/triggers | xruns | p50 ms | p95 ms | max ms |", "|---|---|---:|---:|---:|---:|---:|"]
        for row in rows {
            lines.append("| \(row.client) | \(row.setting?.text ?? row.label) | \(row.matched)/\(row.triggers) | \(row.xruns) | "
                         + String(format: "%.3f | %.3f | %.3f |", row.milliseconds.p50, row.milliseconds.p95, row.milliseconds.max))
        }
        if rows.count == 2 {
            lines.append(String(format: "Python − C API: p50 %+.3f ms, p95 %+.3f ms (goal: p50 within 0.5 ms)",
                                rows[1].milliseconds.p50 - rows[0].milliseconds.p50, rows[1].milliseconds.p95 - rows[0].milliseconds.p95))
        }
        return lines
    }
}
