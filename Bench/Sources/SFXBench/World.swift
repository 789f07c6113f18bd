import Foundation
import Glibc
import SFX
import SFXBenchMethod

/// Sound in a game world: the CPU each extra voice costs per second of audio, sfx's Mixer beside
/// OpenAL Soft, for the same scene with one more feature a row:
///
/// - **positional**: K voices loop the probes' one-second tone at gain 1/K, each in the world
///   (inverse clamped distance, reference distance 1, doppler factor 1, speed of sound 343.3),
///   each moving on its own circle (`worldPath`), its position and velocity set every block of
///   480 frames (10 ms);
/// - **lowpass**: and a low-pass filter on each voice (sfx: `FilterSettings.lowPass(cutoff:
///   5000)`; OpenAL Soft: an EFX `AL_FILTER_LOWPASS` direct filter, gain 1, gain HF 0.25);
/// - **hrtf**: and HRTF (sfx: the default SOFA set, `SOFAFile.defaultURL`; OpenAL Soft:
///   `ALC_HRTF_SOFT` on, with its own default data set: 1.19 reads only its `.mhr` files, not
///   SOFA; the probe prints which it used);
/// - **reverb**: and one reverb bus every voice sends to at level 1 (sfx: `ReverbSettings.hall`
///   on bus 0, returning into `.effects`, which are EFX's concert hall's decay 3.92 s, HF ratio
///   0.70 and pre-delay 20 ms; OpenAL Soft: one auxiliary effect slot holding
///   `EFX_REVERB_PRESET_CONCERTHALL` as `AL_EFFECT_EAXREVERB`, each source's send 0 to it);
/// - **nodoppler**, a reference row without a goal: the positional row with doppler off.
///
/// Both sides are pure mixing on the calling thread: sfx's `Mixer` rendering offline (no device,
/// no output thread; virtual voices off, so every voice is mixed, as OpenAL Soft mixes every
/// source), OpenAL Soft through a loopback device (ALC_SOFT_loopback, `probes/openalworld.c`),
/// both 48 kHz stereo float, both with linear interpolation (OpenAL Soft's `resampler =
/// linear`). A window renders a quarter second untimed, then `seconds` of audio timed by the
/// thread's CPU clock, position updates included. Each round measures every client, feature and
/// K once, in an order shuffled afresh (a seeded generator), and the fit of `CPUFit` over all
/// windows gives the cost per extra voice with its 95 % interval.
enum World {
    enum Feature: String, CaseIterable, Codable {
        case positional, lowpass, hrtf, reverb
        /// A reference row, no goal: (a) with doppler off (factor 0), so every voice plays at rate
        /// 1 and the row shows what the doppler shift's resampling adds to (a).
        case nodoppler

        static let measured: [Feature] = [.positional, .lowpass, .hrtf, .reverb, .nodoppler]
        /// The rows with a goal (sfx ≤ ½ of OpenAL Soft).
        static let judged: [Feature] = [.positional, .lowpass, .hrtf, .reverb]

        var title: String {
            switch self {
            case .positional: "(a) positional, moving (distance, doppler)"
            case .lowpass: "(b) positional + low-pass per voice"
            case .hrtf: "(c) positional + HRTF"
            case .reverb: "(d) positional + one reverb bus, every voice sending"
            case .nodoppler: "reference: (a) with doppler off (rate 1)"
            }
        }
    }

    static let voiceCounts = [1, 64, 256, 1024]
    /// Frames a block: the game updates every voice's position and velocity before each.
    static let block = 480
    static let warmUpFrames = 12_000

    static func client(_ sfx: Bool, _ feature: Feature) -> String { "\(sfx ? "sfx" : Peer.openAL.displayName) · \(feature.rawValue)" }

    /// Voice `i`'s position and velocity at `t` seconds: a circle of radius 1.5–3.5 m about a
    /// centre 3–6 m from the listener (at the origin, facing −z), travelled at 4–16 m/s, so its
    /// distance and its speed towards the listener change all the time. The same formula as
    /// `world_path` in probes/openalworld.c, in doubles, rounded to floats at the end.
    static func worldPath(_ i: Int, t: Double) -> (position: Vector3, velocity: Vector3) {
        let d = Double(3 + i % 4), phi = Double(i) * 0.7
        let r = 1.5 + Double(i % 5) * 0.5, speed = Double(4 + (i % 5) * 3)
        let w = (i % 2 == 1 ? -1 : 1) * speed / r, theta = Double(i) * 2.399963 + w * t
        let cx = d * cos(phi), cz = -d * sin(phi), y = Double(i % 3 - 1) * 0.5
        return (Vector3(Float(cx + r * cos(theta)), Float(y), Float(cz + r * sin(theta))),
                Vector3(Float(-r * w * sin(theta)), 0, Float(r * w * cos(theta))))
    }

