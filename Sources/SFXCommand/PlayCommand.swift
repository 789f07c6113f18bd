import FoundationEssentials
import Glibc
import SFX
import SFXMedia

enum PlayCommand: Subcommand {
    static let spec = CommandSpec(
        name: "play", abstract: "Play sounds and exit when they are done.",
        discussion: """
        The sounds start together. A word with a / or an audio extension (.wav, .ogg, .oga, .flac, \
        .opus, .mp3, .aiff, …) is a file; - is standard input; any other word is a system sound \
        name (`sfx list`), even when a file of that name is in the current directory: write \
        ./bell to play that. -i and -f force either. Ctrl-C fades the sounds out and exits 130. \
        On a machine with no sound card, and no --device given, sfx plays through its virtual \
        card and says where the card's recording is. \
        An http(s) URL, or a file longer than 30 s (or with --start), is streamed as it plays \
        (decoded ahead, never loaded whole): on a terminal a progress line shows the time, and \
        space pauses, ←/→ seek 5 s, q quits. \
        Raw PCM (no header), on standard input or in files, plays with --format as aplay's -f \
        (S16_LE, S32_LE, FLOAT_LE, …), --rate and --channels; a .raw or .pcm file needs them. \
        --at X,Y,Z plays the sounds at a point of a game's world, heard from the origin facing -z \
        (x right, y up): panned by where they are, 1/distance beyond 1 unit, or through the HRTF \
        set with --hrtf; --lowpass, --highpass or --bandpass (with --q) filters them; --reverb sends \
        them to effect bus 0 running that reverb (the daemon's bus 0, through the daemon).
        """,
        examples: ["sfx play tock", "sfx play ./coin.ogg --volume -6dB", "sfx play bell --at 3,0,-1 --lowpass 2000", "sfx play -f bell -i bell", "sox -n -t wav - synth 0.2 sine 880 | sfx play -",
                   "sfx play take.raw --format S16_LE --rate 44100 -c 2",
                   "sfx play podcast.m4a --start 90 --speed 1.5", "sfx play https://example.com/message.mp3 --then bell"],
        positionals: [PositionalSpec(name: "NAME|FILE", help: "System sound names, sound files, or - for standard input.", min: 0, max: nil)],
        options: [SoundArgument.idOption, SoundArgument.fileOption, Volume.option, Volume.decibelOption,
                  CommonOptions.pan.spec, loops.spec, normalize, normalizeTo.spec] + WorldOptions.playSpecs + RawInput.specs + PlayerPlayback.specs
            + [BankPlayback.bank] + OutputOptions.specs + DaemonRoute.specs)

    static let loops = IntegerOption(spec: .option("loops", value: "N", help: "Extra repeats; -1 repeats until Ctrl-C (default 0)."), range: SettingLimits.textLoops)
    static let normalize = OptionSpec.flag("normalize", help: "Bring sound files to one loudness (-23 LUFS, true peak at most -1 dBTP) before playing.")
    static let normalizeTo = NumberOption(spec: .option("normalize-to", value: "LUFS", help: "Like --normalize, to this loudness (-70 to 0)."), range: -70...0)

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        if let bank = arguments.value(BankPlayback.bank) { return try BankPlayback.run(bank, arguments) }
        let position = try WorldOptions.position(arguments)
        let filter = try WorldOptions.filter(arguments)
        let reverb = try WorldOptions.reverbPreset(arguments)
        try WorldOptions.checkHRTF(arguments, positional: position != nil, option: WorldOptions.at.name)
        let raw = try RawInput.layout(arguments)
        if raw == nil, let streamed = try PlayerPlayback.streamed(arguments) { return try PlayerPlayback.run(streamed, arguments) }
        if raw != nil, arguments.positionals.contains(where: { $0.hasPrefix("http://") || $0.hasPrefix("https://") }) {
            throw UsageError(message: "--format reads raw PCM from - and files; a URL is played with the header it carries, without --format", command: spec)
        }
        if raw != nil, arguments.value(PlayerPlayback.start.spec) != nil {
            throw UsageError(message: "--start streams a sound file with a header; raw PCM (--format) is played whole, from its start", command: spec)
        }
        let sounds = try SoundArgument.all(in: arguments)
        try RawInput.check(sounds, raw: raw, spec: spec)
        let volume = try Volume.factor(arguments) ?? 1
        let pan = Float(try CommonOptions.pan.read(arguments) ?? 0)
        let loops = try Self.loops.read(arguments) ?? 0
        let normalize = try normalization(arguments)
        // The daemon reads sound files with headers: raw PCM is decoded here.
        if raw == nil, let status = try playThroughDaemon(arguments, sounds: sounds, volume: volume, pan: pan, loops: loops,
                                                          position: position, filter: filter, reverb: reverb?.name) { return status }
        let options = try OutputOptions(arguments)
        if options.verbose { print("sfx: in-process: \(DaemonRoute.inProcessReason)") }
        let settings = try CommandSettings.load(quiet: options.quiet)
        try SoundArgument.checkFilesExist(sounds)
        let session = try EngineSession(options, settings: settings, deferStart: true, plays: 3 * sounds.count + 2,   // + filters, sends, the reverb, the ending
                                        preload: sounds.compactMap(\.systemName), deferNotice: true,
                                        hrtf: arguments.flag(WorldOptions.hrtf) ? .default : .off)
        let ids = try sounds.map { try $0.load(into: session.engine.library, normalize: normalize, raw: raw) }
        let rate = Float(try PlayerPlayback.rate.read(arguments) ?? 1)
        let ending = try PlayerPlayback.ending(arguments, library: session.engine.library)
        session.announce()
        let interrupted = Interruption()
        interrupted.onInterrupt { try? session.engine.stopAll(fade: .milliseconds(30)) }
        if !interrupted.happened {
            if let reverb { try session.engine.setEffect(.reverb(reverb.settings), bus: WorldOptions.reverbBus) }
            var sends = SIMD4<Float>.zero
            if reverb != nil { sends[WorldOptions.reverbBus] = WorldOptions.reverbSend }
            for sound in ids {
                let voice = if let position {
                    session.engine.play(sound, from: Source(position: position), volume: volume, loops: loops, rate: rate, sends: sends)
                } else {
                    session.engine.play(sound, volume: volume, pan: pan, loops: loops, rate: rate)
                }
                if let filter { try voice.setFilter(filter) }
                if reverb != nil, position == nil { try voice.setSend(WorldOptions.reverbSend, bus: WorldOptions.reverbBus) }
            }
            // A signal that came while they were queued stopped what was queued before it.
            if interrupted.happened { try? session.engine.stopAll(fade: .milliseconds(30)) }
        }
        if let ending {
            while !session.engine.waitUntilIdle(timeout: .seconds(1)) {}
            if !interrupted.happened { session.engine.play(ending) }
        }
        session.finish(tail: reverb.map { WorldOptions.tail(of: $0.settings) } ?? 0, interrupted: interrupted)
        return interrupted.happened ? 130 : 0
    }

    /// `--normalize` or `--normalize-to LUFS`; nil when neither is given.
    static func normalization(_ arguments: ParsedArguments) throws -> LoudnessNormalization? {
        if let target = try normalizeTo.read(arguments) {
            return LoudnessNormalization(target: target)
        }
        return arguments.flag(normalize) ? .standard : nil
    }
}
