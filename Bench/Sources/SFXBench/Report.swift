import Foundation
import SFXBenchMethod

/// Everything one run measured, the machine it ran on, and the goals read against it; written
/// as `latest.json` and printed as the `latest.md` table (ReportTable.swift).
struct BenchReport: Codable {
    struct Machine: Codable {
        var cpu: String
        var cores: Int
        var kernel: String
        var date: String
        var command: String
        /// Wall time of the whole run, filled in at its end.
        var minutes = 0.0

        static func current(command: String) -> Machine {
            let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
            let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
                .flatMap { $0.split(separator: ":", maxSplits: 1).last }.map { $0.trimmingCharacters(in: .whitespaces) }
            let kernel = (try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8)) ?? "unknown"
            return Machine(cpu: model ?? "unknown", cores: ProcessInfo.processInfo.activeProcessorCount,
                           kernel: kernel.trimmingCharacters(in: .whitespacesAndNewlines),
                           date: ISO8601DateFormatter().string(from: Date()), command: command)
        }
    }

    struct Goal: Codable {
        /// The same words in every run, so that `--repeat` can line the runs' verdicts up.
        var goal: String
        var figures: String
        var verdict: Verdict
    }

    var machine: Machine
    var quick: Bool
    /// How the virtual card's playback pointer moved in this run (`--pointer`): "period" or "frame".
    var cardPointer: String?
    /// The smallest-stable rule as this run applied it, for the table.
    var stableRule = ""
    var latency: [LatencyRow] = []
    /// Every client's search for its smallest stable setting (the found one is also in `latency`).
    var stable: [StableResult] = []
    /// Every CPU window, in the order measured.
    var cpu: [CPURow] = []
    /// Clients that refused a voice count, and why; their fit stops below it.
    var cpuLimits: [String: String] = [:]
    /// Per client: the fit over its windows (CPUFit.swift).
    var cpuFits: [CPUFit] = []
    var offlineAudioSecondsPerCPUSecond = 0.0
    var offlineVoices = 0
    var preload: PreloadResult?
    var underLoad: [LoadRow] = []
    /// Exec → DAC of `sfx play tock` with and without the daemon, and aplay (ExecLatency.swift).
    var exec: [ExecLatency.Row] = []
    /// Sizes on disk and the daemon's idle memory (Footprint.swift); nil in runs saved before it.
    var footprint: Footprint.Result?
    /// Sound in a game world: CPU per extra voice, sfx's Mixer beside OpenAL Soft (World.swift);
    /// nil in runs saved before it.
    var world: World.Result?
    /// `play(_:at:)` accuracy (Schedule.swift); nil in runs saved before it.
    var schedule: [Schedule.Row]?
    /// A sound event against a plain play (EventCost.swift); nil in runs saved before it.
    var events: [EventCost.Row]?
    var goals: [Goal] = []

    // MARK: Reading

    func latency(_ client: String, _ label: String) -> LatencyRow? {
        latency.first { $0.client == client && $0.label == label }
    }

    /// The client's smallest stable setting, nil when none of its candidates was stable.
    func smallestStable(_ client: String) -> LatencyRow? {
        stable.first { $0.client == client }?.row
    }

    /// The floor's row at exactly the same period and buffer as `row`, as the card saw them.
    func floorRow(matching row: LatencyRow) -> LatencyRow? {
        guard row.client != Peer.floor.displayName, let setting = row.setting else { return nil }
        return latency.first { $0.client == Peer.floor.displayName && $0.setting?.period == setting.period && $0.setting?.buffer == setting.buffer }
    }

    func cpuFit(_ client: String) -> CPUFit? { cpuFits.first { $0.client == client } }

    /// sfx in rewind mode with one looping voice: its windows' mean (nil without windows).
    var rewindIdle: SampleMean? {
        SampleMean(cpu.filter { $0.client == "sfx (rewind)" }.map(\.coreShare))
    }

    /// OpenAL Soft at its default with one looping voice: its windows' mean.
    var openALIdle: SampleMean? {
        SampleMean(cpu.filter { $0.client == Peer.openAL.displayName && $0.voices == 1 }.map(\.coreShare))
    }

    /// The floor playing silence at sfx's default period: the card's own cost, windows pooled.
    var cardBaseline: SampleMean? {
        SampleMean(cpu.filter { $0.client == Peer.floor.displayName }.map(\.coreShare))
    }

    // MARK: Goals

    /// Fits the CPU windows and reads the figures against the benchmark's goals; a smoke test
    /// (`--quick`) judges none.
    mutating func analyse() {
        cpuFits = ["sfx", Peer.openAL.displayName, Peer.sdlMixer.displayName].compactMap { CPUFit(client: $0, rows: cpu) }
        goals = quick ? [] : judged()
    }

    private func judged() -> [Goal] {
        var goals: [Goal] = []
        let floor = Peer.floor.displayName
        for period in BenchOptions.periods {
            guard let sfx = latency("sfx", "period \(period)"), let base = latency(floor, "period \(period)") else { continue }
            let half = Double(period) / 48 / 2
            goals.append(Goal(goal: "sfx p50 and p95 ≤ floor + ½ period (\(format(half)) ms) at period \(period) × 3",
                              figures: "p50 \(format(sfx.milliseconds.p50)) vs \(format(base.milliseconds.p50)); p95 \(format(sfx.milliseconds.p95)) vs \(format(base.milliseconds.p95)) ms",
                              verdict: .holds(sfx.milliseconds.p50 <= base.milliseconds.p50 + half && sfx.milliseconds.p95 <= base.milliseconds.p95 + half)))
        }
        let sfxStable = smallestStable("sfx")
        for peer in [Peer.openAL, .sdlMixer] {
            let tenfold = "sfx at its smallest stable setting: p50 ≥ 10× below \(peer.displayName) at its default"
            let below = "sfx at its smallest stable setting: p50 and p95 below \(peer.displayName) at its smallest stable setting"
            guard let sfx = sfxStable else {
                goals += [tenfold, below].map { Goal(goal: $0, figures: "sfx had no stable setting", verdict: .notJudged) }
                continue
            }
            let at = sfx.setting?.text ?? "?"
            if let peerDefault = latency(peer.displayName, "default") {
                let ratio = peerDefault.milliseconds.p50 / sfx.milliseconds.p50
                goals.append(Goal(goal: tenfold, figures: "sfx \(at): \(format(sfx.milliseconds.p50)) vs \(format(peerDefault.milliseconds.p50)) ms: \(format(ratio, digits: 1))×",
                                  verdict: .holds(ratio >= 10)))
            }
            if let small = smallestStable(peer.displayName) {
                goals.append(Goal(goal: below,
                                  figures: "sfx \(at) vs \(small.setting?.text ?? "?"): p50 \(format(sfx.milliseconds.p50)) vs \(format(small.milliseconds.p50)); p95 \(format(sfx.milliseconds.p95)) vs \(format(small.milliseconds.p95)) ms",
                                  verdict: .holds(sfx.milliseconds.p50 < small.milliseconds.p50 && sfx.milliseconds.p95 < small.milliseconds.p95)))
            } else {
                goals.append(Goal(goal: below, figures: "\(peer.displayName) had no stable setting", verdict: .notJudged))
            }
        }
        let perVoice = "sfx's CPU per extra voice ≤ ½ of OpenAL Soft's (slopes of the fits)"
        if let sfx = cpuFit("sfx"), let openAL = cpuFit(Peer.openAL.displayName) {
            let ratio = sfx.combinedSlopeInterval.flatMap { s in openAL.combinedSlopeInterval.flatMap { s.divided(by: $0) } }
            goals.append(Goal(goal: perVoice,
                              figures: "\(CPUFit.microseconds(sfx.slope, sfx.slopeInterval)) vs \(CPUFit.microseconds(openAL.slope, openAL.slopeInterval)) µs/s per voice; sfx ÷ OpenAL Soft \(CPUFit.ratioText(sfx.slope, openAL.slope, ratio, denominatorName: "OpenAL Soft's"))",
                              verdict: .atMost(ratio, 0.5)))
        } else {
            goals.append(Goal(goal: perVoice, figures: "a fit is missing (fewer than three windows)", verdict: .notJudged))
        }
        let above = "sfx with 256 voices < 2 % of one core above the card's own cost (the floor playing silence)"
        if let sfx = cpuFit("sfx"), let at256 = sfx.combinedValueInterval(at: 256), let baseline = cardBaseline, let floorInterval = baseline.interval(level: CPUFit.combinedLevel) {
            let difference = at256.minus(floorInterval)
            let point = sfx.value(at: 256) - baseline.mean
            goals.append(Goal(goal: above,
                              figures: "\(CPUFit.percent(point, difference, unit: " %")) (fit at K=256 \(format(sfx.value(at: 256) * 100)) %, floor \(format(baseline.mean * 100)) %)",
                              verdict: .atMost(difference, 0.02)))
        } else {
            goals.append(Goal(goal: above, figures: "a fit or the floor's windows are missing", verdict: .notJudged))
        }
        if let world {
            let comparisons = World.comparisons(world)
            for feature in World.Feature.judged {
                let goal = "sound in a game world, \(feature.title): sfx's CPU per extra voice ≤ ½ of OpenAL Soft's"
                if let c = comparisons.first(where: { $0.feature == feature }) {
                    goals.append(Goal(goal: goal,
                                      figures: "\(CPUFit.microseconds(c.sfx.slope, c.sfx.slopeInterval)) vs \(CPUFit.microseconds(c.openAL.slope, c.openAL.slopeInterval)) µs/s per voice; sfx ÷ OpenAL Soft \(CPUFit.ratioText(c.sfx.slope, c.openAL.slope, c.ratioInterval, denominatorName: "OpenAL Soft's"))",
                                      verdict: .atMost(c.ratioInterval, 0.5)))
                } else {
                    goals.append(Goal(goal: goal, figures: world.notMeasured[feature.rawValue] ?? "a fit is missing", verdict: .notJudged))
                }
            }
            let busGoal = "sound in a game world: one reverb bus's fixed cost (K-independent) ≤ OpenAL Soft's EFX reverb"
            if let bus = World.reverbBusCost(world) {
                goals.append(Goal(goal: busGoal,
                                  figures: "\(CPUFit.microseconds(bus.sfx, bus.sfxInterval)) vs \(CPUFit.microseconds(bus.openAL, bus.openALInterval)) µs/s (K = 1 windows, (d) − (a)); sfx ÷ OpenAL Soft \(CPUFit.ratioText(bus.sfx, bus.openAL, bus.ratioInterval, denominatorName: "OpenAL Soft's"))",
                                  verdict: .atMost(bus.ratioInterval, 1)))
            } else {
                goals.append(Goal(goal: busGoal, figures: "the K = 1 windows of (a) or (d) are missing", verdict: .notJudged))
            }
        }
        if let c = latency(BindingLatency.cClient, Latency.rewindLabel), let python = latency(BindingLatency.pythonClient, Latency.rewindLabel) {
            let difference = python.milliseconds.p50 - c.milliseconds.p50
            goals.append(Goal(goal: "sfx through Python: p50 trigger → DAC within 0.5 ms of the C API's",
                              figures: "\(python.setting?.text ?? "?"): Python p50 \(format(python.milliseconds.p50)), C API \(format(c.milliseconds.p50)) ms (\(difference >= 0 ? "+" : "")\(format(difference)))",
                              verdict: .holds(abs(difference) <= 0.5)))
        }
        if let sfx = latency(Latency.positionalRewindClient, Latency.rewindLabel) {
            goals.append(Goal(goal: "sfx in rewind mode, the click a positional voice: p50 ≤ 1.5 ms trigger → DAC",
                              figures: "\(sfx.setting?.text ?? "?"): p50 \(format(sfx.milliseconds.p50)), p95 \(format(sfx.milliseconds.p95)) ms",
                              verdict: .holds(sfx.milliseconds.p50 <= 1.5)))
        }
        if let sfx = latency("sfx (rewind)", Latency.rewindLabel), let base = latency("floor (rewind)", Latency.rewindLabel) {
            let pointer = cardPointer.map { " (the card's pointer per \($0))" } ?? ""
            goals.append(Goal(goal: "sfx in rewind mode: p50 ≤ 1.5 ms and p95 ≤ 2 ms trigger → DAC with a ≥ 20 ms buffer\(pointer)",
                              figures: "\(sfx.setting?.text ?? "?"): p50 \(format(sfx.milliseconds.p50)), p95 \(format(sfx.milliseconds.p95)) ms; floor (rewind) \(format(base.milliseconds.p50)), \(format(base.milliseconds.p95))",
                              verdict: .holds(sfx.milliseconds.p50 <= 1.5 && sfx.milliseconds.p95 <= 2)))
        }
        let rewindCPU = "sfx in rewind mode, one voice: CPU ≤ OpenAL Soft's at its default"
        if let rewind = rewindIdle, let openAL = openALIdle, let own = rewind.interval(level: CPUFit.combinedLevel),
           let theirs = openAL.interval(level: CPUFit.combinedLevel) {
            let difference = own.minus(theirs)
            goals.append(Goal(goal: rewindCPU,
                              figures: "\(format(rewind.mean * 100, digits: 3)) vs \(format(openAL.mean * 100, digits: 3)) % of a core (\(rewind.count) and \(openAL.count) windows); sfx − OpenAL Soft \(format((rewind.mean - openAL.mean) * 100, digits: 3)) [\(format(difference.low * 100, digits: 3)), \(format(difference.high * 100, digits: 3))] %",
                              verdict: .atMost(difference, 0)))
        } else {
            goals.append(Goal(goal: rewindCPU, figures: "too few windows", verdict: .notJudged))
        }
        if let sfx = underLoad.first(where: { $0.client == "sfx (rewind)" }), let base = underLoad.first(where: { $0.client == "floor (rewind)" }) {
            goals.append(Goal(goal: "sfx xruns under load ≤ the floor's in rewind mode",
                              figures: "\(sfx.xruns) vs \(base.xruns) in \(format(sfx.seconds, digits: 0)) s",
                              verdict: .holds(sfx.xruns <= base.xruns)))
        }
        for period in BenchOptions.loadPeriods {
            guard let sfx = underLoad.first(where: { $0.client == "sfx" && $0.period == period }),
                  let base = underLoad.first(where: { $0.client == floor && $0.period == period }) else { continue }
            goals.append(Goal(goal: "sfx xruns under load ≤ the floor's at period \(period) × 3",
                              figures: "\(sfx.xruns) vs \(base.xruns) in \(format(sfx.seconds, digits: 0)) s",
                              verdict: .holds(sfx.xruns <= base.xruns)))
        }
        goals += footprintGoals()
        return goals
    }

    func json() throws -> Data { try benchJSON(self) }
}

func benchJSON<T: Encodable>(_ value: T) throws -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
    return try encoder.encode(value)
}

/// A figure with `digits` decimals; "–" when it is not a number.
func format(_ value: Double, digits: Int = 2) -> String {
    value.isFinite ? String(format: "%.\(digits)f", value) : "–"
}