    static func threadCPUNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// What a run of the world windows measured.
    struct Result: Codable {
        var rows: [CPURow] = []
        var seconds = 0.0
        var rounds = 0
        /// OpenAL Soft's HRTF as it reported it (`ALC_HRTF_SPECIFIER_SOFT`), and sfx's SOFA file.
        var openALHRTF: String?
        var sfxHRTF: String?
        /// Features measured; the others and why not.
        var features: [Feature] = []
        var notMeasured: [String: String] = [:]
    }

    /// `rounds` rounds of every client, feature and voice count, `seconds` of audio a window.
    static func measure(rounds: Int, seconds: Double, features: [Feature] = Feature.measured, probes: URL, scratch: URL,
                        progress: (String) -> Void) throws -> Result {
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let conf = scratch.appending(path: "alsoft-world.conf")
        do {
            try "[general]\nsources = 4200\nresampler = linear\nrt-prio = 0\n".write(to: conf, atomically: true, encoding: .utf8)
        } catch {
            throw BenchError("cannot write \(conf.path) (\(error.localizedDescription)); give a writable scratch directory")
        }
        guard let sofa = SOFAFile.defaultURL else {
            throw BenchError("no default SOFA file for sfx's HRTF; install libmysofa-data (or Debian's libmysofa1, which ships default.sofa)")
        }
        let table = try SOFAFile.load(sofa, sampleRate: 48_000)
        var result = Result(seconds: seconds, rounds: rounds, sfxHRTF: sofa.path, features: features)
        let jobs = [true, false].flatMap { sfx in features.flatMap { f in voiceCounts.map { (sfx: sfx, feature: f, voices: $0) } } }
        var state: UInt64 = 0x3057_1D
        for round in 0..<rounds {
            var order = jobs
            for i in stride(from: order.count - 1, to: 0, by: -1) {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                order.swapAt(i, Int((state >> 33) % UInt64(i + 1)))
            }
            for (index, job) in order.enumerated() {
                progress("world window \(round + 1) of \(rounds), \(index + 1) of \(order.count): \(client(job.sfx, job.feature)), K=\(job.voices)")
                var row: CPURow
                if job.sfx {
                    row = try sfxWindow(job.feature, voices: job.voices, seconds: seconds, table: table)
                } else {
                    let (measured, hrtf) = try openALWindow(job.feature, voices: job.voices, seconds: seconds, probes: probes, conf: conf)
                    row = measured
                    if job.feature == .hrtf { result.openALHRTF = hrtf }
                }
                row.window = round
                result.rows.append(row)
            }
        }
        return result
    }

