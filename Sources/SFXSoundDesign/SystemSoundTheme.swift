/// The `index.theme` text of the sfx sound theme, in the freedesktop Sound Theme format.
///
/// Besides the standard `[Sound Theme]` group, the group `[X-SFX Sounds]` lists every sound
/// as `name=id;description`; the engine reads it for ids and descriptions.
public enum ThemeIndex {
    public static func text(for sounds: [SystemSoundSpec]) -> String {
        let header = """
            [Sound Theme]
            Name=\(SystemSoundTheme.name)
            Comment=sfx's own system sounds, synthesised by sfx-make-sounds
            Inherits=freedesktop
            Directories=\(SystemSoundTheme.directory)

            [\(SystemSoundTheme.directory)]
            OutputProfile=stereo

            [X-SFX Sounds]

            """
        return header + sounds.map { "\($0.name)=\($0.id);\($0.description)\n" }.joined()
    }
}

/// A file of the theme: its path relative to the output folder, and its contents.
public struct ThemeFile: Sendable, Hashable {
    public let path: String
    public let bytes: [UInt8]
}

/// The whole bundled theme, rendered in memory: every sound's samples and WAV bytes, the
/// index, and a README — exactly what `sfx-make-sounds` writes and the repository commits.
///
/// Layout under the output folder (`Sounds/` in the repository):
/// ```
/// README.md
/// sfx/index.theme
/// sfx/stereo/<name>.wav        48 kHz mono 16-bit, dithered with the sound's id as seed
/// ```
public struct SystemSoundTheme: Sendable {
    public static let name = "sfx"
    /// The theme's one sound directory, named after its freedesktop output profile.
    public static let directory = "stereo"

    /// One rendered sound.
    public struct Sound: Sendable {
        public let spec: SystemSoundSpec
        /// The mastered samples, before dither.
        public let samples: [Float]
        /// The WAV file's bytes.
        public let wav: [UInt8]
        /// The WAV file's path relative to the output folder.
        public var path: String { "\(SystemSoundTheme.name)/\(SystemSoundTheme.directory)/\(spec.name).wav" }
        public var duration: Double { Double(samples.count) / Double(SystemSoundCatalog.sampleRate) }
    }

    public let sounds: [Sound]

    /// Renders and encodes `specs` (by default, the whole catalog).
    public init(_ specs: [SystemSoundSpec] = SystemSoundCatalog.all) {
        sounds = specs.map { spec in
            let samples = spec.render()
            let wav = WAVEncoder16.encode(samples: samples, sampleRate: SystemSoundCatalog.sampleRate, seed: UInt64(spec.id))
            return Sound(spec: spec, samples: samples, wav: wav)
        }
    }

    /// The `index.theme` text.
    public var index: String { ThemeIndex.text(for: sounds.map(\.spec)) }

    /// The README that documents the theme: a table of the sounds and how to regenerate them.
    public var readme: String {
        let soundFolder = "\(SystemSoundTheme.name)/\(SystemSoundTheme.directory)"
        let header = """
            # sfx system sounds

            sfx's own sound theme, in the freedesktop Sound Theme layout (`\(SystemSoundTheme.name)/index.theme`,
            `\(soundFolder)/<name>.wav`). Every sound is synthesised by `sfx-make-sounds` from
            the code in `Sources/SFXSoundDesign` — no recordings or samples — as 48 kHz mono 16-bit WAV,
            peak-normalised to −1 dBFS, with TPDF dither from a fixed seed (the sound's id), so
            regenerating gives byte-identical files. Ids never change once assigned; new sounds are appended.

            Regenerate (the tests fail until the committed files match the code):

            ```
            swift run sfx-make-sounds [Sounds]
            ```

            | id | name | description | duration |
            | --- | --- | --- | --- |

            """
        return header + sounds.map {
            "| \($0.spec.id) | \($0.spec.name) | \($0.spec.description) | \(Int(($0.duration * 1000).rounded())) ms |\n"
        }.joined()
    }

    /// Every file of the theme, README first, then the index, then the sounds in id order.
    public var files: [ThemeFile] {
        [
            ThemeFile(path: "README.md", bytes: Array(readme.utf8)),
            ThemeFile(path: "\(SystemSoundTheme.name)/index.theme", bytes: Array(index.utf8)),
        ] + sounds.map { ThemeFile(path: $0.path, bytes: $0.wav) }
    }
}
