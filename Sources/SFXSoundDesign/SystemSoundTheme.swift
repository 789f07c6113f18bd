/// The `index.theme` text of the sfx sound theme, in the freedesktop Sound Theme format.
///
/// Besides the standard `[Sound Theme]` group, the group `[X-SFX Sounds]` lists every sound
/// as `name=id;description`; the engine reads it for ids and descriptions. The group
/// `[X-SFX Loudness Classes]` gives the loudness class of every event, as `name=class`: the
/// bundled sounds, then the freedesktop events the theme inherits (for `sfx list`).
public enum ThemeIndex {
    public static let loudnessGroup = "X-SFX Loudness Classes"

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
        let bundled = Set(sounds.map(\.name))
        let inherited = FreedesktopLevels.all.compactMap { level in
            level.loudnessClass.flatMap { bundled.contains(level.name) ? nil : (level.name, $0) }
        }
        return header + sounds.map { "\($0.name)=\($0.id);\($0.description)\n" }.joined()
            + "\n[\(loudnessGroup)]\n"
            + (sounds.map { ($0.name, $0.loudnessClass) } + inherited).map { "\($0)=\($1.title)\n" }.joined()
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

    /// The README that documents the theme: how it is made, its loudness classes, a table of
    /// the sounds, and the freedesktop theme's levels beside them.
    public var readme: String {
        let soundFolder = "\(SystemSoundTheme.name)/\(SystemSoundTheme.directory)"
        return """
            # sfx system sounds

            sfx's own sound theme, in the freedesktop Sound Theme layout (`\(SystemSoundTheme.name)/index.theme`,
            `\(soundFolder)/<name>.wav`). Every sound is synthesised by `sfx-make-sounds` from
            the code in `Sources/SFXSoundDesign` — no recordings or samples — as 48 kHz mono 16-bit WAV,
            at the loudness of its class, with TPDF dither from a fixed seed (the sound's id), so
            regenerating gives byte-identical files. Ids never change once assigned; new sounds are appended.

            Regenerate (the tests fail until the committed files match the code):

            ```
            swift run sfx-make-sounds [Sounds]
            ```

            ## Loudness

            Each sound belongs to a loudness class, and every sound of a class is mastered to the class's
            target loudness (EBU R128, LUFS), with its true peak at or under −1 dBTP. The targets were set
            against the levels of the installed freedesktop theme, which this theme inherits, so that a sound
            sfx does not bundle plays at about the level of the sfx sounds around it.

            Loudness is measured with libebur128 (`SFXMedia.Loudness`, what `sfx info` shows): the
            integrated loudness (BS.1770-4 gating) for sounds of 400 ms or more; for shorter sounds, which
            hold no whole 400 ms gating block, the loudest momentary (400 ms) window, windows ending every
            10 ms with silence before and after the sound, i.e. the click's energy over 400 ms. A mono
            file counts on both speakers, as sfx plays it. Synthesis does not use libebur128: each sound
            has a constant sample peak (`peak:` in `SystemSoundCatalog`) chosen once from the measurement,
            and `SystemSoundLoudnessTests` measures every generated file and fails when a sound is more than
            1 LU from its target or its true peak is over −1 dBTP.

            | class | target | why | freedesktop sounds of the class (LUFS) |
            | --- | ---: | --- | --- |
            \(classRows)
            ## Sounds

            `measured` is libebur128's figure for the committed file; `freedesktop` is the installed
            freedesktop theme's sound of the same name, when it has one.

            | id | name | description | duration | class | target | measured | true peak | freedesktop |
            | --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: |
            \(soundRows)
            ## The freedesktop theme

            The installed freedesktop theme (sound-theme-freedesktop 0.8, `\(FreedesktopLevels.directory)`),
            measured the same way; `FreedesktopLevelsTests` checks these figures against the installed files.
            Sounds that sfx does not bundle are inherited from it and play at these levels. The speaker-test
            voices and in-call tones are not events and have no class.

            | name | class | duration | loudness | true peak | sfx's sound |
            | --- | --- | --- | ---: | ---: | ---: |
            \(freedesktopRows)
            """
    }

    /// A level to the tenth, with a real minus sign: −23.9.
    static func lufs(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return (tenths < 0 ? "−" : "") + "\(abs(tenths) / 10).\(abs(tenths) % 10)"
    }

    private var classRows: String {
        LoudnessClass.allCases.map { loudnessClass in
            let levels = FreedesktopLevels.all.filter { $0.loudnessClass == loudnessClass }
            let listed = levels.sorted { $0.lufs > $1.lufs }.map { "\($0.name) \(Self.lufs($0.lufs))" }.joined(separator: ", ")
            return "| \(loudnessClass.title) | \(Self.lufs(loudnessClass.target)) | \(loudnessClass.reason) | \(listed) |\n"
        }.joined()
    }

    private var soundRows: String {
        sounds.map { sound in
            let spec = sound.spec
            let freedesktop = FreedesktopLevels.level(named: spec.name).map { Self.lufs($0.lufs) } ?? "—"
            return "| \(spec.id) | \(spec.name) | \(spec.description) | \(Int((sound.duration * 1000).rounded())) ms "
                + "| \(spec.loudnessClass.title) | \(Self.lufs(spec.loudnessClass.target)) | \(Self.lufs(spec.measured.lufs)) "
                + "| \(Self.lufs(spec.measured.truePeak)) | \(freedesktop) |\n"
        }.joined()
    }

    private var freedesktopRows: String {
        FreedesktopLevels.all.map { level in
            let sfx = sounds.first { $0.spec.name == level.name }.map { Self.lufs($0.spec.measured.lufs) } ?? "—"
            return "| \(level.name) | \(level.loudnessClass?.title ?? "—") | \(Int((level.seconds * 1000).rounded())) ms "
                + "| \(Self.lufs(level.lufs)) | \(Self.lufs(level.truePeak)) | \(sfx) |\n"
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