    /// sfx's Mixer alone, offline: CPU seconds of this thread per second of audio.
    static func sfxWindow(_ feature: Feature, voices: Int, seconds: Double, table: HRTFTable) throws -> CPURow {
        let format = AudioFormat(sampleRate: 48_000, channels: 2)
        var configuration = Mixer.Configuration(sampleRate: 48_000, maxVoices: voices)
        configuration.virtualThreshold = 0
        let mixer = Mixer(format: format, configuration: configuration, hrtf: feature == .hrtf ? table : nil)
        if feature == .hrtf, mixer.hrtf == nil { throw BenchError("the mixer did not take the HRTF table (\(table.sampleRate) Hz)") }
        let cue = Cue(name: "loop", format: AudioFormat(sampleRate: 48_000, channels: 1), interleaved: Cost.loop)
        defer { withExtendedLifetime(cue) {} }
        mixer.apply(.setListener(Listener()))
        mixer.apply(.setWorld(SpatialWorld(dopplerFactor: feature == .nodoppler ? 0 : 1)))
        let filter: FilterSettings? = feature == .lowpass ? .lowPass(cutoff: 5_000) : nil
        let reverb = feature == .reverb
            ? EffectProcessor(.reverb(.hall), sampleRate: 48_000, rewindHeadroomFrames: configuration.rewindHeadroomFrames) : nil
        defer { withExtendedLifetime(reverb) {} }
        if let reverb { mixer.apply(.setEffect(bus: 0, processor: EffectReference(reverb, key: 1), returnGroup: .effects)) }
        for i in 0..<voices {
            let (position, velocity) = worldPath(i, t: 0)
            mixer.apply(.play(PlayRequest(voice: VoiceID(UInt64(i + 1)), cue: cue, gain: 1 / Float(voices), loops: -1,
                                          source: Source(position: position, velocity: velocity), filter: filter,
                                          sends: reverb == nil ? .zero : SIMD4(1, 0, 0, 0))))
        }
        let output = UnsafeMutablePointer<Float>.allocate(capacity: block * 2)
        defer { output.deallocate() }
        var frame = 0, cpu: UInt64 = 0
        for (pass, length) in [warmUpFrames, Int(seconds * 48_000)].enumerated() {
            let end = frame + length, start = threadCPUNanoseconds()
            while frame < end {
                let frames = min(block, end - frame)
                let t = Double(frame) / 48_000
                for i in 0..<voices {
                    let (position, velocity) = worldPath(i, t: t)
                    mixer.apply(.setPosition(VoiceID(UInt64(i + 1)), position, velocity: velocity))
                }
                mixer.render(into: output, frameCount: frames)
                mixer.drainEvents { _, _ in }
                frame += frames
            }
            if pass == 1 { cpu = threadCPUNanoseconds() - start }
        }
        guard mixer.playingVoiceCount == voices, mixer.virtualVoiceCount == 0 else {
            throw BenchError("sfx's mixer played \(mixer.playingVoiceCount) of \(voices) voices (\(mixer.virtualVoiceCount) virtual)")
        }
        return CPURow(client: client(true, feature), voices: voices, coreShare: Double(cpu) / 1e9 / seconds)
    }

    /// OpenAL Soft through its loopback device (probes/openalworld.c): the row, and the HRTF it
    /// reported.
    static func openALWindow(_ feature: Feature, voices: Int, seconds: Double, probes: URL, conf: URL) throws -> (CPURow, String?) {
        let executable = probes.appending(path: "openalworld")
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--feature", feature.rawValue, "--voices", "\(voices)", "--seconds", "\(seconds)", "--block", "\(block)"]
        process.environment = ProcessInfo.processInfo.environment.merging(["ALSOFT_CONF": conf.path]) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        do {
            try process.run()
        } catch {
            throw BenchError("cannot start \(executable.path) (\(error.localizedDescription)); build the C clients with Bench/run")
        }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let fields = text.split(separator: " ")
        guard process.terminationStatus == 0, fields.count == 6, fields[0] == "cpu", let cpu = Double(fields[1]),
              let audio = Double(fields[2]), audio > 0 else {
            throw BenchError("openalworld \(process.arguments!.joined(separator: " ")) wrote \"\(text)\" (status \(process.terminationStatus)) instead of \"cpu NS NS hrtf N NAME\"; see its message above")
        }
        let hrtf = fields[4] == "1" ? String(fields[5]) : nil
        return (CPURow(client: client(false, feature), voices: voices, coreShare: cpu / audio), hrtf)
    }

    // MARK: Report

    /// Per feature: sfx's fit, OpenAL Soft's, and the ratio of their slopes with its interval.
    struct Comparison: Codable {
        var feature: Feature
        var sfx: CPUFit
        var openAL: CPUFit
        /// sfx ÷ OpenAL Soft (each slope's interval at 97.5 %, so the ratio's covers at least 95 %).
        var ratio: Double
        var ratioInterval: Interval?
    }

    static func comparisons(_ result: Result) -> [Comparison] {
        result.features.compactMap { feature in
            guard let sfx = CPUFit(client: client(true, feature), rows: result.rows),
                  let openAL = CPUFit(client: client(false, feature), rows: result.rows) else { return nil }
            let interval = sfx.combinedSlopeInterval.flatMap { s in openAL.combinedSlopeInterval.flatMap { s.divided(by: $0) } }
            return Comparison(feature: feature, sfx: sfx, openAL: openAL, ratio: sfx.slope / openAL.slope, ratioInterval: interval)
        }
    }

