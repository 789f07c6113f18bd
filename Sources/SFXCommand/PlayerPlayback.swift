import FoundationEssentials
import Glibc
import Synchronization
import SFX
import SFXMedia

/// `sfx play LONGFILE|URL`: the engine's `Player` instead of a cue, with a progress line and
/// keys on a terminal (space pauses, ←/→ seek 5 s, q quits).
///
/// Which sounds go to the player: an http(s) URL, or a single file whose length is over the cue
/// limit (30 s) or unknown, or any single file with `--start`. Everything else is loaded as cues,
/// as before. `--loop-start`/`--loop-end` stream a file looping between those points (a file's
/// LOOPSTART/LOOPLENGTH tags are honoured with `--loops`), and `--playlist` plays the files one
/// after another without a gap.
enum PlayerPlayback {
    static let start = NumberOption(spec: .option("start", value: "SECONDS", help: "Start this far into a file (plays it streamed)."), range: 0...1e9)
    /// `--rate` is already the device's sample rate (aplay's -r): the playback rate is `--speed`.
    static let rate = NumberOption(spec: .option("speed", value: "R", help: "Playback rate, speed and pitch together (as SoundPool's setRate), 0.5 to 2 (default 1)."), limits: SettingLimits.rate)
    static let then = OptionSpec.option("then", value: "NAME", help: "A sound (system name or file) to play once the others end.")
    static let loopStart = NumberOption(spec: .option("loop-start", value: "SECONDS", help: "Loop from here (plays it streamed; loops until Ctrl-C unless --loops says)."), range: 0...1e9)
    static let loopEnd = NumberOption(spec: .option("loop-end", value: "SECONDS", help: "Loop up to here, then back to --loop-start (default: the end)."), range: 0...1e9)
    static let playlist = OptionSpec.flag("playlist", help: "Play the files one after another, gaplessly (--loops makes the list repeat).")
    static let specs = [start.spec, rate.spec, then, loopStart.spec, loopEnd.spec, playlist]

    /// The seek step of the arrow keys.
    static let seekStep = 5.0

    enum Source {
        case url(URL)
        case file(RawFilePath)
        case playlist([RawFilePath])
    }

    /// The sound to stream, when the arguments name one (see the type's documentation).
    static func streamed(_ arguments: ParsedArguments) throws -> Source? {
        let plain = arguments.ordered.filter { $0.option == nil }.map(\.value)
        if let address = plain.first(where: { $0.hasPrefix("http://") || $0.hasPrefix("https://") }) {
            guard arguments.ordered.count(where: { $0.option == nil || $0.option == "id" || $0.option == "file" }) == 1,
                  let url = URL(string: address) else {
                throw UsageError(message: "a URL plays alone: give one URL and no other sound", command: arguments.spec)
            }
            return .url(url)
        }
        let sounds = try SoundArgument.all(in: arguments)
        if arguments.flag(playlist) {
            let files = sounds.compactMap { sound -> RawFilePath? in if case .file(let path) = sound { path } else { nil } }
            guard !files.isEmpty, files.count == sounds.count else {
                throw UsageError(message: "--playlist plays sound files: give one or more files and no system sound names or -", command: arguments.spec)
            }
            guard try start.read(arguments) == nil, try loopStart.read(arguments) == nil, try loopEnd.read(arguments) == nil else {
                throw UsageError(message: "--playlist plays each file whole: drop --start, --loop-start and --loop-end", command: arguments.spec)
            }
            return .playlist(files)
        }
        let looped = try loopStart.read(arguments) != nil || loopEnd.read(arguments) != nil
        guard sounds.count == 1, case .file(let path) = sounds[0] else {
            if try start.read(arguments) != nil {
                throw UsageError(message: "--start needs one sound file", command: arguments.spec)
            }
            if looped { throw UsageError(message: "--loop-start and --loop-end need one sound file", command: arguments.spec) }
            return nil
        }
        if try start.read(arguments) != nil || looped { return .file(path) }
        // Looping a file tagged with loop points: streamed, so the tags' region loops.
        if (try PlayCommand.loops.read(arguments) ?? 0) != 0, LoopTags.region(of: path) != nil { return .file(path) }
        guard let info = try? AudioFileInfo(file: path) else { return nil }   // the cue path says what is wrong
        let limit = CueLimits.standard.maximumDuration
        return (info.duration ?? .infinity) > limit ? .file(path) : nil
    }

