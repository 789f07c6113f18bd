import Foundation
import SFXBenchMethod

/// One run's Markdown table (`latest.md`).
extension BenchReport {
    static let smokeTestNotice = "**Smoke test (`--quick`)**: short runs that check the set-up works. Its figures are not results (too few triggers and windows to resolve them from noise) and it judges no goal; run `Bench/run --repeat 3` on an idle machine for results."

    func markdown() -> String {
        var lines = ["# sfx benchmark\(quick ? " (smoke test)" : "")", ""]
        if quick { lines += [Self.smokeTestNotice, ""] }
        lines += [
            "Machine: \(machine.cpu), \(machine.cores) cores, Linux \(machine.kernel); \(machine.date); the run took \(format(machine.minutes, digits: 1)) minutes",
            "Command: `\(machine.command)`",
            "Card: sfx virtual card (`sfxcard`, behind ALSA plug), 48 kHz stereo; period/buffer in frames as the card's hw_params logged them.",
        ]
        lines += latencyLines() + execLines() + footprintLines() + stableLines() + cpuLines()
        if let world { lines += World.lines(world) }
        if let schedule { lines += Schedule.lines(schedule) }
        if let events { lines += EventCost.lines(events) }
        if let preload {
            lines += ["", "## Preload", "",
                      "\(preload.cues) cues (\(preload.formats.joined(separator: ", ")); 0.1–0.6 s, 22.05–48 kHz, mono and stereo) loaded with engine.load(contentsOf:): \(format(preload.milliseconds, digits: 1)) ms (\(format(preload.milliseconds / Double(max(preload.cues, 1)))) ms a cue), resident memory +\(format(preload.residentGrowthMB, digits: 2)) MB."]
        }
        if let load = underLoad.first?.load {
            lines += ["", "## Xruns with both cores loaded (\(load)), clicks playing", "",
                      "| client | period/buffer | seconds | xruns | p50 ms | p99 ms | max ms |", "|---|---|---:|---:|---:|---:|---:|"]
            for row in underLoad {
                lines.append("| \(row.client) | \(row.setting?.text ?? "?") | \(format(row.seconds, digits: 0)) | \(row.xruns) | \(format(row.latency.p50)) | \(format(row.latency.p99)) | \(format(row.latency.max)) |")
            }
        }
        lines += ["", "## Goals", ""]
        if quick {
            lines.append("None judged: this is a smoke test.")
        } else {
            lines += ["| goal | figures | verdict |", "|---|---|---|"]
            for goal in goals { lines.append("| \(goal.goal) | \(goal.figures) | \(goal.verdict.rawValue) |") }
            lines += ["", "A goal on CPU is met only when its interval lies wholly on the goal's side, not met when wholly on the other, and within noise otherwise. Latency and xrun goals compare the runs' percentiles and counts."]
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private func latencyLines() -> [String] {
        var lines = [
            "", "## Trigger → DAC latency (ms)", "",
            "| client | setting | period/buffer | runs | p50 | p95 | p99 | max | matched | unmatched trig/onset | xruns | p50 ÷ floor | p50 − floor |",
            "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        var below = false
        for row in latency {
            var versus = ("", "")
            if let base = floorRow(matching: row) {
                let difference = row.milliseconds.p50 - base.milliseconds.p50
                below = below || difference < 0
                versus = (format(row.milliseconds.p50 / base.milliseconds.p50, digits: 2), format(difference) + (difference < 0 ? " †" : ""))
            }
            lines.append("| \(row.client) | \(row.label) | \(row.setting?.text ?? "?") | \(row.runs) | \(format(row.milliseconds.p50)) | \(format(row.milliseconds.p95)) | \(format(row.milliseconds.p99)) | \(format(row.milliseconds.max)) | \(row.matched)/\(row.triggers) | \(row.unmatchedTriggers)/\(row.unmatchedOnsets) | \(row.xruns) | \(versus.0) | \(versus.1) |")
        }
        lines += ["", "`÷ floor` and `− floor` compare a row with the floor's row at the same period and buffer; none is shown where the floor has no such row."]
        if below {
            lines.append("† below the floor, which is the least an ALSA client can do at that setting: the difference is the runs' noise, not a gain.")
        }
        let peers = [Peer.openAL.displayName, Peer.sdlMixer.displayName]
        for (sfx, name) in [(smallestStable("sfx"), "its smallest stable setting"), (latency("sfx", "period \(BenchOptions.defaultPeriod)"), "its default")] {
            guard let sfx else { continue }
            lines += ["", "sfx at \(name), \(sfx.setting?.text ?? "?"), against each peer, p50 and p95 (peer ÷ sfx):", ""]
            for row in latency where peers.contains(row.client) {
                lines.append("- \(row.client), \(row.label) (\(row.setting?.text ?? "?")): \(format(row.milliseconds.p50 / sfx.milliseconds.p50, digits: 1))× (p50), \(format(row.milliseconds.p95 / sfx.milliseconds.p95, digits: 1))× (p95)")
            }
        }
        return lines
    }

    private func stableLines() -> [String] {
        var lines = [
            "", "## Smallest stable setting", "",
            stableRule,
            "",
            "| client | smallest stable | p50 ms | p95 ms | search |", "|---|---|---:|---:|---|",
        ]
        for result in stable {
            let found = result.row.map { "\($0.setting?.text ?? "?") (\($0.runs) runs)" } ?? "none"
            lines.append("| \(result.client) | \(found) | \(result.row.map { format($0.milliseconds.p50) } ?? "–") | \(result.row.map { format($0.milliseconds.p95) } ?? "–") | \(result.attempts.joined(separator: "; ")) |")
        }
        return lines
    }

    private func cpuLines() -> [String] {
        let counts = BenchOptions.voiceCounts
        var lines = [
            "", "## CPU per second of audio, K looping voices, each client at its default setting", "",
            "Process CPU (user + system, every thread) over windows of \(quick ? 1 : 4) s; every client and voice count gets the same number of windows, in a shuffled interleaved order. Mean of the windows at each K, % of one core (standard deviation):",
            "",
            "| client | period/buffer | " + counts.map { "K=\($0)" }.joined(separator: " | ") + " |",
            "|---|---|" + String(repeating: "---:|", count: counts.count),
        ]
        for fit in cpuFits {
            let cells = counts.map { k in
                fit.byVoices.first { $0.voices == k }.map { "\(format($0.mean * 100, digits: 3)) (\(format($0.standardDeviation * 100, digits: 3)))" } ?? "–"
            }
            lines.append("| \(fit.client) | \(fit.setting) | \(cells.joined(separator: " | ")) |")
        }
        for (client, refusal) in cpuLimits.sorted(by: { $0.key < $1.key }) {
            lines += ["", "\(client): \(refusal); its fit stops below that count."]
        }
        let sfx = cpuFit("sfx")
        let baseline = cardBaseline
        let floorSetting = cpu.first { $0.client == Peer.floor.displayName }?.setting?.text
        lines += [
            "",
            "Fit cost = a + b·K by least squares over every window; 95 % intervals (t); combined figures (÷ sfx, above the floor) from each part's 97.5 % interval propagated conservatively, so at least 95 %.",
            "",
            "| client | windows | one voice (idle), % [95 %] | idle above the floor at the same period, % [≥ 95 %] | per extra voice b, µs/s [95 %] | b ÷ sfx's b [≥ 95 %] | residual sd, % |",
            "|---|---:|---|---|---|---|---:|",
        ]
        for fit in cpuFits {
            var idle = "–", aboveFloor = "–"
            if let mean = fit.idle {
                idle = CPUFit.percent(mean.mean, fit.idleInterval)
                if let baseline, fit.setting == floorSetting, let own = mean.interval(level: CPUFit.combinedLevel), let floor = baseline.interval(level: CPUFit.combinedLevel) {
                    aboveFloor = CPUFit.percent(mean.mean - baseline.mean, own.minus(floor))
                }
            }
            var ratio = ""
            if let sfx, fit.client != "sfx", let own = fit.combinedSlopeInterval {
                ratio = CPUFit.ratioText(fit.slope, sfx.slope, sfx.combinedSlopeInterval.flatMap { own.divided(by: $0) }, denominatorName: "sfx's")
            }
            lines.append("| \(fit.client) | \(fit.windows) | \(idle) | \(aboveFloor) | \(CPUFit.microseconds(fit.slope, fit.slopeInterval)) | \(ratio) | \(format(fit.fit.residualVariance.squareRoot() * 100, digits: 3)) |")
        }
        if let baseline, let setting = cpu.first(where: { $0.client == Peer.floor.displayName })?.setting {
            lines += ["", "Floor: the floor client playing silence at \(setting.text), \(baseline.count) window\(baseline.count == 1 ? "" : "s"): \(CPUFit.percent(baseline.mean, baseline.interval(level: CPUFit.level), unit: " %")) of a core — the virtual card's own work (it consumes and times every frame in the client's process, as hardware would by DMA) and ALSA's write path, paid by every client at its period."]
        }
        let rewindRows = cpu.filter { $0.client == "sfx (rewind)" }
        if let rewind = rewindIdle, let setting = rewindRows.first?.setting?.text {
            let thread = SampleMean(rewindRows.compactMap(\.outputThreadShare)).map { ", the output thread \(format($0.mean * 100, digits: 3)) %" } ?? ""
            let openAL = openALIdle.map { "; OpenAL Soft at its default, K=1: \(CPUFit.percent($0.mean, $0.interval(level: CPUFit.level), unit: " %"))" } ?? ""
            lines += ["", "sfx in rewind mode (\(setting)), one looping voice, \(rewind.count) window\(rewind.count == 1 ? "" : "s") interleaved with the others: \(CPUFit.percent(rewind.mean, rewind.interval(level: CPUFit.level), unit: " %")) of a core\(thread)\(openAL)."]
        }
        lines += ["", "sfx offline render (OfflineMix), \(offlineVoices) looping voices: \(format(offlineAudioSecondsPerCPUSecond, digits: 1)) s of audio per CPU second."]
        return lines
    }
}
