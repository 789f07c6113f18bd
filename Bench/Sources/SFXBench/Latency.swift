import Foundation
import SFX

/// Trigger→DAC latency: a short click started at random times, each start's CLOCK_MONOTONIC
/// time taken just before the call that starts it, matched with the card's onset log (the
/// exact time the click's first frame reached the DAC).
///
/// Gaps between triggers are random, so triggers fall at every phase of the period, and longer
/// than the client's buffer plus a period plus 25 ms, so each click is followed by ≥ 10 ms of
/// silence at the DAC (the card logs an onset only after silence) and each onset falls before
/// the next trigger (so an onset belongs to the latest trigger before it).
enum Latency {
    /// A click: the same 96 frames the C clients play (Bench/probes/probe.c).
    static let click: [Float] = (0..<96).map { ($0 / 16) % 2 == 0 ? 0.5 : -0.5 }

    /// The gap range, in milliseconds, for a client whose buffer is `periods` × `period` frames.
    static func gaps(period: Int, periods: Int) -> (min: Double, max: Double) {
        let min = Double((periods + 1) * period) / 48.0 + 25
        return (min, min + 20)
    }

    /// A random schedule of gaps in nanoseconds (a seeded generator, so runs repeat).
    static func schedule(count: Int, gaps: (min: Double, max: Double), seed: UInt64) -> [UInt64] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let unit = Double(state >> 11) / Double(1 << 53)
            return UInt64((gaps.min + (gaps.max - gaps.min) * unit) * 1e6)
        }
    }

    /// Latencies in milliseconds of the onsets matched with triggers, and what did not match:
    /// an onset belongs to the latest trigger before it; a trigger with no onset, or a second
    /// onset for one trigger, is counted as unmatched.
    static func match(triggers: [UInt64], onsets: [UInt64]) -> (milliseconds: [Double], unmatchedTriggers: Int, unmatchedOnsets: Int) {
        var matched = Array(repeating: false, count: triggers.count)
        var latencies: [Double] = []
        var extra = 0
        for onset in onsets {
            // The latest trigger before the onset (triggers are in time order).
            var low = 0, high = triggers.count
            while low < high {
                let mid = (low + high) / 2
                if triggers[mid] < onset { low = mid + 1 } else { high = mid }
            }
            guard low > 0, !matched[low - 1] else { extra += 1; continue }
            matched[low - 1] = true
            latencies.append(Double(onset - triggers[low - 1]) / 1e6)
        }
        return (latencies, matched.filter { !$0 }.count, extra)
    }

    /// Triggers `count` clicks of sfx at `period` × 3 on a fresh card.
    static func sfx(period: Int, periods: Int = BenchOptions.periodsPerBuffer, count: Int, scratch: URL,
                    name: String, label: String? = nil) throws -> LatencyRow {
        let run = try CardRun(scratch: scratch, name: name)
        defer { run.remove() }
        let engine = try SfxOnCard.engine(run, period: period, periods: periods)
        let click = try engine.load(buffer: Self.click, sampleRate: 48_000, channels: 1, name: "click")
        let gaps = gaps(period: period, periods: periods)
        var next = Meter.now() + 200_000_000
        var triggers: [UInt64] = []
        triggers.reserveCapacity(count)
        for gap in schedule(count: count, gaps: gaps, seed: UInt64(period)) {
            next += gap
            Meter.sleep(until: next)
            triggers.append(Meter.now())
            engine.play(click)
        }
        Meter.sleep(seconds: gaps.max / 1000 + 0.1)
        engine.close()
        return LatencyRow(client: "sfx", label: label ?? "period \(period)", requestedPeriod: period,
                          triggers: triggers, log: try run.log())
    }

    /// sfx's smallest stable setting below the three-period buffers of the main table, found by
    /// the same rule as the peers' (`smallestStable`); nil when none of `sfxTrials` is stable.
    static func sfxSmallestStable(options: BenchOptions, scratch: URL) throws -> LatencyRow? {
        try smallestStable(sfxTrials, options: options) { setting, count, purpose in
            try sfx(period: setting.0, periods: setting.1, count: count, scratch: scratch,
                    name: "sfx-\(purpose)-\(setting.0)x\(setting.1)", label: "smallest stable (\(setting.0) × \(setting.1))")
        }
    }

    /// The rule for every client's smallest stable setting: the first candidate (smallest first)
    /// whose short trial, then whose full run, had no xrun and heard every click. A full run
    /// that xruns moves on to the next candidate, so a lucky trial does not stand for the setting.
    static func smallestStable<Setting>(_ candidates: [Setting], options: BenchOptions,
                                        measure: (Setting, Int, String) throws -> LatencyRow) throws -> LatencyRow? {
        func clean(_ row: LatencyRow?) -> Bool {
            guard let row else { return false }
            return row.xruns == 0 && row.unmatchedTriggers == 0 && row.unmatchedOnsets == 0
        }
        for candidate in candidates where clean(try? measure(candidate, options.trialTriggers, "trial")) {
            let full = try measure(candidate, options.triggers, "full")
            if clean(full) { return full }
        }
        return nil
    }

    /// Settings tried for sfx's smallest stable one, smallest buffer first: (period, periods).
    static let sfxTrials = [(16, 2), (16, 3), (32, 2)]

    /// Triggers `count` clicks of a C client (`floor`, `openal`, `sdlmixer`) on a fresh card.
    static func client(_ peer: Peer, period: Int?, count: Int, label: String, options: BenchOptions,
                       scratch: URL, name: String) throws -> LatencyRow {
        let run = try CardRun(scratch: scratch, name: name)
        defer { run.remove() }
        let gaps = gaps(period: period ?? peer.defaultPeriod, periods: peer.periods)
        var arguments = ["--count", "\(count)", "--min-gap-ms", "\(gaps.min)", "--max-gap-ms", "\(gaps.max)",
                         "--seed", "\(period ?? 1)"]
        if let period { arguments += ["--period", "\(period)", "--periods", "\(peer.periods)"] }
        let output = try run.runClient(options.probes.appending(path: peer.executable), arguments,
                                       environment: try peer.environment(run, period: period))
        let triggers = output.split(separator: "\n").compactMap { UInt64($0) }
        return LatencyRow(client: peer.displayName, label: label, requestedPeriod: period,
                          triggers: triggers, log: try run.log())
    }

    /// A peer's smallest stable period (`smallestStable` over `peer.trialPeriods`), measured in
    /// full; its largest trial period, measured as it comes, when none is stable.
    static func peerSmallestStable(_ peer: Peer, options: BenchOptions, scratch: URL) throws -> LatencyRow {
        let measure = { (period: Int, count: Int, purpose: String) throws -> LatencyRow in
            try client(peer, period: period, count: count, label: "smallest stable (\(period))", options: options,
                       scratch: scratch, name: "\(peer.executable)-\(purpose)-\(period)")
        }
        if let row = try smallestStable(peer.trialPeriods, options: options, measure: measure) { return row }
        let largest = peer.trialPeriods.last!
        return try measure(largest, options.triggers, "full")
    }
}

