import Foundation
import SFXCardSupport

/// What one benchmark run does: full (the published figures) or `--quick` (a smoke test: the same
/// stages with fewer triggers and shorter windows, to check the set-up; it judges no goal).
struct BenchOptions {
    var quick = false
    /// `--load-rounds N`: only the xruns-under-load comparison, N interleaved rounds of sfx and
    /// the floor, to tell a difference from chance. Prints the rounds; writes no results.
    var loadRounds = 0
    /// `--latency-rounds N`: only trigger→DAC latency of sfx and the floor at `latencyPeriod` × 3,
    /// N interleaved rounds (sfx, then the floor), to compare two builds on a shared machine.
    /// Prints the rounds; writes no results.
    var latencyRounds = 0
    /// `--rewind-rounds N`: only rewind mode, N rounds of sfx's and the floor's trigger→DAC
    /// latency at 256 × 4 and the one-voice CPU of sfx (rewind and classic) and OpenAL Soft.
    /// Prints the rounds; writes no results.
    var rewindRounds = 0
    /// `--cpu-rounds N`: only the one-voice CPU rows of `--rewind-rounds` (sfx in rewind mode and
    /// classic, OpenAL Soft at its default), N rounds, with the share of each of sfx's threads.
    var cpuRounds = 0
    /// `--world-rounds N`: only the CPU per extra voice of sound in a game world (World.swift),
    /// sfx's Mixer beside OpenAL Soft's loopback device, N rounds; prints its table, writes no
    /// results. It needs only the `openalworld` client.
    var worldRounds = 0
    /// `--world-features a,b,…` with `--world-rounds`: only those rows (positional, lowpass, hrtf,
    /// reverb, nodoppler), to measure or profile one change alone.
    var worldFeatures = World.Feature.measured
    /// `--positional` with `--rewind-rounds`: sfx's click is played as a positional voice.
    var positional = false
    /// `--render FILE`: no measurement; a saved `latest.json` analysed again with this build's
    /// goals and written back with its `latest.md` beside it (after a change to the report).
    var render: URL?
    /// `--pointer period|frame`: how the virtual card's playback pointer moves (per period unless
    /// told), for every client.
    var pointer = VirtualCard.PointerGranularity.period
    /// `--period P` for `--latency-rounds` (sfx's default, 128, unless told).
    var latencyPeriod = BenchOptions.defaultPeriod
    /// The compiled C clients: `floor`, `openal`, `sdlmixer`.
    var probes: URL
    /// Where `latest.json` and `latest.md` go.
    var results: URL
    /// The command line as typed, for the report's header.
    var command: String

    /// `--repeat N`: the whole benchmark N times, each figure reported as a median with its
    /// spread across the runs.
    var repeatCount = 1

    /// Triggers per latency measurement (at least 200 for the published figures).
    var triggers: Int { quick ? 50 : 200 }
    /// Triggers of the trial that may reject a candidate setting before its full runs.
    var trialTriggers: Int { quick ? 15 : 40 }
    /// Consecutive clean full runs (of `triggers` each) that make a setting stable.
    var stableRuns: Int { 3 }
    /// Wall seconds of one CPU window.
    var cpuSeconds: Double { quick ? 1 : 4 }
    /// Windows per client and voice count (and of the floor playing silence), interleaved.
    var cpuWindows: Int { quick ? 1 : 3 }
    /// Seconds of audio rendered offline for the render-speed figure.
    var offlineSeconds: Int { quick ? 3 : 10 }
    /// Rounds of the world windows in a full run (`worldRounds` when it runs alone), and the
    /// seconds of audio each window renders.
    var worldWindows: Int { worldRounds > 0 ? worldRounds : quick ? 1 : 5 }
    var worldSeconds: Double { quick ? 0.25 : 1 }
    /// Seconds each client plays with both cores loaded.
    var loadSeconds: Double { quick ? 10 : 60 }

    /// sfx's and the floor's periods for latency (three periods per buffer).
    static let periods = [32, 64, 128, 256]
    static let periodsPerBuffer = 3
    /// sfx's default period, its figure against the peers' defaults.
    static let defaultPeriod = 128
    /// Voice counts of the CPU windows: up to 4,096 (sfx's most), where 4,096 voices cost every
    /// client several times the window-to-window noise.
    static let voiceCounts = [1, 64, 256, 1024, 4096]
    /// Periods and period counts offered to every client in the search for its smallest stable
    /// setting (less what a client cannot take: see `Peer.stableCandidates`).
    static let stablePeriods = [16, 32, 64, 128, 256, 512, 1024]
    static let stablePeriodCounts = [2, 3]
    static let loadPeriods = [64, 128]
    static let cueCount = 100

