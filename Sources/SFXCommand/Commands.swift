import Foundation
import SFX
import SFXCore
import SFXMedia
import SFXDevice
import SFXCardSupport

/// `NAME|FILE`: a path when it names an existing file or looks like one, else a system sound.
/// Paths keep the exact bytes given on the command line, so names that are not UTF-8 open too.
enum SoundArgument {
    case file(RawFilePath)
    case system(String)

    init(_ text: String) {
        let path = SoundArgument.rawBytes(of: text)
        var st = stat()
        if text.contains("/") || path.withCString({ stat($0, &st) }) == 0 {
            self = .file(path)
        } else {
            self = .system(text)
        }
    }

    /// The command-line argument `text` came from, byte for byte: Swift's `CommandLine.arguments`
    /// replaces bytes that are not UTF-8 with U+FFFD, so the raw `argv` entry that decodes to
    /// `text` is used (the first, should two differ only in such bytes).
    static func rawBytes(of text: String) -> RawFilePath {
        for index in 0..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            let bytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(argument).assumingMemoryBound(to: UInt8.self),
                                                  count: strlen(argument)))
            if String(decoding: bytes, as: UTF8.self) == text { return RawFilePath(bytes: bytes) }
        }
        return RawFilePath(text)
    }

    /// The file behind the argument.
    func file(in library: SoundLibrary) throws -> RawFilePath {
        switch self {
        case .file(let path): return path
        case .system(let name): return RawFilePath(try library.systemSoundFile(named: name).file)
        }
    }

    /// Loads the sound into `library`; a file is brought to `normalize`'s loudness when given
    /// (system sounds are already at their class's loudness).
    func load(into library: SoundLibrary, normalize: LoudnessNormalization? = nil) throws -> SoundID {
        switch self {
        case .file(let path): return try library.load(file: path, normalize: normalize)
        case .system(let name): return try library.systemSound(named: name)
        }
    }
}

func printJSON<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}

func seconds(_ s: Double) -> String { String(format: "%.3f s", s) }

enum ListCommand: Subcommand {
    static let spec = CommandSpec(
        name: "list", abstract: "List the system sounds: id, name, theme, loudness class, duration.",
        discussion: "System sounds come from the sound theme (sfx's own, inheriting freedesktop) and never need loading by hand.",
        positionals: [],
        options: [.flag("json", help: "Print JSON."),
                  .option("theme", value: "NAME", help: "The sound theme to list (default: sfx).")])

    struct Row: Encodable {
        let id: UInt32?
        let name: String
        let theme: String
        let file: String
        let duration: Double?
        let description: String?
        /// "input-feedback", "notification", "dialog" or "alarm" (see Sounds/README.md).
        let loudnessClass: String?
    }

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        var configuration = SoundLibrary.Configuration()
        if let theme = arguments.value("theme") { configuration.theme = theme }
        let library = try SoundLibrary(configuration: configuration)
        let rows = library.systemSounds().map { sound in
            Row(id: sound.id?.rawValue, name: sound.name, theme: sound.theme, file: sound.file,
                duration: (try? AudioFileInfo(contentsOf: URL(filePath: sound.file)))?.duration,
                description: sound.description, loudnessClass: library.loudnessClass(ofSystemSound: sound.name))
        }
        if arguments.flag("json") {
            try printJSON(rows)
            return 0
        }
        let nameWidth = max(4, rows.map(\.name.count).max() ?? 0)
        let themeWidth = max(5, rows.map(\.theme.count).max() ?? 0)
        let classWidth = max(5, rows.map { $0.loudnessClass?.count ?? 1 }.max() ?? 0)
        print("ID    " + "NAME".padding(toLength: nameWidth + 2, withPad: " ", startingAt: 0)
              + "THEME".padding(toLength: themeWidth + 2, withPad: " ", startingAt: 0)
              + "CLASS".padding(toLength: classWidth + 2, withPad: " ", startingAt: 0) + "DURATION  DESCRIPTION")
        for row in rows {
            let id = row.id.map(String.init) ?? "-"
            let duration = row.duration.map { String(format: "%6.3f s", $0) } ?? "       ?"
            print(id.padding(toLength: 6, withPad: " ", startingAt: 0)
                  + row.name.padding(toLength: nameWidth + 2, withPad: " ", startingAt: 0)
                  + row.theme.padding(toLength: themeWidth + 2, withPad: " ", startingAt: 0)
                  + (row.loudnessClass ?? "-").padding(toLength: classWidth + 2, withPad: " ", startingAt: 0)
                  + duration + "  " + (row.description ?? ""))
        }
        return 0
    }
}

