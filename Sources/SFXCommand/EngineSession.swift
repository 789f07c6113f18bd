import FoundationEssentials
import SFXSystem
import Glibc
import SFX
import SFXCardSupport
import SFXDevice
import SFXMedia

/// A sound engine for one command (`play`, `alert`): the output options, the user's settings,
/// a running sound server or sfx's virtual card on a machine with no sound card, and period
/// defaults that suit the kind of output.
struct EngineSession {
    let engine: SoundEngine
    let card: VirtualCard?
    let options: OutputOptions
    /// What the virtual card notice says ("no sound card here: playing through sfx's virtual
    /// card (…)"), when it was held back (`deferNotice`) for `announce` to print.
    let notice: String?

    /// `idleTimeout`: close the device after this much silence (the daemon; nil keeps it open).
    /// With `deferStart`, the stream starts once the sounds are queued (`finish`, or the engine's
    /// `start`), for a command that plays and exits; otherwise at once.
    /// `rewind`: rewind mode where the device allows it (the library's default).
    /// `plays`: with `deferStart`, how many sounds the command queues before the stream starts
    /// (its command queue is sized for them).
    /// `preload`: system sounds the command plays at once, decoded while the device opens.
    /// `deferNotice`: the virtual card's notice waits for `announce`, which a command calls once
    /// its sounds are loaded, so that an error (no such sound) is the only line printed.
    /// `cardDirectory`: the name of the virtual card's directory beside the user's card
    /// (`VirtualCardFallback.engage`), "card" unless told (the daemon has its own).
    /// `hrtf`: what renders positional voices (`--hrtf`: the default SOFA set).
    /// `whileNoDevice`: a command that plays and exits fails when the device cannot be opened
    /// (`.fail`, it says why); the daemon opens all the same and plays once the device opens.
    init(_ options: OutputOptions, settings: UserSettings, idleTimeout: Duration? = nil, deferStart: Bool = false,
         plays: Int = 1, preload: [String] = [], rewind: Bool = true, deferNotice: Bool = false,
         cardDirectory: String = "card", hrtf: HRTFChoice = .off, whileNoDevice: NoDevicePolicy = .fail) throws {
        self.options = options
        var configuration = SoundEngine.Configuration()
        settings.apply(to: &configuration)
        configuration.hrtf = hrtf
        configuration.whileNoDevice = whileNoDevice
        let output = try Self.output(device: options.device, settings: settings, cardDirectory: cardDirectory)
        configuration.output.device = output.device
        let route = output.route
        let fallback = output.fallback
        card = fallback?.card
        let notice = fallback.flatMap { options.quiet ? nil : "\($0.reason): playing through sfx's virtual card (\($0.card.shownDirectory.path))" }
        if let notice, !deferNotice { printError(notice) }
        self.notice = deferNotice ? notice : nil
        // The virtual card is a card, whatever "default" leads to on this machine.
        let kind = fallback == nil ? OutputKind(device: configuration.output.device) : .card
        if let rate = options.sampleRate { configuration.output.sampleRate = rate }
        if let frames = options.periodFrames ?? kind.periodFrames { configuration.output.periodFrames = frames }
        if let count = options.periodCount ?? kind.periodCount { configuration.output.periodCount = count }
        // A command that plays and exits starts the stream once its sounds are queued (`finish`),
        // so the first period written holds them: no buffer of silence first. --verbose reports
        // the thread's priority, so it starts at once there.
        configuration.deferredStart = deferStart && !options.verbose
        configuration.idleTimeout = idleTimeout
        configuration.preloadedSystemSounds = preload
        // Rewind mode starts plays sooner on a running stream; a play queued before the stream
        // starts gains nothing from it, and its set-up (the history of mixer states) would delay
        // the first period. So a deferred start takes the classic path.
        configuration.rewind = rewind && !configuration.deferredStart
        // Such a command queues a play per sound and little else: queues sized for that (the
        // events' still four times what a period can produce) save half a millisecond of set-up.
        if configuration.deferredStart {
            configuration.commandCapacity = max(256, 4 * plays)
            configuration.noticeCapacity = 0
            // And voices for its sounds, not a game's 64 + 32 virtual: the mixer's slots, their
            // filters and sends are made and cleared before the first period (0.4 ms for 112).
            configuration.maxVoices = max(8, plays)
            configuration.virtualVoices = max(8, plays)
            configuration.devices = PreloadingPlaybackDevices(base: configuration.devices)
        }
        do {
            engine = try SoundEngine(configuration: configuration)
        } catch let error as ALSAError {
            throw Failure("\(error)")
        }
        if options.verbose {
            let asked = configuration.output
            print("sfx: \(fallback == nil ? route : "sfx's virtual card") (\(kind)); asked for \(asked.device): "
                  + "\(asked.sampleRate) Hz, period \(asked.periodFrames) × \(asked.periodCount)")
            // The output thread asks for SCHED_FIFO as it starts: wait a moment for the answer.
            for _ in 0..<50 where engine.metrics.realtimeGranted == nil { usleep(2_000) }
            // Rewind mode is tried once the buffer is first full (21 ms): wait for the verdict too.
            for _ in 0..<100 where engine.metrics.rewind == .starting { usleep(2_000) }
            print("sfx: negotiated \(Self.setup(engine.metrics))")
        }
    }

