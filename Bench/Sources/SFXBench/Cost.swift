import Foundation
import SFX
import SFXBenchMethod

/// What mixing, loading and surviving load cost: CPU per second of audio with K looping voices,
/// offline render speed, preload time and memory, and xruns with both cores busy.
enum Cost {
    /// The looping sound every client's voices play: the C clients' one second of 220 + 331 Hz.
    static let loop: [Float] = (0..<48_000).map { i in
        let t = Double(i) / 48_000
        return Float(0.3 * sin(2 * .pi * 220 * t) + 0.2 * sin(2 * .pi * 331 * t))
    }

    // MARK: CPU per second of audio

    /// Every client's CPU windows: `options.cpuWindows` rounds, each a window per client and voice
    /// count plus two of the floor playing silence (the card's own cost), in an order shuffled
    /// afresh each round (a seeded generator, so runs repeat), so that a change in the machine's
    /// load falls on every client and voice count rather than on whichever came last.
    /// A client that cannot start K voices is measured up to the largest K it takes; the
    /// refusal is returned beside the rows.
    static func cpuWindows(options: BenchOptions, scratch: URL, progress: (String) -> Void)
        throws -> (rows: [CPURow], limits: [String: String]) {
        let clients: [Peer?] = [nil, .openAL, .sdlMixer]
        var jobs: [(client: Peer?, voices: Int)] = clients.flatMap { client in BenchOptions.voiceCounts.map { (client, $0) } }
        jobs += [(.floor, 1), (.floor, 1)]
        var rows: [CPURow] = [], limits: [String: String] = [:], refusedAt: [String: Int] = [:]
        var state: UInt64 = 0x5EED
        for window in 0..<options.cpuWindows {
            var order = jobs
            for i in stride(from: order.count - 1, to: 0, by: -1) {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                order.swapAt(i, Int((state >> 33) % UInt64(i + 1)))
            }
            for (index, job) in order.enumerated() {
                let name = job.client?.displayName ?? "sfx"
                if let limit = refusedAt[name], job.voices >= limit { continue }
                progress("CPU window \(window + 1) of \(options.cpuWindows), \(index + 1) of \(order.count): \(name), K=\(job.voices)")
                do {
                    var row = try job.client.map { try clientCPU($0, voices: job.voices, options: options, scratch: scratch) }
                        ?? sfxCPU(voices: job.voices, options: options, scratch: scratch)
                    row.window = window
                    rows.append(row)
                } catch where job.voices > 1 {
                    limits[name] = "\(job.voices) voices refused: \(error)"
                    refusedAt[name] = job.voices
                    rows.removeAll { $0.client == name && $0.voices >= job.voices }
                }
            }
        }
        return (rows, limits)
    }

    /// sfx at its classic default (128 × 3), or in rewind mode (256 × 4), with `voices` looping
    /// voices: process CPU seconds per wall second.
    static func sfxCPU(voices: Int, rewind: Bool = false, options: BenchOptions, scratch: URL) throws -> CPURow {
        let run = try CardRun(scratch: scratch, name: "sfx-cpu-\(voices)\(rewind ? "-rewind" : "")", record: false)
        defer { run.remove() }
        let engine = rewind
            ? try SfxOnCard.engine(run, period: Latency.rewindPeriod, periods: Latency.rewindPeriods, maxVoices: voices, rewind: true)
            : try SfxOnCard.engine(run, period: BenchOptions.defaultPeriod, maxVoices: voices)
        let sound = try engine.load(buffer: loop, sampleRate: 48_000, channels: 1, name: "loop")
        for _ in 0..<voices { engine.play(sound, volume: 1 / Float(voices), loops: -1) }
        Meter.sleep(seconds: 0.5)
        let thread = engine.metrics.outputThreadID
        let cpu = Meter.processCPU(), wall = Meter.now(), threadCPU = Meter.threadCPU(tid: thread)
        let threadsBefore = Meter.threadTimes()
        Meter.sleep(seconds: options.cpuSeconds)
        let seconds = Double(Meter.now() - wall) / 1e9
        let share = (Meter.processCPU() - cpu) / seconds
        let threads = Meter.threadShares(from: threadsBefore, to: Meter.threadTimes(), seconds: seconds)
        var outputShare: Double?
        if let before = threadCPU, let after = Meter.threadCPU(tid: thread) { outputShare = (after - before) / seconds }
        let active = engine.metrics.activeVoices
        engine.close(drain: false)
        guard active == voices else {
            throw BenchError("sfx played \(active) of \(voices) voices; raise maxVoices")
        }
        return CPURow(client: rewind ? "sfx (rewind)" : "sfx", voices: voices, coreShare: share, setting: try run.log().setting,
                      outputThreadShare: outputShare, threadShares: threads)
    }

