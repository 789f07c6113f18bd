import Foundation

/// Everything one run measured, the machine it ran on, and the goals read against it; written
/// as `latest.json` and printed as the `latest.md` table.
struct BenchReport: Codable {
    struct Machine: Codable {
        var cpu: String
        var cores: Int
        var kernel: String
        var date: String
        var command: String

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
        var goal: String
        var figures: String
        var met: Bool
    }

    var machine: Machine
    var quick: Bool
    var latency: [LatencyRow] = []
    /// Each peer's smallest stable period (frames) found by the trial runs.
    var smallestStablePeriod: [String: Int] = [:]
    var cpu: [CPURow] = []
    var offlineAudioSecondsPerCPUSecond = 0.0
    var offlineVoices = 0
    var preload: PreloadResult?
    var underLoad: [LoadRow] = []
    var goals: [Goal] = []

    // MARK: Reading

    func latency(_ client: String, _ label: String) -> LatencyRow? {
        latency.first { $0.client == client && $0.label == label }
    }

    /// The median of the client's windows with `voices` voices.
    func cpu(_ client: String, _ voices: Int) -> Double? {
        let shares = cpu.filter { $0.client == client && $0.voices == voices }.map(\.coreShare).sorted()
        guard !shares.isEmpty else { return nil }
        let middle = shares.count / 2
        return shares.count % 2 == 1 ? shares[middle] : (shares[middle - 1] + shares[middle]) / 2
    }

    /// sfx's lowest-latency setting: its smallest buffer (as the card saw it) whose run had no
    /// xrun and heard every click.
    var sfxSmallestStable: LatencyRow? {
        latency.filter { $0.client == "sfx" && $0.xruns == 0 && $0.unmatchedTriggers == 0 && $0.unmatchedOnsets == 0 }
            .min { ($0.setting?.buffer ?? .max, $0.requestedPeriod ?? .max) < ($1.setting?.buffer ?? .max, $1.requestedPeriod ?? .max) }
    }

    /// The floor client playing silence at sfx's default period: what the virtual card and ALSA's
    /// write path cost every client, in fractions of a core.
    var cardBaseline: Double? { cpu.first { $0.client == Peer.floor.displayName }?.coreShare }

    /// CPU per extra voice: (K = 256 − K = 1) / 255, in fractions of a core.
    func marginalPerVoice(_ client: String) -> Double? {
        guard let many = cpu(client, 256), let one = cpu(client, 1) else { return nil }
        return (many - one) / 255
    }

    /// CPU per extra voice as the least-squares slope over every K measured: steadier than two
    /// points when one short window is noisy. In fractions of a core.
    func fittedPerVoice(_ client: String) -> Double? {
        let points = BenchOptions.voiceCounts.compactMap { k in cpu(client, k).map { (Double(k), $0) } }
        guard points.count >= 2 else { return nil }
        let meanK = points.map(\.0).reduce(0, +) / Double(points.count)
        let meanY = points.map(\.1).reduce(0, +) / Double(points.count)
        let covariance = points.map { ($0.0 - meanK) * ($0.1 - meanY) }.reduce(0, +)
        let variance = points.map { ($0.0 - meanK) * ($0.0 - meanK) }.reduce(0, +)
        return covariance / variance
    }

    /// "its smallest stable setting, period/buffer" for the row that is sfx's smallest stable.
    static func smallestName(_ row: LatencyRow) -> String {
        "its smallest stable setting, \(row.setting?.text ?? row.label)"
    }

    // MARK: Goals

