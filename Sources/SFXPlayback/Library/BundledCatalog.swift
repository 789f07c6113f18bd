import FoundationEssentials
import Glibc
import SFXMedia
import SFXCore
import SFXSoundDesign

/// The ids and one-line descriptions of sfx's bundled sounds, read from the `[X-SFX Sounds]`
/// group of the bundled theme's index (`name=id;description`).
struct BundledCatalog: Sendable {
    struct Entry: Sendable {
        let id: UInt32
        let description: String
    }

    static let group = "X-SFX Sounds"
    let entries: [String: Entry]
    /// Each event's loudness class, from the `[X-SFX Loudness Classes]` group (`name=class`).
    let loudnessClasses: [String: String]

    /// Reads `<directory>/sfx/index.theme`; a missing or unreadable index gives an empty catalog
    /// (the theme lookup then reports the sounds as missing, with the fix).
    init(directory: String) {
        let index = URL(filePath: directory).appending(path: "sfx/index.theme")
        self.init(index: try? IniFile(contentsOf: index))
    }

    /// Reads the index of the theme synthesised in memory.
    init(builtIn: BuiltInTheme) {
        self.init(index: builtIn.directory.indexes[SystemSoundTheme.name].map(IniFile.init(parsing:)))
    }

    private init(index: IniFile?) {
        loudnessClasses = Dictionary(index?.group("X-SFX Loudness Classes")?.entries.map { ($0.key, $0.value) } ?? [],
                                     uniquingKeysWith: { $1 })
        guard let group = index?.group(Self.group) else {
            entries = [:]
            return
        }
        var entries: [String: Entry] = [:]
        for (name, value) in group.entries {
            let parts = value.split(separator: ";", maxSplits: 1)
            guard let id = parts.first.flatMap({ UInt32($0) }) else { continue }
            entries[name] = Entry(id: id, description: parts.count > 1 ? String(parts[1]) : "")
        }
        self.entries = entries
    }
}

/// sfx's bundled `sfx` theme held in memory, for a program that finds no Sounds/ directory (a
/// game binary copied away from its build): the index and the file names cost nothing, and
/// each sound is synthesised by `SFXSoundDesign` only when it is first loaded, into exactly
/// the samples decoding its file in Sounds/ gives (`sfx-make-sounds` writes the same bytes).
///
/// Installed themes, the user's and `$SFX_SOUNDS_DIR` still come first: this is the last base
/// directory the theme lookup searches, where the Sounds/ directory would otherwise be.
struct BuiltInTheme: Sendable {
    let directory: InMemorySoundDirectory
    private let specs: [String: SystemSoundSpec]

    init() {
        var specs: [String: SystemSoundSpec] = [:]
        for spec in SystemSoundCatalog.all { specs[Self.file(of: spec)] = spec }
        self.specs = specs
        directory = InMemorySoundDirectory(indexes: [SystemSoundTheme.name: ThemeIndex.text(for: SystemSoundCatalog.all)],
                                           files: Set(specs.keys))
    }

    /// The file `spec` would be in Sounds/, relative to it: `sfx/stereo/tock.wav`.
    static func file(of spec: SystemSoundSpec) -> String {
        "\(SystemSoundTheme.name)/\(SystemSoundTheme.directory)/\(spec.name).wav"
    }

    /// The sound at `path` (a path the theme lookup returned) as a cue, synthesised now; nil
    /// when the path is not in memory.
    func cue(at path: String, name: String, decoder: AudioDecoder) throws -> Cue? {
        guard let relative = directory.relativePath(path), let spec = specs[relative] else { return nil }
        let wav = SystemSoundTheme([spec]).sounds[0].wav
        let (samples, sampleRate, channels) = try Self.pcm16(wav, subject: path)
        return try decoder.cue(interleaved: samples, sampleRate: sampleRate, channels: channels, name: name)
    }

    /// The samples of a canonical 16-bit PCM WAV (`WAVEncoder16`'s 44-byte header), each
    /// value / 32768, as libsndfile reads such a file into floats.
    static func pcm16(_ wav: [UInt8], subject: String) throws -> (samples: [Float], sampleRate: Int, channels: Int) {
        func field(_ offset: Int, _ size: Int) -> Int {
            (0..<size).reduce(0) { $0 | Int(wav[offset + $1]) << (8 * $1) }
        }
        let header = WAVEncoder16.headerSize
        guard wav.count >= header, Array(wav[0..<4]) == Array("RIFF".utf8), Array(wav[36..<40]) == Array("data".utf8),
              field(20, 2) == 1, field(34, 2) == 16, field(22, 2) > 0 else {
            throw MediaError(.failed(detail: "the synthesised sound is not 16-bit PCM WAV; set \(SoundBundle.environmentKey) to a Sounds directory made by sfx-make-sounds"),
                             subject: subject)
        }
        let count = min(field(40, 4), wav.count - header) / 2
        let samples = (0..<count).map { i in
            Float(Int16(bitPattern: UInt16(wav[header + 2 * i]) | UInt16(wav[header + 2 * i + 1]) << 8)) / 32768
        }
        return (samples, field(24, 4), field(22, 2))
    }
}