    /// A C client at its default setting with `voices` looping voices.
    static func clientCPU(_ peer: Peer, voices: Int, options: BenchOptions, scratch: URL) throws -> CPURow {
        let run = try CardRun(scratch: scratch, name: "\(peer.executable)-cpu-\(voices)", record: false)
        defer { run.remove() }
        let output = try run.runClient(options.probes.appending(path: peer.executable),
                                       ["--voices", "\(voices)", "--seconds", "\(options.cpuSeconds)"],
                                       environment: try peer.environment(run, period: nil))
        let fields = output.split(whereSeparator: \.isWhitespace)
        guard fields.count == 3, fields[0] == "cpu", let cpu = Double(fields[1]), let wall = Double(fields[2]), wall > 0 else {
            throw BenchError("\(peer.executable) wrote \"\(output)\" instead of \"cpu NS NS\"; rebuild the C clients with Bench/run")
        }
        return CPURow(client: peer.displayName, voices: voices, coreShare: cpu / wall, setting: try run.log().setting)
    }

    /// Seconds of audio sfx's offline mixer renders per CPU second with `voices` looping voices.
    static func offlineSpeed(voices: Int, options: BenchOptions) throws -> Double {
        let library = try SoundLibrary()
        let sound = try library.load(buffer: loop, sampleRate: 48_000, channels: 1, name: "loop")
        let plays = (0..<voices).map { _ in OfflineMix.Play(sound: sound, volume: 1 / Float(voices), loops: options.offlineSeconds - 1) }
        let cpu = Meter.threadCPU()
        let samples = try OfflineMix.render(plays, library: library)
        let seconds = Double(samples.count / library.configuration.format.channels) / Double(library.configuration.format.sampleRate)
        return seconds / max(Meter.threadCPU() - cpu, 1e-6)
    }

    // MARK: Preload

    /// Writes `count` short files in varied formats, rates and channel counts, then loads them all
    /// into an engine: wall time and resident memory growth.
    static func preload(count: Int, scratch: URL) throws -> PreloadResult {
        let directory = scratch.appending(path: "cues", directoryHint: .isDirectory)
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let kinds: [(AudioFileEncoding, String, rates: [Int])] = [
            (.wavPCM16, "wav", [48_000, 44_100, 22_050]), (.wavFloat32, "wav", [48_000, 44_100]),
            (.flac16, "flac", [44_100, 48_000]), (.aiffPCM16, "aiff", [44_100, 32_000]),
            (.oggVorbis, "ogg", [44_100, 48_000]), (.oggOpus, "opus", [48_000]),
            (.cafFloat32, "caf", [48_000]), (.mp3, "mp3", [44_100]),
        ]
        var files: [URL] = []
        var formats: Set<String> = []
        var attempt = 0
        while files.count < count, attempt < count * 2 {
            let (encoding, suffix, rates) = kinds[attempt % kinds.count]
            let rate = rates[(attempt / kinds.count) % rates.count]
            let channels = attempt % 3 == 0 ? 2 : 1
            let seconds = 0.1 + Double(attempt % 6) * 0.1
            let hertz = 300 + Double(attempt * 37 % 900)
            let samples = (0..<Int(Double(rate) * seconds) * channels).map { i in
                Float(0.4 * sin(2 * .pi * hertz * Double(i / channels) / Double(rate)))
            }
            let url = directory.appending(path: "cue-\(files.count).\(suffix)")
            attempt += 1
            // An encoder this libsndfile lacks (MP3 without LAME) is left out of the mix.
            guard (try? AudioFileWriter.write(samples, sampleRate: rate, channels: channels, to: url, as: encoding)) != nil else { continue }
            files.append(url)
            formats.insert(suffix)
        }
        let run = try CardRun(scratch: scratch, name: "sfx-preload")
        defer { run.remove() }
        let engine = try SfxOnCard.engine(run, period: BenchOptions.defaultPeriod)
        defer { engine.close(drain: false) }
        let resident = Meter.residentBytes(), start = Meter.now()
        for file in files { _ = try engine.load(contentsOf: file) }
        let seconds = Double(Meter.now() - start) / 1e9
        return PreloadResult(cues: files.count, formats: formats.sorted(), milliseconds: seconds * 1000,
                             residentGrowthMB: Double(Meter.residentBytes() - resident) / 1_048_576)
    }