enum InfoCommand: Subcommand {
    static let spec = CommandSpec(
        name: "info", abstract: "Show a sound file's format, rate, channels, duration, MIME type, loudness and true peak.",
        discussion: """
        The MIME type and extension follow the content, not the file's name: an Ogg Opus file is audio/ogg .opus. \
        Loudness is EBU R128 (libebur128): integrated LUFS from 400 ms up, the loudest 400 ms window below; \
        the true peak is in dBTP.
        """,
        positionals: [PositionalSpec(name: "NAME|FILE", help: "A system sound name or a sound file.", min: 1, max: nil)],
        options: [.flag("json", help: "Print JSON.")])

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let library = try SoundLibrary()
        var infos: [InfoRow] = []
        var failed = false
        for text in arguments.positionals {
            do {
                let url = try SoundArgument(text).file(in: library)
                infos.append(InfoRow(info: try AudioFileInfo(file: url), loudness: try Loudness(file: url)))
            } catch {
                printError(String(describing: error))
                failed = true
            }
        }
        if arguments.flag("json") {
            try printJSON(infos)
        } else {
            for row in infos {
                let info = row.info
                let frames = info.frames.map { "\($0) frames" } ?? "? frames"
                let duration = info.duration.map(seconds) ?? "? s"
                print("\(info.path): \(info.mimeType)  .\(info.fileExtension)  \(info.container) \(info.encoding)  "
                      + "\(info.sampleRate) Hz  \(info.channels) ch  \(frames)  \(duration)  \(row.levels)")
            }
        }
        return failed ? 1 : 0
    }
}

/// One file for `sfx info`: what `AudioFileInfo` gives, and its loudness (JSON: `lufs`,
/// `loudnessMethod`, `truePeak`, null when silent).
struct InfoRow: Encodable {
    let info: AudioFileInfo
    let loudness: Loudness

    private enum Key: String, CodingKey { case lufs, loudnessMethod, truePeak }

    func encode(to encoder: any Encoder) throws {
        try info.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(loudness.lufs, forKey: .lufs)
        try container.encode(loudness.method, forKey: .loudnessMethod)
        try container.encode(loudness.truePeak, forKey: .truePeak)
    }

    /// "-23.0 LUFS  -1.2 dBTP", "-30.1 LUFS (momentary max)  -9.8 dBTP" under 400 ms, or "silent".
    var levels: String {
        guard let lufs = loudness.lufs else { return "silent" }
        let method = loudness.method == "integrated" ? "" : " (\(loudness.method))"
        return String(format: "%.1f LUFS", lufs) + method + String(format: "  %.1f dBTP", loudness.truePeak ?? -.infinity)
    }
}

enum RenderCommand: Subcommand {
    static let spec = CommandSpec(
        name: "render", abstract: "Mix sounds offline into a WAV file (a debugging aid).",
        discussion: """
        Each sound starts at the time the --at of the same position gives (0 when absent), mixed \
        by the same mixer that plays in real time, so the file is what the device would get.
        """,
        positionals: [PositionalSpec(name: "NAME|FILE", help: "System sound names or sound files.", min: 1, max: nil)],
        options: [.option("output", short: "o", value: "FILE", help: "The WAV file to write (required)."),
                  .option("at", value: "SECONDS", repeatable: true, help: "When the sound of the same position starts (0 to \(OfflineMix.maximumSeconds); it must end by then)."),
                  .option("volume", value: "GAIN", help: "Gain of every sound, 0 to 1 (default 1)."),
                  .option("pan", value: "PAN", help: "Pan of every sound, -1 (left) to 1 (right) (default 0)."),
                  .option("rate", value: "HZ", help: "Sample rate (default 48000).")])

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        guard let output = arguments.value("output") else {
            throw UsageError(message: "missing '--output FILE'", command: spec)
        }
        // The mix stops at OfflineMix.maximumSeconds: a start at or after it would be lost.
        let longest = Double(OfflineMix.maximumSeconds)
        let starts = try arguments.values("at").map {
            try ParsedArguments.number($0, option: "at", in: 0...longest, spec: spec)
        }
        guard starts.count <= arguments.positionals.count else {
            throw UsageError(message: "more --at times (\(starts.count)) than sounds (\(arguments.positionals.count))", command: spec)
        }
        var configuration = SoundLibrary.Configuration()
        if let rate = try arguments.integer("rate", in: 8000...192_000) {
            configuration.format = AudioFormat(sampleRate: rate, channels: 2)
        }
        let library = try SoundLibrary(configuration: configuration)
        let volume = Float(try arguments.number("volume", in: 0...1) ?? 1)
        let pan = Float(try arguments.number("pan", in: -1...1) ?? 0)
        var plays: [OfflineMix.Play] = []
        for (i, text) in arguments.positionals.enumerated() {
            let id = try SoundArgument(text).load(into: library)
            let at = i < starts.count ? starts[i] : 0
            // A sound that would run past the end of the mix is refused rather than cut short.
            if let cue = library.cue(for: id), at + cue.duration > longest {
                throw Failure("render: \(text) starts at \(seconds(at)) and lasts \(seconds(cue.duration)), past the "
                              + "\(OfflineMix.maximumSeconds) s a render may last; start it by \(seconds(max(0, longest - cue.duration)))")
            }
            plays.append(OfflineMix.Play(sound: id, at: at, volume: volume, pan: pan))
        }
        let frames = try OfflineMix.render(plays, library: library, to: URL(filePath: output))
        print("wrote \(output): \(frames) frames, \(seconds(Double(frames) / Double(configuration.format.sampleRate))) at \(configuration.format)")
        return 0
    }
}

