import Foundation
import SFX
import SFXBenchMethod

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

    /// Where a positional click plays: ahead and to the right, within the reference distance
    /// (inverse clamped: gain 1), the listener at the origin facing −z.
    static let positionalClickAt = Vector3(0.6, 0, -0.6)

    /// Triggers `count` clicks of sfx at `period` × `periods` on a fresh card (in rewind mode
    /// when `rewind`, on the classic path otherwise); `positional`: each click a positional voice
    /// (`engine.play(_:at:)` at `positionalClickAt`, moving at 1 m/s), the listener and world
    /// left at their defaults.
    static func sfxRun(period: Int, periods: Int = BenchOptions.periodsPerBuffer, rewind: Bool = false, positional: Bool = false,
                       count: Int, scratch: URL, name: String) throws -> LatencyRun {
        let run = try CardRun(scratch: scratch, name: name)
        defer { run.remove() }
        let engine = try SfxOnCard.engine(run, period: period, periods: periods, rewind: rewind)
        if rewind, engine.metrics.rewind != .active {
            Meter.sleep(seconds: 0.1)
            guard engine.metrics.rewind == .active else {
                throw BenchError("sfx did not start rewind mode on the card (\(engine.metrics.rewind)); rebuild the card with Bench/run")
            }
        }
        let click = try engine.load(buffer: Self.click, sampleRate: 48_000, channels: 1, name: "click")
        let gaps = gaps(period: period, periods: periods)
        var next = Meter.now() + 200_000_000
        var triggers: [UInt64] = []
        triggers.reserveCapacity(count)
        for gap in schedule(count: count, gaps: gaps, seed: UInt64(period)) {
            next += gap
            Meter.sleep(until: next)
            triggers.append(Meter.now())
            if positional {
                engine.play(click, at: positionalClickAt, velocity: Vector3(1, 0, 0))
            } else {
                engine.play(click)
            }
        }
        Meter.sleep(seconds: gaps.max / 1000 + 0.1)
        engine.close()
        return LatencyRun(triggers: triggers, log: try run.log())
    }

    static func sfx(period: Int, periods: Int = BenchOptions.periodsPerBuffer, count: Int, scratch: URL,
                    name: String) throws -> LatencyRow {
        LatencyRow(client: "sfx", label: "period \(period)", requestedPeriod: period,
                   runs: [try sfxRun(period: period, periods: periods, count: count, scratch: scratch, name: name)])
    }

    /// Triggers `count` clicks of a C client (`floor`, `openal`, `sdlmixer`) on a fresh card, at
    /// `period` × `periods` (`periods` nil: the client's own count), or at its defaults;
    /// `environment` adds to the client's (the floor's rewind mode).
    static func clientRun(_ peer: Peer, period: Int?, periods: Int? = nil, count: Int, options: BenchOptions,
                          scratch: URL, name: String, environment extra: [String: String] = [:]) throws -> LatencyRun {
        let run = try CardRun(scratch: scratch, name: name)
        defer { run.remove() }
        let periods = periods ?? peer.periods
        let gaps = gaps(period: period ?? peer.defaultPeriod, periods: period == nil ? peer.defaultPeriods : periods)
        var arguments = ["--count", "\(count)", "--min-gap-ms", "\(gaps.min)", "--max-gap-ms", "\(gaps.max)",
                         "--seed", "\(period ?? 1)"]
        if let period { arguments += ["--period", "\(period)", "--periods", "\(periods)"] }
        let output = try run.runClient(options.probes.appending(path: peer.executable), arguments,
                                       environment: try peer.environment(run, period: period, periods: periods).merging(extra) { $1 })
        let triggers = output.split(separator: "\n").compactMap { UInt64($0) }
        return LatencyRun(triggers: triggers, log: try run.log())
    }

    // MARK: Rewind mode

    /// Rewind mode's buffer: sfx's default in that mode, 512 × 3 frames (32 ms); the floor
    /// rewinds with the same.
    static let rewindPeriod = 512
    static let rewindPeriods = 3
    /// The floor's guard: 1 ms, as sfx's (`RewindMode.guardSeconds`).
    static let rewindGuardFrames = 48
    static let rewindLabel = "rewind \(rewindPeriod) × \(rewindPeriods)"

    static let positionalRewindClient = "sfx (rewind, positional)"

    /// sfx in rewind mode and the floor rewinding, each at 256 × 4: rows "sfx (rewind)" and
    /// "floor (rewind)"; with `positional`, between them "sfx (rewind, positional)", the same
    /// clicks played as positional voices.
    static func rewindRows(count: Int, options: BenchOptions, scratch: URL, name: String, positional: Bool = false) throws -> [LatencyRow] {
        let sfx = try sfxRun(period: rewindPeriod, periods: rewindPeriods, rewind: true, count: count,
                             scratch: scratch, name: "sfx-\(name)")
        let placed = try positional ? [LatencyRow(client: positionalRewindClient, label: rewindLabel, requestedPeriod: rewindPeriod,
                                                  runs: [sfxRun(period: rewindPeriod, periods: rewindPeriods, rewind: true, positional: true,
                                                                count: count, scratch: scratch, name: "sfx-positional-\(name)")])] : []
        let floor = try clientRun(.floor, period: rewindPeriod, periods: rewindPeriods, count: count, options: options,
                                  scratch: scratch, name: "floor-\(name)",
                                  environment: ["FLOOR_REWIND_GUARD_FRAMES": "\(rewindGuardFrames)"])
        return [LatencyRow(client: "sfx (rewind)", label: rewindLabel, requestedPeriod: rewindPeriod, runs: [sfx])] + placed
            + [LatencyRow(client: "floor (rewind)", label: rewindLabel, requestedPeriod: rewindPeriod, runs: [floor])]
    }

    static func client(_ peer: Peer, period: Int?, count: Int, label: String, options: BenchOptions,
                       scratch: URL, name: String) throws -> LatencyRow {
        LatencyRow(client: peer.displayName, label: label, requestedPeriod: period,
                   runs: [try clientRun(peer, period: period, count: count, options: options, scratch: scratch, name: name)])
    }

    /// A client's smallest stable setting by `StableSearch`'s rule, the same for every client:
    /// its candidates (`StableClient.candidates`) smallest buffer first; a trial of
    /// `options.trialTriggers` that is not clean drops a candidate; otherwise it is stable after
    /// `options.stableRuns` consecutive clean runs of `options.triggers`, and dropped at the first
    /// run that is not clean. The row pools the stable setting's clean runs.
    static func smallestStable(_ client: StableClient, options: BenchOptions, scratch: URL) throws -> StableResult {
        var serial = 0
        func measure(_ candidate: StableCandidate, _ count: Int, _ purpose: String) throws -> LatencyRun {
            serial += 1
            let name = "\(client.executable)-\(purpose)-\(candidate.period)x\(candidate.periods)-\(serial)"
            switch client {
            case .sfx: return try sfxRun(period: candidate.period, periods: candidate.periods, count: count, scratch: scratch, name: name)
            case .peer(let peer): return try clientRun(peer, period: candidate.period, periods: candidate.periods, count: count,
                                                       options: options, scratch: scratch, name: name)
            }
        }
        var lastUnclean: [String: String] = [:]
        // A client that fails to open a setting has not played it cleanly.
        func attempt(_ candidate: StableCandidate, _ count: Int, _ purpose: String) -> LatencyRun? {
            do { return try measure(candidate, count, purpose) } catch {
                lastUnclean[candidate.text] = "failed: \(error)"
                return nil
            }
        }
        let search = StableSearch.first(
            client.candidates, needed: options.stableRuns,
            trial: { candidate in
                guard let run = attempt(candidate, options.trialTriggers, "trial") else { return false }
                if !run.clean { lastUnclean[candidate.text] = run.problems }
                return run.clean
            },
            run: { candidate -> LatencyRun? in
                let run = attempt(candidate, options.triggers, "full")
                if let run, !run.clean { lastUnclean[candidate.text] = run.problems }
                return run
            },
            clean: { $0?.clean == true })
        let attempts = search.attempts.map { attempt -> String in
            let what = attempt.candidate.text
            if attempt.stable { return "\(what): \(attempt.cleanRuns) clean runs: stable" }
            let problem = lastUnclean[what] ?? "not clean"
            if attempt.trialRejected { return "\(what): trial \(problem)" }
            return "\(what): \(attempt.cleanRuns) clean run\(attempt.cleanRuns == 1 ? "" : "s"), then \(problem)"
        }
        guard let stable = search.stable else {
            return StableResult(client: client.displayName, row: nil, attempts: attempts)
        }
        let row = LatencyRow(client: client.displayName, label: StableResult.label, requestedPeriod: stable.candidate.period,
                             runs: stable.runs.compactMap { $0 })
        return StableResult(client: client.displayName, row: row, attempts: attempts)
    }
}

