import FoundationEssentials
import SFXSystem
import Glibc
import SFX
import SFXMedia

enum RecordCommand: Subcommand {
    static let spec = CommandSpec(
        name: "record", abstract: "Record from a capture device to a sound file, with a live level meter.",
        discussion: """
        Without -o the file goes to $XDG_DATA_HOME/sfx/recordings (~/.local/share/sfx/recordings), \
        named by the time it began; an existing file is never overwritten. The format follows \
        --format, else -o's extension, else m4a (AAC). Enter or Ctrl-C stops and saves; a recording \
        shorter than --min is removed instead. On a terminal a bar per channel shows the level \
        (average and held peak, dBFS) with a count-up timer; otherwise one plain line a second. \
        The file stays readable if sfx is killed (all but at most the last second): an m4a is \
        fragmented MPEG-4 while it records, rewritten as a standard M4A when it stops (--fragmented \
        keeps the fragments). --voice processes the voice as a phone does (noise suppression, \
        automatic gain to -23 dBFS, a high-pass at 80 Hz); --trim-silence leaves out the silence \
        before the first speech and after the last (keeping 0.2 s of each). A full disk stops the recording and keeps what was written. `sfx recordings` lists what was saved. \
        With no sound card and no -D, it records through a running sound server, else from sfx's \
        virtual card, whose input is the sound file named by SFX_VIRTUAL_INPUT (then silence), \
        or silence without it.
        """,
        examples: ["sfx record", "sfx record -o memo.opus --max 30 --min 1 --prompt tock", "sfx record -o memo.m4a --voice --trim-silence --min 1",
                   "sfx record -D hw:1 --format flac --channels 2 --rate 44100"],
        positionals: [],
        options: [output, format, rate.spec, channels.spec, maximum.spec, minimum.spec, prompt, device, bitRate.spec, quality.spec, fragmented, voice, trimSilence, quiet])

