import FoundationEssentials
import Glibc
import SFX
import SFXMedia

/// `--format S16_LE --rate HZ --channels N`: standard input and files played as headerless PCM,
/// as aplay's `-f -r -c` take them. `-f` is already `--file` (canberra-gtk-play's), so the
/// sample format has the long name only; `--rate` is the rate asked of the device too, as
/// aplay's `-r` is.
enum RawInput {
    static let format = OptionSpec.option("format", value: "SAMPLE", help: "Read - and the files as raw PCM (no header) in this sample format, as aplay's -f: S16_LE, S24_3LE, S32_LE, FLOAT_LE, U8, … or cd, dat; with --rate (default 48000) and --channels (default 1).")
    static let channels = IntegerOption(spec: .option("channels", short: "c", value: "N", help: "With --format: the raw audio's channels, 1 to 64 (default 1; 2 for cd and dat)."), range: 1...64)
    static let specs = [format, channels.spec]

    /// Extensions of files that are raw PCM: they need --format.
    static let extensions: Set<String> = ["raw", "pcm"]

    /// The layout the options give, or nil when --format is absent.
    static func layout(_ arguments: ParsedArguments) throws(UsageError) -> RawPCMFormat? {
        let count = try channels.read(arguments)
        guard let name = arguments.value(format) else {
            if count != nil { throw UsageError(message: "--channels says how raw PCM is laid out: give --format SAMPLE with it", command: arguments.spec) }
            return nil
        }
        let rate = try arguments.integer(OutputOptions.rate.name, in: 8000...192_000)
        do {
            return try RawPCMFormat(name: name, sampleRate: rate, channels: count)
        } catch {
            throw UsageError(message: "--format: \(error)", command: arguments.spec)
        }
    }

    /// Refuses a `.raw`/`.pcm` file when no --format says its layout (it has no header to say it).
    static func check(_ sounds: [SoundArgument], raw: RawPCMFormat?, spec: CommandSpec) throws(UsageError) {
        guard raw == nil else { return }
        for case .file(let path) in sounds {
            let name = path.lastComponent.description
            guard let dot = name.lastIndex(of: "."), extensions.contains(name[name.index(after: dot)...].lowercased()) else { continue }
            throw UsageError(message: "\(path): raw PCM has no header to say its layout; give --format SAMPLE --rate HZ --channels N (e.g. --format S16_LE --rate 48000 --channels 2)", command: spec)
        }
    }

    /// Decodes `file` as `raw` into `library` (brought to `normalize`'s loudness when given).
    static func load(_ file: RawFilePath, raw: RawPCMFormat, name: String, into library: SoundLibrary,
                     normalize: LoudnessNormalization?) throws -> SoundID {
        let decoder = AudioDecoder(format: library.configuration.format, limits: library.configuration.limits)
        var cue = try decoder.decode(file: file, raw: raw, name: name)
        if let normalize { cue = try normalize.apply(to: cue, subject: name) }
        return try withExtendedLifetime(cue) {
            try library.load(buffer: Array(cue.samples), sampleRate: cue.format.sampleRate, channels: cue.format.channels, name: name)
        }
    }
}