/// One setting offered in the smallest-stable search.
struct StableCandidate {
    var period: Int
    var periods: Int
    var text: String { "\(period) × \(periods)" }
}

/// A client of the smallest-stable search: sfx in this process, or a C client.
enum StableClient {
    case sfx
    case peer(Peer)

    static let all: [StableClient] = [.sfx, .peer(.floor), .peer(.openAL), .peer(.sdlMixer)]

    var displayName: String {
        switch self {
        case .sfx: "sfx"
        case .peer(let peer): peer.displayName
        }
    }

    var executable: String {
        switch self {
        case .sfx: "sfx"
        case .peer(let peer): peer.executable
        }
    }

    /// Every period of `BenchOptions.stablePeriods` with 2 and with 3 periods a buffer, smallest
    /// buffer first (then the smaller period), less what the client cannot take: OpenAL Soft
    /// raises a period_size below 64 to 64 (its documented minimum), so its search starts at 64;
    /// SDL's ALSA driver asks the device for the fewest periods it allows (2 on this card), and
    /// SDL_mixer has no way to ask for 3, so it is offered 2 only.
    var candidates: [StableCandidate] {
        let minimum = if case .peer(.openAL) = self { 64 } else { 16 }
        let counts = if case .peer(.sdlMixer) = self { [2] } else { BenchOptions.stablePeriodCounts }
        return BenchOptions.stablePeriods.filter { $0 >= minimum }
            .flatMap { period in counts.map { StableCandidate(period: period, periods: $0) } }
            .sorted { ($0.period * $0.periods, $0.period) < ($1.period * $1.periods, $1.period) }
    }
}