/// One latency measurement: who, at what setting, and the distribution.
struct LatencyRow: Codable {
    var client: String
    var label: String
    var requestedPeriod: Int?
    /// As the card saw it.
    var setting: Setting?
    var triggers: Int
    var matched: Int
    var unmatchedTriggers: Int
    var unmatchedOnsets: Int
    var xruns: Int
    var milliseconds: Distribution

    init(client: String, label: String, requestedPeriod: Int?, triggers: [UInt64], log: CardLog) {
        let result = Latency.match(triggers: triggers, onsets: log.onsets)
        self.client = client
        self.label = label
        self.requestedPeriod = requestedPeriod
        setting = log.setting
        self.triggers = triggers.count
        matched = result.milliseconds.count
        unmatchedTriggers = result.unmatchedTriggers
        unmatchedOnsets = result.unmatchedOnsets
        xruns = log.xruns
        milliseconds = Distribution(result.milliseconds)
    }
}

/// Percentiles (nearest rank) of a set of values.
struct Distribution: Codable {
    var p50 = Double.nan, p95 = Double.nan, p99 = Double.nan, max = Double.nan, mean = Double.nan

    init(_ values: [Double]) {
        guard !values.isEmpty else { return }
        let sorted = values.sorted()
        func rank(_ p: Double) -> Double { sorted[Swift.min(sorted.count - 1, Swift.max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))] }
        p50 = rank(0.50)
        p95 = rank(0.95)
        p99 = rank(0.99)
        max = sorted.last!
        mean = sorted.reduce(0, +) / Double(sorted.count)
    }
}