    static let usage = "usage: sfx-bench --probes DIR [--results DIR] [--quick] [--repeat N] [--load-rounds N] [--latency-rounds N [--period P]] [--rewind-rounds N] [--cpu-rounds N] [--world-rounds N [--world-features LIST]] [--positional] [--pointer period|frame] [--render latest.json]"

    /// `sfx-bench --bindings`: only the C API's and the Python binding's clients are needed.
    var bindingsOnly = false

    init(arguments: [String], bindingsOnly: Bool = false) throws {
        self.bindingsOnly = bindingsOnly
        var probes: URL?
        var results = URL(filePath: "Bench/results")
        var rest = arguments.dropFirst()[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--quick": quick = true
            case "--load-rounds":
                guard let value = rest.popFirst(), let n = Int(value), n > 0 else { throw BenchError("--load-rounds needs a positive count; \(Self.usage)") }
                loadRounds = n
            case "--rewind-rounds", "--cpu-rounds", "--world-rounds":
                guard let value = rest.popFirst(), let n = Int(value), n > 0 else { throw BenchError("\(argument) needs a positive count; \(Self.usage)") }
                switch argument {
                case "--cpu-rounds": cpuRounds = n
                case "--world-rounds": worldRounds = n
                default: rewindRounds = n
                }
            case "--positional": positional = true
            case "--world-features":
                let names = rest.popFirst()?.split(separator: ",").map(String.init) ?? []
                let features = names.compactMap(World.Feature.init(rawValue:))
                guard !features.isEmpty, features.count == names.count else {
                    throw BenchError("--world-features needs a comma-separated list of \(World.Feature.measured.map(\.rawValue).joined(separator: ", ")); \(Self.usage)")
                }
                worldFeatures = features
            case "--latency-rounds", "--period":
                guard let value = rest.popFirst(), let n = Int(value), n > 0 else { throw BenchError("\(argument) needs a positive number; \(Self.usage)") }
                if argument == "--period" { latencyPeriod = n } else { latencyRounds = n }
            case "--pointer":
                guard let value = rest.popFirst(), let kind = VirtualCard.PointerGranularity(rawValue: value) else {
                    throw BenchError("--pointer needs period or frame; \(Self.usage)")
                }
                pointer = kind
            case "--render":
                guard let value = rest.popFirst() else { throw BenchError("--render needs a saved latest.json; \(Self.usage)") }
                render = URL(filePath: value)
            case "--repeat":
                guard let value = rest.popFirst(), let n = Int(value), n > 0 else { throw BenchError("--repeat needs a positive count of runs; \(Self.usage)") }
                repeatCount = n
            case "--probes", "--results":
                guard let value = rest.popFirst() else { throw BenchError("\(argument) needs a directory; \(Self.usage)") }
                if argument == "--probes" { probes = URL(filePath: value) } else { results = URL(filePath: value) }
            case "--help", "-h": throw BenchError(Self.usage)
            default: throw BenchError("unknown argument \(argument); \(Self.usage)")
            }
        }
        guard let probes else { throw BenchError("--probes is missing (the directory Bench/run builds the C clients into); \(Self.usage)") }
        let bindings = [BindingLatency.executables.c, BindingLatency.executables.python]
        let clients = bindingsOnly ? bindings : latencyRounds > 0 ? ["floor"] : worldRounds > 0 ? ["openalworld"]
            : ["floor", "openal", "sdlmixer", "openalworld"] + bindings
        for client in clients where !FileManager.default.isExecutableFile(atPath: probes.appending(path: client).path) {
            throw BenchError("\(probes.path)/\(client) is missing; build the C clients with Bench/run")
        }
        self.probes = probes
        self.results = results
        command = ProcessInfo.processInfo.environment["SFX_BENCH_COMMAND"] ?? arguments.joined(separator: " ")
    }
}

/// A benchmark failure: one line naming what went wrong and the fix.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
