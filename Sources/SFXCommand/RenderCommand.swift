import FoundationEssentials
import SFXSystem
import CSFXSystem
import Glibc
import SFX
import SFXCore
import SFXMedia

enum RenderCommand: Subcommand {
    static let spec = CommandSpec(
        name: "render", abstract: "Mix sounds offline into a sound file (a debugging aid).",
        discussion: """
        Each sound starts at the time the --at of the same position gives (0 when absent), mixed \
        by the same mixer that plays in real time, so the file is what the device would get. \
        The format follows the output's extension (.wav, .flac, .ogg, .oga, .opus, .mp3, .aiff, \
        .caf, .m4a), or --format (aac is m4a); another audio extension (.wma, …) is refused, and \
        a name with none gets WAV; -o - writes to standard output (WAV unless --format says \
        otherwise; not m4a). M4A is AAC through FFmpeg, as `sfx record` writes it. \
        --at-position X,Y,Z puts the sound of the same position at a point of a game's world, heard \
        from the origin facing -z (x right, y up), as sfx play --at does: panned by where it is, \
        1/distance beyond 1 unit, or through the HRTF set with --hrtf (for headphones). \
        --lowpass, --highpass or --bandpass (with --q) filters every sound; --reverb sends every \
        sound to a bus running that reverb preset. The mix lasts until the sounds end (and a \
        reverb's tail has decayed by 96 dB), or --seconds.
        """,
        examples: ["sfx render tock bell -o out.wav --at 0 --at 0.25", "sfx render bell -o bell.ogg",
                   "sfx render bell -o side.wav --at-position 5,0,0 --hrtf --seconds 3",
                   "sfx render bell -o - | sox -t wav - -n stat"],
        positionals: [PositionalSpec(name: "NAME|FILE", help: "System sound names, sound files, or - for standard input.", min: 0, max: nil)],
        options: [output, format, SoundArgument.idOption, SoundArgument.fileOption, at,
                  Volume.option, Volume.decibelOption, CommonOptions.pan.spec, rate.spec, WorldOptions.atPosition]
            + WorldOptions.filterSpecs + [WorldOptions.reverb, WorldOptions.hrtf, mixLength.spec, quiet])