/// The C clients beside sfx, and how each is set up.
enum Peer: CaseIterable {
    case floor, openAL, sdlMixer

    var executable: String {
        switch self {
        case .floor: "floor"
        case .openAL: "openal"
        case .sdlMixer: "sdlmixer"
        }
    }

    var displayName: String {
        switch self {
        case .floor: "floor (raw ALSA)"
        case .openAL: "OpenAL Soft"
        case .sdlMixer: "SDL_mixer"
        }
    }

    /// Periods per buffer: three like sfx, except SDL's ALSA driver, which asks for two itself.
    var periods: Int { self == .sdlMixer ? 2 : BenchOptions.periodsPerBuffer }

    /// The period the library picks when not told: OpenAL Soft's period_size of 1024 frames;
    /// SDL_mixer's documented default chunk of 2048; the floor follows sfx's default.
    var defaultPeriod: Int {
        switch self {
        case .floor: BenchOptions.defaultPeriod
        case .openAL: 1024
        case .sdlMixer: 2048
        }
    }

    /// Periods tried, smallest first, for the smallest stable setting: from OpenAL Soft's
    /// documented minimum period_size (64), from the card's smallest (16) for SDL_mixer.
    var trialPeriods: [Int] { (self == .openAL ? [] : [16, 32]) + [64, 128, 256, 512, 1024] }

    /// The environment that puts the library on the card through ALSA: an alsoft.conf for
    /// OpenAL Soft (its period only when one is asked for, else its defaults), the ALSA driver and
    /// device for SDL.
    func environment(_ run: CardRun, period: Int?) throws -> [String: String] {
        switch self {
        case .floor:
            return [:]
        case .openAL:
            let conf = run.card.directory.appending(path: "alsoft.conf")
            var text = "[general]\ndrivers = alsa\nfrequency = 48000\nsources = 2048\nrt-prio = 0\n"
            if let period { text += "period_size = \(period)\nperiods = \(periods)\n" }
            text += "[alsa]\ndevice = \(run.card.pcmName)\n"
            do {
                try text.write(to: conf, atomically: true, encoding: .utf8)
            } catch {
                throw BenchError("cannot write \(conf.path) (\(error.localizedDescription)); give a writable scratch directory")
            }
            return ["ALSOFT_CONF": conf.path]
        case .sdlMixer:
            return ["SDL_AUDIODRIVER": "alsa", "AUDIODEV": run.card.pcmName]
        }
    }
}

/// sfx's engine on a benchmark card: the card's plug device, 48 kHz stereo, three periods unless told.
enum SfxOnCard {
    static func engine(_ run: CardRun, period: Int, periods: Int = BenchOptions.periodsPerBuffer,
                       maxVoices: Int = 64) throws -> SoundEngine {
        run.card.makeCurrent()
        var configuration = SoundEngine.Configuration()
        configuration.output = PlaybackRequest(device: run.card.pcmName, sampleRate: 48_000, channels: 2,
                                               periodFrames: period, periodCount: periods)
        configuration.maxVoices = maxVoices
        return try SoundEngine(configuration: configuration)
    }
}