    /// The output `play` and `alert` use, decided in this one place (`sfx mute status` reads
    /// the same one): the device given (`--device`, else the settings file's, else `default`);
    /// with neither given, on a machine with no sound card, a running sound server's PCM, else
    /// sfx's virtual card (made current; its last recording cleared unless `keepRecordings`).
    static func output(device option: String?, settings: UserSettings, keepRecordings: Bool = false,
                       cardDirectory: String = "card") throws
        -> (device: String, route: String, fallback: (card: VirtualCard, reason: String)?) {
        let deviceGiven = option != nil || settings.device != nil
        var device = option ?? settings.device ?? SoundEngine.Configuration().output.device
        var route = "the configured device"
        // The server is looked for once (a socket connection); the virtual card only without one.
        let server = ServerOutput.choice(deviceGiven: deviceGiven)
        if let server {
            device = server.pcm
            route = "no sound card here: the \(server.server.rawValue) server"
        }
        let fallback = try VirtualCardFallback.engage(deviceGiven: deviceGiven, serverChosen: server != nil,
                                                      keepRecordings: keepRecordings, directoryName: cardDirectory)
        if let fallback {
            device = fallback.card.pcmName
            route = "\(fallback.reason): sfx's virtual card"
        }
        return (device, route, fallback)
    }

    /// The negotiated setup in one line: format, rate, period and buffer, latency, priority, and
    /// whether plays start by rewinding (rewind mode) or on the classic path.
    static func setup(_ metrics: SoundEngine.Metrics) -> String {
        let p = metrics.parameters
        let periods = p.periodFrames > 0 ? Double(p.bufferFrames) / Double(p.periodFrames) : 0
        let count = periods == periods.rounded() ? String(Int(periods)) : String(cFormat: "%.2f", periods)
        let latency = String(cFormat: "%.2f ms", Double(metrics.latencyEstimate.components.attoseconds) / 1e15
                             + Double(metrics.latencyEstimate.components.seconds) * 1000)
        let priority = metrics.realtimeGranted.map { $0 ? "SCHED_FIFO" : "normal priority (SCHED_FIFO refused)" } ?? "starting"
        return "\(p.device): \(p.format.rawValue) \(p.sampleRate) Hz \(p.channels) ch, period \(p.periodFrames) × \(count) "
            + "= buffer \(p.bufferFrames) frames, latency ≤ \(latency), \(priority), \(metrics.rewind)"
            + (metrics.pointerGranularity > 0 ? ", pointer granularity \(metrics.pointerGranularity) frames" : "")
            + (metrics.delayFollowsDAC ? ", delay to the frame" : "")
            + (metrics.outputLatency.map { String(cFormat: ", output latency %.2f ms", $0.seconds * 1000) } ?? "")
    }

    /// Prints the notice held back by `deferNotice`, once the command's sounds are loaded.
    func announce() {
        if let notice { printError(notice) }
    }

    /// Waits for every sound to end, closes the engine, and says where the virtual card's
    /// recording is when something was played (and not --quiet).
    /// `tail`: seconds an effect bus sounds on after the voices end (a reverb's decay), which
    /// `waitUntilIdle` does not count; waited for too, unless `interrupted` fires meanwhile.
    func finish(played: Bool = true, tail: Double = 0, interrupted: Interruption? = nil) {
        engine.start()
        while !engine.waitUntilIdle(timeout: .seconds(1)) {}
        var left = tail
        while left > 0, interrupted?.happened != true {
            usleep(UInt32(min(left, 0.05) * 1_000_000))
            left -= 0.05
        }
        let metrics = engine.metrics
        engine.close()
        if options.verbose {
            print("sfx: \(metrics.xruns) xruns (\(metrics.startupXruns) within 200 ms of opening the device)")
        }
        if played, !options.quiet, let card, let recording = card.recordingURLs().last {
            print("the virtual card recorded what it played to \(card.shownPath(of: recording))")
        }
    }
}

/// Opens the device as the engine asks, then has libsndfile loaded on a second thread while the
/// engine makes its mixer and queues: the sounds are decoded after that, and find it loaded
/// (about 0.7 ms off a one-shot command's path). Loading it before the open instead held the
/// dynamic loader's lock while alsa-lib loaded the device's plugin.
struct PreloadingPlaybackDevices: PlaybackDeviceFactory {
    let base: any PlaybackDeviceFactory

    func open(_ request: PlaybackRequest) throws(ALSAError) -> any PlaybackDevice {
        let device = try base.open(request)
        MediaLibraries.preload()
        return device
    }
}