    static func run(_ source: Source, _ arguments: ParsedArguments) throws -> Int32 {
        if try WorldOptions.filter(arguments) != nil || WorldOptions.reverbPreset(arguments) != nil {
            throw UsageError(message: "--lowpass, --highpass, --bandpass and --reverb are for sounds held in memory; a streamed one (a URL, --start, a file over 30 s) plays without them: drop them", command: arguments.spec)
        }
        let position = try WorldOptions.position(arguments)
        let volume = try Volume.factor(arguments) ?? 1
        let pan = Float(try CommonOptions.pan.read(arguments) ?? 0)
        let region = (try loopStart.read(arguments), try loopEnd.read(arguments))
        let loops = try PlayCommand.loops.read(arguments) ?? (region.0 != nil || region.1 != nil ? -1 : 0)
        let startAt = try start.read(arguments) ?? 0
        let speed = Float(try rate.read(arguments) ?? 1)
        let options = try OutputOptions(arguments)
        let settings = try CommandSettings.load(quiet: options.quiet)
        let session = try EngineSession(options, settings: settings, deferNotice: true,
                                        hrtf: arguments.flag(WorldOptions.hrtf) ? .default : .off)
        let engine = session.engine
        var player: Player
        var list: Playlist?
        let ending: SoundID?
        do {
            switch source {
            case .playlist(let files):
                let items = try Playlist(engine: engine, items: files.map { URL(filePath: $0.description) })
                items.repeats = loops != 0
                list = items
                player = try engine.makePlayer(contentsOf: items.items[0])   // replaced by the list's once it plays
            case .url(let url):
                player = try engine.makePlayer(url: url, stallTimeout: settings.httpTimeout ?? 15, limits: settings.downloadLimits)
            case .file(let path):
                player = try engine.makePlayer(contentsOf: URL(filePath: path.description))
                if region.0 != nil || region.1 != nil {
                    try player.setLoopRegion(seconds: (region.0 ?? 0)..<(region.1 ?? player.duration))
                }
            }
            ending = try arguments.value(then).map { try SoundArgument($0).load(into: engine.library) }
        } catch {
            session.finish(played: false)
            throw Failure(StandardInputAudio.named("\(error)"))
        }
        session.announce()
        let result = Mutex<Bool?>(nil)
        if let list {
            list.didFinish = { ok in result.withLock { $0 = ok } }
            try list.play()
            player = list.player ?? player
        } else {
            player.didFinish = { ok in result.withLock { $0 = ok } }
        }
        player.volume = volume
        player.pan = pan
        player.rate = speed
        if list == nil { player.numberOfLoops = loops }
        if let position { try player.setSource(SFX.Source(position: position)) }
        if startAt > 0 { try player.seek(to: startAt) }

        let interruptedPlayer = player
        let keys = TerminalKeys.open()
        defer { keys?.restore() }
        let interrupted = Interruption()
        interrupted.onInterrupt {
            keys?.restore()
            interruptedPlayer.stop()
        }
        if list == nil { try player.play() }
        let bar = !options.quiet && isatty(STDERR_FILENO) == 1 ? ProgressBar(width: ProgressBar.terminalWidth()) : nil
        var quit = false
        while !quit, !interrupted.happened, result.withLock({ $0 }) == nil {
            for key in keys?.poll() ?? [] {
                switch key {
                case .space: player.isPlaying ? player.pause() : player.resume()
                case .left: try? player.seek(to: max(0, player.currentTime - seekStep))
                case .right: try? player.seek(to: player.currentTime + seekStep)
                case .quit: quit = true
                }
            }
            bar?.draw(elapsed: player.currentTime, total: list == nil && player.isDurationKnown ? player.duration : nil, paused: !player.isPlaying,
                      downloaded: player.downloadProgress?.fraction)
            usleep(100_000)
        }
        keys?.restore()
        if let bar {
            bar.draw(elapsed: result.withLock({ $0 }) == true && player.isDurationKnown ? player.duration : player.currentTime,
                     total: list == nil && player.isDurationKnown ? player.duration : nil, paused: !player.isPlaying, downloaded: player.downloadProgress?.fraction)
            bar.finish()
        }
        if quit || interrupted.happened { player.stop() }
        let failed = result.withLock { $0 } == false && !quit && !interrupted.happened
        if failed {
            printError(player.error.map { "\($0)" } ?? "\(player.url.absoluteString): the play ended early")
        } else if !quit, !interrupted.happened, let ending {
            engine.play(ending)
        }
        session.finish()
        if interrupted.happened { return 130 }
        return failed ? 1 : 0
    }

    /// `--then` after cues: the sound to play once they end, loaded with them.
    static func ending(_ arguments: ParsedArguments, library: SoundLibrary) throws -> SoundID? {
        try arguments.value(then).map { try SoundArgument($0).load(into: library) }
    }
}