enum PlayCommand: Subcommand {
    static let spec = CommandSpec(
        name: "play", abstract: "Play sounds and exit when they are done.",
        discussion: """
        The sounds start together. Ctrl-C fades them out and exits. On a machine with no sound \
        card, and no --device given, sfx plays through its virtual card and says where the \
        card's recording is.
        """,
        positionals: [PositionalSpec(name: "NAME|FILE", help: "System sound names or sound files.", min: 1, max: nil)],
        options: [.option("volume", value: "GAIN", help: "Gain, 0 to 1 (default 1)."),
                  .option("pan", value: "PAN", help: "Pan, -1 (left) to 1 (right) (default 0)."),
                  .option("loops", value: "N", help: "Extra repeats; -1 repeats until Ctrl-C (default 0)."),
                  .flag("normalize", help: "Bring sound files to one loudness (-23 LUFS, true peak at most -1 dBTP) before playing."),
                  .option("normalize-to", value: "LUFS", help: "Like --normalize, to this loudness (-70 to 0).")]
            + EngineSession.options)

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let volume = Float(try arguments.number("volume", in: 0...1) ?? 1)
        let pan = Float(try arguments.number("pan", in: -1...1) ?? 0)
        let loops = try arguments.integer("loops", in: -1...1_000_000) ?? 0
        let normalize = try normalization(arguments)
        let session = try EngineSession(arguments)
        let sounds = try arguments.positionals.map {
            try SoundArgument($0).load(into: session.engine.library, normalize: normalize)
        }
        let interrupted = Interruption()
        interrupted.onInterrupt { try? session.engine.stopAll(fade: .milliseconds(30)) }
        for sound in sounds {
            session.engine.play(sound, volume: volume, pan: pan, loops: loops)
        }
        session.finish()
        return interrupted.happened ? 130 : 0
    }

    /// `--normalize` or `--normalize-to LUFS`; nil when neither is given.
    static func normalization(_ arguments: ParsedArguments) throws -> LoudnessNormalization? {
        if let target = try arguments.number("normalize-to", in: -70...0) {
            return LoudnessNormalization(target: target)
        }
        return arguments.flag("normalize") ? .standard : nil
    }
}

enum DevicesCommand: Subcommand {
    static let spec = CommandSpec(
        name: "devices", abstract: "List the ALSA devices sfx can play to.",
        discussion: "Pass a NAME to --device of `sfx play`.",
        positionals: [],
        options: [.flag("json", help: "Print JSON.")])

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let devices = DeviceList.playbackDevices()
        if arguments.flag("json") {
            try printJSON(devices)
            return 0
        }
        if let note = DeviceList.availabilityNote(devices: devices) { print(note) }
        let width = max(4, devices.map(\.name.count).max() ?? 0)
        print("NAME".padding(toLength: width + 2, withPad: " ", startingAt: 0) + "DESCRIPTION")
        for device in devices {
            print(device.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + device.description)
        }
        return 0
    }
}