    /// Reads the figures against the benchmark's goals.
    mutating func judge() {
        goals = []
        let floor = Peer.floor.displayName
        for period in BenchOptions.periods {
            guard let sfx = latency("sfx", "period \(period)"), let base = latency(floor, "period \(period)") else { continue }
            let half = Double(period) / 48 / 2
            goals.append(Goal(goal: "sfx p50 and p95 ≤ floor + ½ period (\(format(half)) ms) at period \(period)",
                              figures: "p50 \(format(sfx.milliseconds.p50)) vs \(format(base.milliseconds.p50)); p95 \(format(sfx.milliseconds.p95)) vs \(format(base.milliseconds.p95))",
                              met: sfx.milliseconds.p50 <= base.milliseconds.p50 + half && sfx.milliseconds.p95 <= base.milliseconds.p95 + half))
        }
        if let sfx = sfxSmallestStable {
            for peer in [Peer.openAL, .sdlMixer] {
                if let peerDefault = latency(peer.displayName, "default") {
                    let ratio = peerDefault.milliseconds.p50 / sfx.milliseconds.p50
                    goals.append(Goal(goal: "sfx (\(Self.smallestName(sfx))) p50 ≥ 10× below \(peer.displayName) at its default",
                                      figures: "\(format(sfx.milliseconds.p50)) vs \(format(peerDefault.milliseconds.p50)) ms: \(format(ratio, digits: 1))×",
                                      met: ratio >= 10))
                }
                if let small = latency.first(where: { $0.client == peer.displayName && $0.label.hasPrefix("smallest") }) {
                    goals.append(Goal(goal: "sfx (\(Self.smallestName(sfx))) p50 and p95 below \(peer.displayName) at its smallest stable setting",
                                      figures: "p50 \(format(sfx.milliseconds.p50)) vs \(format(small.milliseconds.p50)); p95 \(format(sfx.milliseconds.p95)) vs \(format(small.milliseconds.p95)) ms",
                                      met: sfx.milliseconds.p50 < small.milliseconds.p50 && sfx.milliseconds.p95 < small.milliseconds.p95))
                }
            }
        }
        if let sfx = marginalPerVoice("sfx"), let openAL = marginalPerVoice(Peer.openAL.displayName) {
            goals.append(Goal(goal: "sfx marginal CPU per voice ≤ ½ of OpenAL Soft's",
                              figures: "\(format(sfx * 1e6, digits: 1)) vs \(format(openAL * 1e6, digits: 1)) µs/s per voice",
                              met: sfx <= openAL / 2))
        }
        if let share = cpu("sfx", 256), let baseline = cardBaseline {
            goals.append(Goal(goal: "sfx with 256 voices < 2 % of one core, above the card's own cost (the floor playing silence at the same period)",
                              figures: "\(format((share - baseline) * 100)) % (process total \(format(share * 100)) %, floor \(format(baseline * 100)) %)",
                              met: share - baseline < 0.02))
        }
        for period in BenchOptions.loadPeriods {
            guard let sfx = underLoad.first(where: { $0.client == "sfx" && $0.period == period }),
                  let base = underLoad.first(where: { $0.client == floor && $0.period == period }) else { continue }
            goals.append(Goal(goal: "sfx xruns under load ≤ the floor's at period \(period)",
                              figures: "\(sfx.xruns) vs \(base.xruns) in \(format(sfx.seconds, digits: 0)) s",
                              met: sfx.xruns <= base.xruns))
        }
    }

    // MARK: Writing

