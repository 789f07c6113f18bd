import FoundationEssentials
import SFXSystem
import Glibc
import SFX
import SFXMedia

enum InfoCommand: Subcommand {
    static let spec = CommandSpec(
        name: "info", abstract: "Show a sound file's format, rate, channels, duration, MIME type, loudness and true peak.",
        discussion: """
        The MIME type and extension follow the content, not the file's name: an Ogg Opus file is audio/ogg .opus. \
        Loudness is EBU R128 (libebur128): integrated LUFS from 400 ms up, the loudest 400 ms window below; \
        the true peak is in dBTP.
        """,
        examples: ["sfx info bell", "sfx info recording.opus --json", "sfx render bell -o - | sfx info -"],
        positionals: [PositionalSpec(name: "NAME|FILE", help: "System sound names, sound files, or - for standard input (see `sfx play --help`).", min: 0, max: nil)],
        options: [SoundArgument.idOption, SoundArgument.fileOption, CommonOptions.json])

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let library = try SoundLibrary()
        var infos: [InfoRow] = []
        var failed = false
        for sound in try SoundArgument.all(in: arguments) {
            do {
                let url = try sound.file(in: library)
                infos.append(InfoRow(info: try AudioFileInfo(file: url), loudness: try Loudness(file: url)))
            } catch {
                printError(StandardInputAudio.named(String(describing: error)))
                failed = true
            }
        }
        if arguments.flag(CommonOptions.json) {
            try printJSON(infos)
        } else {
            for row in infos {
                let info = row.info
                let frames = info.frames.map { "\($0) frames" } ?? "? frames"
                let duration = info.duration.map(seconds) ?? "? s"
                print("\(StandardInputAudio.named(info.path)): \(info.mimeType)  .\(info.fileExtension)  \(info.container) \(info.encoding)  "
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
        return String(cFormat: "%.1f LUFS", lufs) + method + String(cFormat: "  %.1f dBTP", loudness.truePeak ?? -.infinity)
    }
}