/// A client's smallest stable setting (nil when no candidate was stable) and every attempt.
struct StableResult: Codable {
    static let label = "smallest stable"
    var client: String
    var row: LatencyRow?
    /// "32 × 2: 2 clean runs, then 1 xrun", in the order tried.
    var attempts: [String]
}

/// One latency run: the trigger times and what the card logged, matched.
struct LatencyRun {
    var triggers: [UInt64]
    var log: CardLog
    var milliseconds: [Double]
    var unmatchedTriggers: Int
    var unmatchedOnsets: Int

    init(triggers: [UInt64], log: CardLog) {
        self.triggers = triggers
        self.log = log
        (milliseconds, unmatchedTriggers, unmatchedOnsets) = Latency.match(triggers: triggers, onsets: log.onsets)
    }

    /// No xrun, and every click heard once.
    var clean: Bool { log.xruns == 0 && unmatchedTriggers == 0 && unmatchedOnsets == 0 }

    /// "2 xruns, 1 unmatched onset": what kept the run from being clean.
    var problems: String {
        func count(_ n: Int, _ what: String) -> String? { n == 0 ? nil : "\(n) \(what)\(n == 1 ? "" : "s")" }
        let parts = [count(log.xruns, "xrun"), count(unmatchedTriggers, "unheard click"), count(unmatchedOnsets, "unmatched onset")].compactMap { $0 }
        return parts.isEmpty ? "clean" : parts.joined(separator: ", ")
    }
}

/// One latency measurement: who, at what setting, and the distribution (of several runs pooled,
/// for a smallest stable setting).
struct LatencyRow: Codable {
    var client: String
    var label: String
    var requestedPeriod: Int?
    /// As the card saw it (the last run's).
    var setting: Setting?
    var runs: Int
    var triggers: Int
    var matched: Int
    var unmatchedTriggers: Int
    var unmatchedOnsets: Int
    var xruns: Int
    var milliseconds: Distribution

    init(client: String, label: String, requestedPeriod: Int?, runs: [LatencyRun]) {
        self.client = client
        self.label = label
        self.requestedPeriod = requestedPeriod
        setting = runs.last?.log.setting
        self.runs = runs.count
        triggers = runs.map(\.triggers.count).reduce(0, +)
        matched = runs.map(\.milliseconds.count).reduce(0, +)
        unmatchedTriggers = runs.map(\.unmatchedTriggers).reduce(0, +)
        unmatchedOnsets = runs.map(\.unmatchedOnsets).reduce(0, +)
        xruns = runs.map(\.log.xruns).reduce(0, +)
        milliseconds = Distribution(runs.flatMap(\.milliseconds))
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

    /// Periods per buffer when a period is asked for: three like sfx, except SDL's ALSA driver,
    /// which asks for two itself.
    var periods: Int { self == .sdlMixer ? 2 : BenchOptions.periodsPerBuffer }

    /// Periods per buffer at the library's defaults (OpenAL Soft's `periods` defaults to 3).
    var defaultPeriods: Int { self == .sdlMixer ? 2 : BenchOptions.periodsPerBuffer }

    /// The period the library picks when not told: OpenAL Soft's period_size of 1024 frames;
    /// SDL_mixer's documented default chunk of 2048; the floor follows sfx's default.
    var defaultPeriod: Int {
        switch self {
        case .floor: BenchOptions.defaultPeriod
        case .openAL: 1024
        case .sdlMixer: 2048
        }
    }

    /// The environment that puts the library on the card through ALSA: an alsoft.conf for
    /// OpenAL Soft (its period only when one is asked for, else its defaults), the ALSA driver and
    /// device for SDL.
    func environment(_ run: CardRun, period: Int?, periods: Int? = nil) throws -> [String: String] {
        switch self {
        case .floor:
            return [:]
        case .openAL:
            let conf = run.card.directory.appending(path: "alsoft.conf")
            var text = "[general]\ndrivers = alsa\nfrequency = 48000\nsources = 4200\nrt-prio = 0\n"
            if let period { text += "period_size = \(period)\nperiods = \(periods ?? self.periods)\n" }
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
    /// The classic path unless `rewind` (rewind mode is the engine's default; the rows name it).
    static func engine(_ run: CardRun, period: Int, periods: Int = BenchOptions.periodsPerBuffer,
                       maxVoices: Int = 64, rewind: Bool = false) throws -> SoundEngine {
        run.card.makeCurrent()
        var configuration = SoundEngine.Configuration()
        configuration.rewind = rewind
        configuration.output = PlaybackRequest(device: run.card.pcmName, sampleRate: 48_000, channels: 2,
                                               periodFrames: period, periodCount: periods)
        configuration.maxVoices = maxVoices
        return try SoundEngine(configuration: configuration)
    }
}