    /// The reverb bus's own cost, K-independent: per client, the mean of row (d)'s K = 1 windows
    /// less row (a)'s (one voice each, the bus active; the one voice's send is in it too), in µs
    /// of CPU per second of audio as a fraction of a core; each mean's interval at 97.5 %, so the
    /// difference's and the ratio's cover at least 95 %.
    struct BusCost: Codable {
        var sfx: Double
        var sfxInterval: Interval
        var openAL: Double
        var openALInterval: Interval
        var ratio: Double
        var ratioInterval: Interval?
    }

    static func reverbBusCost(_ result: Result) -> BusCost? {
        func difference(_ sfx: Bool) -> (Double, Interval)? {
            func k1(_ feature: Feature) -> SampleMean? {
                SampleMean(result.rows.filter { $0.client == client(sfx, feature) && $0.voices == 1 }.map(\.coreShare))
            }
            guard let wet = k1(.reverb), let dry = k1(.positional),
                  let wetInterval = wet.interval(level: CPUFit.combinedLevel),
                  let dryInterval = dry.interval(level: CPUFit.combinedLevel) else { return nil }
            return (wet.mean - dry.mean, wetInterval.minus(dryInterval))
        }
        guard let (sfx, sfxInterval) = difference(true), let (openAL, openALInterval) = difference(false) else { return nil }
        return BusCost(sfx: sfx, sfxInterval: sfxInterval, openAL: openAL, openALInterval: openALInterval,
                       ratio: sfx / openAL, ratioInterval: sfxInterval.divided(by: openALInterval))
    }

    /// The section of the report: one row a feature.
    static func lines(_ result: Result) -> [String] {
        var lines = [
            "", "## Sound in a game world: CPU per extra voice, sfx's Mixer beside OpenAL Soft (pure mixing)", "",
            "Offline, on one thread: sfx's `Mixer` rendering, OpenAL Soft through its loopback device (ALC_SOFT_loopback); 48 kHz stereo float; K = \(voiceCounts.map(String.init).joined(separator: ", ")) voices looping a tone at gain 1/K, each moving (position and velocity set every \(block) frames, 10 ms), inverse clamped distance, doppler; linear interpolation on both; \(format(result.seconds, digits: 1)) s of audio a window, \(result.rounds) windows a client, feature and K, interleaved. b: µs of CPU per extra voice per second of audio, 95 % interval; ratio: sfx ÷ OpenAL Soft (Bonferroni, ≥ 95 %). Goal: ratio ≤ 0.5.",
            "",
            "| feature | sfx b | OpenAL Soft b | sfx ÷ OpenAL Soft | sfx at K=1024, % of a core | OpenAL Soft at K=1024 | goal ≤ 0.5 |",
            "|---|---:|---:|---:|---:|---:|---|",
        ]
        for c in comparisons(result) {
            let verdict = Feature.judged.contains(c.feature) ? Verdict.atMost(c.ratioInterval, 0.5).rawValue : "(no goal)"
            lines.append("| \(c.feature.title) | \(CPUFit.microseconds(c.sfx.slope, c.sfx.slopeInterval)) | \(CPUFit.microseconds(c.openAL.slope, c.openAL.slopeInterval)) | \(CPUFit.ratioText(c.sfx.slope, c.openAL.slope, c.ratioInterval, denominatorName: "OpenAL Soft's")) | \(format(c.sfx.value(at: 1024) * 100, digits: 1)) | \(format(c.openAL.value(at: 1024) * 100, digits: 1)) | \(verdict) |")
        }
        if let bus = reverbBusCost(result) {
            lines.append("| one reverb bus's fixed cost (K = 1 windows: (d) − (a)), µs per second of audio | \(CPUFit.microseconds(bus.sfx, bus.sfxInterval)) | \(CPUFit.microseconds(bus.openAL, bus.openALInterval)) | \(CPUFit.ratioText(bus.sfx, bus.openAL, bus.ratioInterval, denominatorName: "OpenAL Soft's")) | | | \(Verdict.atMost(bus.ratioInterval, 1).rawValue) (goal ≤ 1) |")
        }
        for (feature, why) in result.notMeasured.sorted(by: { $0.key < $1.key }) {
            let title = Feature(rawValue: feature)?.title ?? feature
            lines.append("| \(title) | not measured: \(why) | | | | | not judged |")
        }
        lines += ["", "HRTF: sfx \(result.sfxHRTF ?? "?") (libmysofa's default SOFA set); OpenAL Soft \(result.openALHRTF.map { "`\($0)`, its built-in default (1.19 loads `.mhr` files only, not SOFA)" } ?? "?")."]
        return lines
    }
}