    static let output = OptionSpec.option("output", short: "o", value: "FILE", help: "The file to create (it must not exist; default: a timestamped name in the recordings directory).")
    static let format = OptionSpec.option("format", value: RecordingFormat.names, help: "The file format (default: by -o's extension, else m4a).")
    static let rate = IntegerOption(spec: .option("rate", value: "HZ", help: "Sample rate to ask for, 8000 to 192000 (default 48000; Opus takes 8000, 12000, 16000, 24000, 48000)."), range: 8_000...192_000)
    static let channels = IntegerOption(spec: .option("channels", value: "N", help: "1 or 2 (default 1 for record, 2 for meter)."), range: 1...2)
    static let maximum = NumberOption(spec: .option("max", value: "SECONDS", help: "Stop by itself after this long."), range: 0.01...86_400)
    static let minimum = NumberOption(spec: .option("min", value: "SECONDS", help: "Remove the recording if it is shorter than this."), range: 0...86_400)
    static let prompt = OptionSpec.option("prompt", value: "SOUND", help: "Play this system sound (tock) or file first; capture starts after it ends.")
    static let device = OptionSpec.option("device", short: "D", value: "PCM", help: "The ALSA capture device (default: the settings file, else default).")
    static let bitRate = IntegerOption(spec: .option("bitrate", value: "BPS", help: "AAC bit rate for m4a, 16000 to 512000 (default 64000 a channel)."), range: 16_000...512_000)
    static let quality = NumberOption(spec: .option("quality", value: "Q", help: "0 to 1 for opus, vorbis and mp3 (and flac's effort)."), range: 0...1)
    static let fragmented = OptionSpec.flag("fragmented", help: "For m4a: keep the fragmented MPEG-4 written while recording (for streaming fragments) instead of finishing a standard file.")
    static let voice = OptionSpec.flag("voice", help: "Voice processing: noise suppression, automatic gain and a high-pass, as phones apply (speexdsp, libspeexdsp1).")
    static let trimSilence = OptionSpec.flag("trim-silence", help: "Leave out the silence before the first speech and after the last, keeping 0.2 s of each.")
    static let quiet = OptionSpec.flag("quiet", short: "q", help: "No meter or progress; only the saved file's line (or the error).")

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let outputPath = arguments.value(output)
        var settings = RecorderSettings()
        if let name = arguments.value(format) {
            // "ogg" and "aac" are what users call Vorbis and M4A.
            let aliases: [String: RecordingFormat] = ["ogg": .vorbis, "oga": .vorbis, "aac": .m4a, "mp4": .m4a]
            guard let named = RecordingFormat(rawValue: name.lowercased()) ?? aliases[name.lowercased()] else {
                throw UsageError(message: "unknown format '\(name)': expected \(RecordingFormat.names) (aac is m4a, ogg is vorbis)", command: spec)
            }
            settings.format = named
        } else if let outputPath, let byName = RecordingFormat(fileName: outputPath) {
            settings.format = byName
        }
        if let outputPath { settings.url = URL(filePath: outputPath) }
        settings.sampleRate = try rate.read(arguments) ?? 48_000
        let opusRates = [8_000, 12_000, 16_000, 24_000, 48_000]
        if settings.format == .opus, !opusRates.contains(settings.sampleRate) {
            throw UsageError(message: "invalid value '\(settings.sampleRate)' for '--rate': Opus takes "
                             + "\(opusRates.map(String.init).joined(separator: ", ")) Hz; give one of them, or another --format", command: spec)
        }
        settings.channels = try channels.read(arguments) ?? 1
        settings.maxDuration = try maximum.read(arguments).map { .milliseconds(Int64(($0 * 1_000).rounded())) }
        settings.minDuration = try minimum.read(arguments).map { .milliseconds(Int64(($0 * 1_000).rounded())) }
        settings.bitRate = try bitRate.read(arguments)
        settings.quality = try quality.read(arguments)
        if arguments.flag(fragmented) {
            guard settings.format == .m4a else {
                throw UsageError(message: "--fragmented is for m4a, and this recording is \(settings.format.rawValue): drop --fragmented, or record m4a", command: spec)
            }
            settings.container = .fragmented
        }
        if arguments.flag(voice) { settings.voiceProcessing = .standard }
        settings.trimSilence = arguments.flag(trimSilence)
        let userSettings = try CommandSettings.load(quiet: true)
        let quietly = arguments.flag(quiet)
        if let minimum = settings.minDuration, let maximum = settings.maxDuration, minimum > maximum {
            throw UsageError(message: "--min \(arguments.value(self.minimum.spec) ?? "") is longer than --max \(arguments.value(self.maximum.spec) ?? ""): "
                             + "nothing could be kept; give a --min up to --max", command: spec)
        }
        let capture = try CaptureChoice.device(given: arguments.value(device), settings: userSettings, quiet: quietly)
        settings.device = capture.device

        var session: EngineSession?
        if let name = arguments.value(prompt) {
            var options = OutputOptions()
            options.quiet = true
            let opened = try EngineSession(options, settings: userSettings)
            session = opened
            let library = opened.engine.library
            settings.prompt = name.contains("/") || FileManager.default.fileExists(atPath: name)
                ? try library.load(contentsOf: URL(filePath: name)) : try library.systemSound(named: name)
        }
        defer { session?.engine.close() }