    static let output = OptionSpec.option("output", short: "o", value: "FILE", help: "The file to write, or - for standard output (required).")
    static let format = OptionSpec.option("format", value: "FORMAT", help: "\(OutputFormat.names) (default: by the output's extension, else wav).")
    static let at = OptionSpec.option("at", value: "SECONDS", repeatable: true, help: "When the sound of the same position starts (0 to \(OfflineMix.maximumSeconds); it must end by then).")
    static let rate = IntegerOption(spec: .option("rate", value: "HZ", help: "Sample rate, 8000 to 192000 (default 48000)."), range: 8000...192_000)
    static let quiet = OptionSpec.flag("quiet", short: "q", help: "Do not say what was written.")
    static let mixLength = NumberOption(spec: .option("seconds", value: "SECONDS", help: "The mix's length: cut there, or silence (a tail) to there (0.001 to \(OfflineMix.maximumSeconds); default until the sounds end)."),
                                      range: 0.001...Double(OfflineMix.maximumSeconds))

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        guard let output = arguments.value(output) else {
            throw UsageError(message: "missing '--output FILE'", command: spec)
        }
        let chosen: OutputFormat
        if let name = arguments.value(format) {
            guard let named = OutputFormat(formatName: name) else {
                throw UsageError(message: "unknown format '\(name)': expected \(OutputFormat.names)", command: spec)
            }
            chosen = named
        } else if output != "-", let byName = OutputFormat(fileName: output) {
            chosen = byName
        } else if output != "-", let other = OutputFormat.unwritableExtension(of: output) {
            // WAV under another audio format's name would not play as that name promises.
            throw UsageError(message: "'\(output)': sfx render does not write .\(other) files; "
                             + "name the output .wav, .flac, .ogg, .opus, .mp3, .aiff, .caf or .m4a, or give --format", command: spec)
        } else {
            chosen = .wav
        }
        if output == "-", chosen == .m4a {
            throw UsageError(message: "sfx render writes M4A to a file only: give -o FILE.m4a, or another --format for standard output", command: spec)
        }
        let sounds = try SoundArgument.all(in: arguments)
        // The mix stops at OfflineMix.maximumSeconds: a start at or after it would be lost.
        let longest = Double(OfflineMix.maximumSeconds)
        let starts = try arguments.values(at).map {
            try ParsedArguments.number($0, option: "at", in: 0...longest, spec: spec)
        }
        guard starts.count <= sounds.count else {
            throw UsageError(message: "more --at times (\(starts.count)) than sounds (\(sounds.count))", command: spec)
        }
        let positions = try arguments.values(WorldOptions.atPosition).map { text throws(UsageError) in
            try WorldOptions.point(text, option: WorldOptions.atPosition.name, spec: spec)
        }
        guard positions.count <= sounds.count else {
            throw UsageError(message: "more --at-position points (\(positions.count)) than sounds (\(sounds.count))", command: spec)
        }
        try WorldOptions.checkHRTF(arguments, positional: !positions.isEmpty, option: WorldOptions.atPosition.name)
        let filter = try WorldOptions.filter(arguments)
        let reverb = try WorldOptions.reverbPreset(arguments)
        let length = try mixLength.read(arguments)
        var configuration = SoundLibrary.Configuration()
        if let rate = try rate.read(arguments) {
            configuration.format = AudioFormat(sampleRate: rate, channels: 2)
        }
        let volume = try Volume.factor(arguments) ?? 1
        let pan = Float(try CommonOptions.pan.read(arguments) ?? 0)
        let library = try SoundLibrary(configuration: configuration)
        let audio = configuration.format
        var commands: [ScheduledCommand] = []
        var cues: [Cue] = []   // kept alive while the mixer reads them
        var sends = SIMD4<Float>.zero
        var processor: EffectProcessor?   // kept alive while the mixer runs it
        if let reverb {
            let effect = EffectProcessor(.reverb(reverb.settings), sampleRate: audio.sampleRate, rewindHeadroomFrames: 0)
            processor = effect
            commands.append(ScheduledCommand(frame: 0, .setEffect(bus: WorldOptions.reverbBus, processor: EffectReference(effect, key: 1), returnGroup: .effects)))
            sends[WorldOptions.reverbBus] = WorldOptions.reverbSend
        }
        var end = 0.0
        for (i, sound) in sounds.enumerated() {
            let id = try sound.load(into: library)
            let at = i < starts.count ? starts[i] : 0
            guard let cue = library.cue(for: id) else { throw Failure("render: sound \(i + 1) did not load; try again") }
            // A sound that would run past the end of the mix is refused rather than cut short.
            if at + cue.duration > longest {
                throw Failure("render: sound \(i + 1) starts at \(seconds(at)) and lasts \(seconds(cue.duration)), past the "
                              + "\(OfflineMix.maximumSeconds) s a render may last; start it by \(seconds(max(0, longest - cue.duration)))")
            }
            cues.append(cue)
            end = max(end, at + cue.duration)
            // What OfflineMix.render asks of the mixer, and the place and filter of the sound.
            let request = PlayRequest(voice: VoiceID(UInt64(i + 1)), cue: cue, gain: volume, pan: pan,
                                      source: i < positions.count ? Source(position: positions[i]) : nil, filter: filter, sends: sends)
            commands.append(ScheduledCommand(frame: Int((at * Double(audio.sampleRate)).rounded()), .play(request)))
        }
        let table = arguments.flag(WorldOptions.hrtf) ? try hrtfTable(sampleRate: audio.sampleRate, channels: audio.channels) : nil
        // A reverb's tail outlives the sounds: without --seconds the mix lasts until it has decayed
        // by 96 dB (RT60 × 96/60 after the pre-delay, the effect's idle law), within the longest mix.
        let tail = reverb.map { WorldOptions.tail(of: $0.settings) }
        let mixSeconds = length ?? tail.map { min(longest, end + $0) }
        let samples = withExtendedLifetime((cues, processor)) {
            OfflineRenderer.render(commands, format: audio, hrtf: table,
                                   length: mixSeconds.map { .frames(Int(($0 * Double(audio.sampleRate)).rounded())) }
                                       ?? .untilFinished(maximumFrames: audio.sampleRate * OfflineMix.maximumSeconds)).samples
        }
        if output == "-" {
            try writeToStandardOutput(samples, format: audio, as: chosen)
        } else if let encoding = chosen.encoding {
            try AudioFileWriter.write(samples, sampleRate: audio.sampleRate, channels: audio.channels,
                                      to: URL(filePath: output), as: encoding)
        } else {
            try writeThroughFFmpeg(samples, format: audio, to: URL(filePath: output))
        }
        let frames = samples.count / audio.channels
        if !arguments.flag(quiet) {
            // With -o -, standard output is the file: the note goes to stderr.
            let note = "wrote \(output == "-" ? "standard output" : output) (\(chosen.rawValue)): \(frames) frames, "
                + "\(seconds(Double(frames) / Double(audio.sampleRate))) at \(audio)"
            if output == "-" { writeToStandardError(note + "\n") } else { print(note) }
        }
        return 0
    }

    /// The default SOFA set at the render's rate, as `SoundEngine.Configuration.hrtf = .default` loads it.
    static func hrtfTable(sampleRate: Int, channels: Int) throws -> HRTFTable {
        guard channels == 2 else { throw Failure("render: --hrtf renders to two channels, the render has \(channels); drop --hrtf") }
        guard let url = SOFAFile.defaultURL else {
            throw Failure("render: the default HRTF set is not installed (/usr/share/libmysofa/default.sofa); install libmysofa1 (apt-get install libmysofa1) or drop --hrtf")
        }
        return try SOFAFile.load(url, sampleRate: sampleRate)
    }

    /// Writes M4A (AAC) with the recorder's encoder, which creates only new files: into a new
    /// name beside `url`, renamed over it once complete (so an existing file is replaced whole,
    /// and a failure leaves it as it was), readable as the umask allows, as other outputs are.
    static func writeThroughFFmpeg(_ samples: [Float], format audio: AudioFormat, to url: URL) throws {
        let partial = url.deletingLastPathComponent().appending(path: ".\(url.lastPathComponent).\(UUID().uuidString.prefix(8)).partial")
        let encoder: any RecordingEncoder
        do {
            encoder = try RecordingFile.create(partial, encoding: RecordingEncoding(format: .m4a, sampleRate: audio.sampleRate, channels: audio.channels))
        } catch {
            throw Failure("\(error)".replacing(partial.path, with: url.path))
        }
        do {
            try samples.withUnsafeBufferPointer { try encoder.append($0) }
            try encoder.finish()
            let mask = umask(0)
            umask(mask)
            chmod(partial.path, 0o666 & ~mask)
            guard rename(partial.path, url.path) == 0 else {
                throw Failure("\(url.path): cannot be written (\(String(cString: strerror(errno)))); choose a writable place")
            }
        } catch {
            encoder.abandon()
            unlink(partial.path)
            throw Failure("\(error)".replacing(partial.path, with: url.path))
        }
    }

    /// Encodes into an anonymous in-memory file (libsndfile seeks back to finish a header, which
    /// a pipe cannot do), then copies it to standard output.
    static func writeToStandardOutput(_ samples: [Float], format audio: AudioFormat, as format: OutputFormat) throws {
        let fd = sfx_memfd("sfx-render")
        guard fd >= 0 else { throw Failure("render: cannot encode in memory (\(String(cString: strerror(errno)))); write to a file with -o FILE") }
        defer { close(fd) }
        try AudioFileWriter.write(samples, sampleRate: audio.sampleRate, channels: audio.channels,
                                  to: URL(filePath: "/proc/self/fd/\(fd)"), as: format.encoding ?? .wavPCM32)
        lseek(fd, 0, SEEK_SET)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let got = read(fd, &buffer, buffer.count)
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { break }
            var offset = 0
            while offset < got {
                let written = buffer.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress! + offset, got - offset) }
                if written < 0, errno == EINTR { continue }
                guard written > 0 else {
                    throw Failure("render: standard output cannot be written (\(String(cString: strerror(errno)))); check what it is piped to")
                }
                offset += written
            }
        }
    }
}