    func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return try encoder.encode(self)
    }

    /// The Markdown table.
    func markdown() -> String {
        var lines = [
            "# sfx benchmark\(quick ? " (quick)" : "")",
            "",
            "Machine: \(machine.cpu), \(machine.cores) cores, Linux \(machine.kernel); \(machine.date)",
            "Command: `\(machine.command)`",
            "Card: sfx virtual card (`sfxcard`, behind ALSA plug), 48 kHz stereo; period/buffer in frames as the card's hw_params logged them.",
            "",
            "## Trigger → DAC latency (ms)",
            "",
            "| client | setting | period/buffer | p50 | p95 | p99 | max | matched | unmatched trig/onset | xruns | p50 ÷ floor | p50 − floor |",
            "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for row in latency {
            let base = row.requestedPeriod.flatMap { latency(Peer.floor.displayName, "period \($0)") }
            let versus = base.map { (format(row.milliseconds.p50 / $0.milliseconds.p50, digits: 2), format(row.milliseconds.p50 - $0.milliseconds.p50)) } ?? ("", "")
            lines.append("| \(row.client) | \(row.label) | \(row.setting?.text ?? "?") | \(format(row.milliseconds.p50)) | \(format(row.milliseconds.p95)) | \(format(row.milliseconds.p99)) | \(format(row.milliseconds.max)) | \(row.matched)/\(row.triggers) | \(row.unmatchedTriggers)/\(row.unmatchedOnsets) | \(row.xruns) | \(row.client == Peer.floor.displayName ? "" : versus.0) | \(row.client == Peer.floor.displayName ? "" : versus.1) |")
        }
        for sfx in [sfxSmallestStable, latency("sfx", "period \(BenchOptions.defaultPeriod)")].compactMap({ $0 }) {
            let name = sfx.label == "period \(BenchOptions.defaultPeriod)" ? "\(sfx.label) (its default)" : Self.smallestName(sfx)
            lines += ["", "sfx at \(name) against each peer, p50 and p95 (peer ÷ sfx):", ""]
            for row in latency where row.client == Peer.openAL.displayName || row.client == Peer.sdlMixer.displayName {
                lines.append("- \(row.client), \(row.label): \(format(row.milliseconds.p50 / sfx.milliseconds.p50, digits: 1))× (p50), \(format(row.milliseconds.p95 / sfx.milliseconds.p95, digits: 1))× (p95)")
            }
        }
        lines += ["", "## CPU per second of audio (% of one core), K looping voices, each client at its default setting", ""]
        let clients = cpu.reduce(into: [String]()) { if !$0.contains($1.client) && $1.client != Peer.floor.displayName { $0.append($1.client) } }
        lines.append("| client | period/buffer | " + BenchOptions.voiceCounts.map { "K=\($0)" }.joined(separator: " | ") + " | per extra voice (µs/s) | ÷ sfx | fit over all K (µs/s) |")
        lines.append("|---|---|" + String(repeating: "---:|", count: BenchOptions.voiceCounts.count + 3))
        let sfxMarginal = marginalPerVoice("sfx")
        for client in clients {
            let cells = BenchOptions.voiceCounts.map { cpu(client, $0).map { format($0 * 100, digits: 3) } ?? "–" }
            let marginal = marginalPerVoice(client)
            let ratio = marginal.flatMap { m in sfxMarginal.map { format(m / $0, digits: 1) + "×" } } ?? ""
            let setting = cpu.first { $0.client == client }?.setting?.text ?? "?"
            let fitted = fittedPerVoice(client).map { format($0 * 1e6, digits: 2) } ?? "–"
            lines.append("| \(client) | \(setting) | \(cells.joined(separator: " | ")) | \(marginal.map { format($0 * 1e6, digits: 2) } ?? "–") | \(ratio) | \(fitted) |")
        }
        if let baseline = cardBaseline, let floorSetting = cpu.first(where: { $0.client == Peer.floor.displayName })?.setting {
            let above = BenchOptions.voiceCounts.map { k in cpu("sfx", k).map { "K=\(k) \(format(($0 - baseline) * 100, digits: 3))" } ?? "" }
            lines += ["", "Baseline: the floor client playing silence at \(floorSetting.text) costs \(format(baseline * 100, digits: 3)) % of a core (the virtual card's own work and ALSA's write path, paid by every client at that period). sfx above it, %: \(above.joined(separator: ", "))."]
        }
        lines += ["", "sfx offline render (OfflineMix), \(offlineVoices) looping voices: \(format(offlineAudioSecondsPerCPUSecond, digits: 1)) s of audio per CPU second."]
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
        lines += ["", "## Goals", "", "| goal | figures | met |", "|---|---|---|"]
        for goal in goals { lines.append("| \(goal.goal) | \(goal.figures) | \(goal.met ? "yes" : "NO") |") }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// A figure with `digits` decimals; "–" when it is not a number.
func format(_ value: Double, digits: Int = 2) -> String {
    value.isFinite ? String(format: "%.\(digits)f", value) : "–"
}