        // A file-size limit (ulimit -f) must end the recording like a full disk, not kill sfx.
        signal(SIGXFSZ, SIG_IGN)
        let recorder: Recorder
        do {
            recorder = try Recorder(settings: settings, engine: session?.engine)
            try recorder.record()
        } catch RecorderError.setting(let error) {
            throw SettingFlags.usageError(error, arguments)
        } catch {
            throw Failure("\(error)")
        }
        if let notice = capture.notice { printError(notice) }
        let stop = StopRequest()
        stop.onEnterOrInterrupt()
        let parameters = recorder.parameters
        if !quietly, let url = recorder.url, let parameters {
            printError("recording to \(url.path) (\(settings.format.rawValue), \(parameters.sampleRate) Hz, \(parameters.channels) ch); Enter or Ctrl-C stops")
        }
        let display = LevelDisplay(channels: parameters?.channels ?? 1)
        var last: RecorderEvent?
        while last == nil {
            if stop.requested {
                last = recorder.stop()
                break
            }
            last = recorder.waitUntilFinished(timeout: .microseconds(Int64(display.interval)))
            if !quietly {
                let reading = LevelReading(average: (0..<display.channels).map(recorder.averagePower(channel:)),
                                           peak: (0..<display.channels).map(recorder.peakPower(channel:)))
                display.show(reading, seconds: recorder.currentTime, prefix: "● ", final: last != nil)
            }
        }
        switch last {
        case .finished(let url, let duration):
            print("saved \(url.path) (\(String(cFormat: "%.2f", duration)) s, \(settings.format.rawValue), \(size(url)))")
            if recorder.overruns > 0 {
                let count = recorder.overruns == 1 ? "1 overrun" : "\(recorder.overruns) overruns"
                printError("\(count) (the capture fell behind and recovered): \(Self.missing(recorder.missingSeconds)) of sound is missing from the recording")
            }
            if recorder.droppedFrames > 0 {
                printError("\(recorder.droppedFrames) frames were lost while the disk was too slow; record to a faster disk")
            }
            return 0
        case .discarded(let url, let reason):
            printError("discarded \(url.path): \(reason)")
            return 1
        case .failed(let error):
            printError("\(error)")
            return 1
        default:
            printError("the recording did not end properly")
            return 1
        }
    }

    /// "about 5.02 s", "about 12 ms", "less than 1 ms"
    static func missing(_ seconds: Double) -> String {
        if seconds >= 0.1 { return String(cFormat: "about %.2f s", seconds) }
        if seconds >= 0.001 { return String(cFormat: "about %.0f ms", seconds * 1_000) }
        return "less than 1 ms"
    }

    /// "52.1 kB"
    static func size(_ url: URL) -> String {
        var st = stat()
        guard stat(url.path, &st) == 0 else { return "? bytes" }
        return st.st_size < 1_000_000 ? String(cFormat: "%.1f kB", Double(st.st_size) / 1_000) : String(cFormat: "%.1f MB", Double(st.st_size) / 1_000_000)
    }
}

/// The capture device of `sfx record` and `sfx meter`: the one given (-D), else the settings
/// file's; on a machine with no sound card, a running sound server's, else sfx's virtual card
/// (as `sfx play` plays through it), whose capture side plays the sound file named by
/// SFX_VIRTUAL_INPUT, or silence. SFX_VIRTUAL_CARD=1 asks for the card anywhere.
enum CaptureChoice {
    /// The device, and the virtual card's notice when it is used (nil with `quiet`): the
    /// command prints it once capture has started, so that an error is the only line printed.
    static func device(given: String?, settings: UserSettings, quiet: Bool,
                       environment: [String: String] = ProcessInfo.processInfo.environment) throws -> (device: String, notice: String?) {
        if let named = given ?? settings.device { return (named, nil) }
        let server = ServerOutput.choice(deviceGiven: false, environment: environment)
        let input = try self.input(environment)
        guard let fallback = try VirtualCardFallback.engage(deviceGiven: false, serverChosen: server != nil, captureSource: input) else {
            return (server?.pcm ?? "default", nil)
        }
        let source = input.map { "which plays \(VirtualCardFallback.inputKey)=\($0.path) into its input" }
            ?? "which records silence: set \(VirtualCardFallback.inputKey) to a sound file to record that instead"
        let notice = "\(fallback.reason): recording from sfx's virtual card (\(fallback.card.shownDirectory.path)), \(source)"
        return (fallback.card.pcmName, quiet ? nil : notice)
    }

    /// SFX_VIRTUAL_INPUT as an absolute file URL, checked readable; nil when unset or empty.
    static func input(_ environment: [String: String]) throws -> URL? {
        guard let path = environment[VirtualCardFallback.inputKey], !path.isEmpty else { return nil }
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        guard FileManager.default.isReadableFile(atPath: absolute) else {
            throw Failure("\(VirtualCardFallback.inputKey) names \(path), which cannot be read; point it at a sound file (WAV, FLAC, Ogg…) or unset it")
        }
        return URL(filePath: absolute)
    }
}