    // MARK: Xruns under load

    /// sfx and the floor at each of `BenchOptions.loadPeriods` for `options.loadSeconds`, playing
    /// clicks as in the latency runs, while another process keeps both cores busy.
    static func xrunsUnderLoad(options: BenchOptions, scratch: URL) throws -> [LoadRow] {
        let load = try CPULoad()
        defer { load.stop() }
        var rows: [LoadRow] = []
        for period in BenchOptions.loadPeriods {
            let gaps = Latency.gaps(period: period, periods: BenchOptions.periodsPerBuffer)
            let count = Int(options.loadSeconds * 1000 / ((gaps.min + gaps.max) / 2))
            let sfx = try Latency.sfx(period: period, count: count, scratch: scratch, name: "sfx-load-\(period)")
            let floor = try Latency.client(.floor, period: period, count: count, label: "period \(period)",
                                           options: options, scratch: scratch, name: "floor-load-\(period)")
            rows += [sfx, floor].map { LoadRow($0, period: period, seconds: options.loadSeconds, load: load.name) }
        }
        // Rewind mode beside the floor rewinding, both at 256 × 4.
        let gaps = Latency.gaps(period: Latency.rewindPeriod, periods: Latency.rewindPeriods)
        let count = Int(options.loadSeconds * 1000 / ((gaps.min + gaps.max) / 2))
        for row in try Latency.rewindRows(count: count, options: options, scratch: scratch, name: "load-rewind") {
            rows.append(LoadRow(row, period: Latency.rewindPeriod, seconds: options.loadSeconds, load: load.name))
        }
        return rows
    }
}

/// Two cores kept busy at normal priority: `stress-ng --cpu 2`, or two shell busy loops when
/// stress-ng is not installed.
final class CPULoad {
    let name: String
    private var processes: [Process] = []

    init() throws {
        let stress = ["/usr/bin/stress-ng", "/usr/local/bin/stress-ng"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let commands: [(String, [String])] = stress.map { [($0, ["--cpu", "2", "--quiet"])] }
            ?? [("/bin/sh", ["-c", "while :; do :; done"]), ("/bin/sh", ["-c", "while :; do :; done"])]
        name = stress == nil ? "two shell busy loops" : "stress-ng --cpu 2"
        for (path, arguments) in commands {
            let process = Process()
            process.executableURL = URL(filePath: path)
            process.arguments = arguments
            do {
                try process.run()
            } catch {
                stop()
                throw BenchError("cannot start the CPU load \(path) (\(error.localizedDescription)); install stress-ng")
            }
            processes.append(process)
        }
        Meter.sleep(seconds: 0.5)
    }

    /// Ends the load (the processes this started, by their ids).
    func stop() {
        for process in processes where process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        processes = []
    }
}

struct CPURow: Codable {
    var client: String
    var voices: Int
    /// The round of `Cost.cpuWindows` this window belongs to.
    var window = 0
    /// CPU seconds per second of audio: 0.01 is 1 % of one core.
    var coreShare: Double
    var setting: Setting?
    /// sfx: the share of it taken by the output thread (mixing, the card's plugin, ALSA); the
    /// rest is the engine's other threads and the benchmark's own.
    var outputThreadShare: Double?
    /// sfx: each thread's share and wake-ups by name (the output thread, the event thread,
    /// dispatch's workers, the benchmark's own main thread), from /proc/self/task/*/schedstat
    /// and status.
    var threadShares: [String: ThreadShare]?
}

struct ThreadShare: Codable {
    var coreShare = 0.0
    var wakeUpsPerSecond = 0.0
}

struct PreloadResult: Codable {
    var cues: Int
    var formats: [String]
    var milliseconds: Double
    var residentGrowthMB: Double
}

struct LoadRow: Codable {
    var client: String
    var period: Int
    var seconds: Double
    var xruns: Int
    var load: String
    var setting: Setting?
    var latency: Distribution
    var unmatchedTriggers: Int

    init(_ row: LatencyRow, period: Int, seconds: Double, load: String) {
        client = row.client
        self.period = period
        self.seconds = seconds
        xruns = row.xruns
        self.load = load
        setting = row.setting
        latency = row.milliseconds
        unmatchedTriggers = row.unmatchedTriggers
    }
}
