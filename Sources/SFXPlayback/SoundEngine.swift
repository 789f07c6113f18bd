import FoundationEssentials
import SFXSystem
import Dispatch
import Glibc
import Synchronization
import SFXCore
import SFXDevice
import SFXMedia
import SFXHaptics

/// sfx's public face: load short sounds once, play them from any thread, hear them in the next
/// period the device takes.
///
/// ```swift
/// let engine = try SoundEngine()                          // ALSA "default", 48 kHz, 128-frame periods × 3
/// let tock = try engine.systemSound(named: "tock")        // a system sound: never disposed
/// let coin = try engine.load(contentsOf: URL(filePath: "coin.ogg"))  // a custom sound
/// engine.play(tock)                                       // fire and forget
/// let voice = engine.play(coin, volume: 0.8, pan: -0.3, group: .ui) { outcome in
///     print(outcome)                                      // .finished, .stopped, .stolen, .rejected
/// }
/// voice.stop(fade: .milliseconds(20))
/// try engine.dispose(coin)
/// ```
///
/// `play` returns at once: it looks the sound up, registers the play and puts one command on a
/// queue that the real-time thread takes without locking before each period it renders
/// (callers take turns on short locks held only by other callers, never by the real-time
/// thread; no I/O, no waiting for the device) (up to two per frame of the period, 256 at the default
/// 128 frames; the rest wait for the next period, in order), so a sound starts in the very next
/// period written and reaches the DAC after no more than what the device buffer already holds.
/// The engine survives xruns (recovers and counts them) and a device that goes away (it keeps
/// mixing by the clock and reopens the device when it returns).
///
/// ## Completions, events and slow handlers
/// Completions run one at a time, in the order the plays ended, on a serial queue of the
/// engine's (`sfx-completions`), every time: a play rejected before it started (a number out of
/// range, an unknown sound, a closed engine, a muted alert) completes there too, never on the
/// caller's thread. `events` and `onEvent` run on another serial queue. `await voice.outcome`
/// gives the same outcome to async code. Calling any engine method from them is safe
/// (`close()` from one does not wait for that handler). A thread of the engine's moves what the
/// real-time thread reports into those queues as it comes, whatever the handlers do, so a slow or
/// blocking handler costs only this: the completions (or events) after it wait for it, held in
/// memory (about 100 bytes each, `metrics.undeliveredEvents` counts them, and
/// `.deliveryBehind` reports when 1,024, 2,048, 4,096… are waiting); sounds keep starting and
/// ending on time, and no completion is lost. Completion handlers do not delay engine events,
/// nor the reverse. Should the engine's own thread fall behind, the real-time thread holds back
/// commands (`metrics.heldCommandPeriods`) rather than drop a completion.
///
/// ## Numbers
/// Every number the engine takes is checked: `init` throws a `SettingError` for a configuration
/// out of range, the setters and fades throw one, and `play` completes with `.rejected` naming
/// the setting. None of them traps.
public final class SoundEngine: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// The requested device, rate, channels, period and buffer; `parameters` says what was granted.
        public var output = PlaybackRequest()
        /// Opens `output` at start and reopens it after it was lost or closed while idle: ALSA,
        /// or the null device for `output.device` "null" (`SystemPlaybackDevices`). Give your own
        /// `PlaybackDeviceFactory` to play somewhere else, or to test with a device of your own.
        public var devices: any PlaybackDeviceFactory = SystemPlaybackDevices()
        /// What the engine does when `output` cannot be opened at start (absent, busy, behind a
        /// sound server that is not up yet) and while it is lost later: `.mix` (the default)
        /// opens all the same and mixes by the clock, so plays run and complete unheard; `.queue`
        /// holds plays until the device opens; `.fail` makes `init` throw. Either way but
        /// `.fail`, `deviceUnavailable` is reported once and the device is tried again every
        /// second at most.
        public var whileNoDevice = NoDevicePolicy.mix
        /// Where sound cards are listed (/proc/asound): a card named by its index (`hw:1,0`) is
        /// followed by its id (`hw:CARD=Speaker,DEV=0`), read from there at start. Tests give
        /// a tree of their own.
        package var asoundRoot = "/proc/asound"
        /// What the hot-plug watcher reads while there is no device: the kernel's events through
        /// libudev (nil), or a test's synthetic ones.
        package var cardEvents: (@Sendable () throws(CardWatcherError) -> any CardEventSource)?
        /// Voices that may sound at once, 1…4096; beyond, the lowest priority and then the
        /// oldest is stolen (positional voices too quiet to hear are virtual and not counted).
        public var maxVoices = 64
        /// Positional voices that may be virtual at once (too quiet to hear: not mixed, but
        /// keeping their place in time), 0…4096.
        public var virtualVoices = 32
        /// The SCHED_FIFO priority asked for the real-time thread, 1…99.
        public var realtimePriority: Int32 = 70
        /// Close the device after this long without sound, 1 ms…24 h (nil keeps it open).
        public var idleTimeout: Duration?
        /// Where system sounds come from, the cue length limit, and so on.
        public var library = SoundLibrary.Configuration()
        /// System sounds decoded while the device opens (on a second thread), so that
        /// `systemSound(named:)` finds them loaded: for a program that plays a known sound as
        /// soon as it starts. They are decoded at `output`'s rate and channels; when the device
        /// grants others, they are decoded when first asked for instead. A name the theme lacks
        /// is reported by `systemSound(named:)`, as without this.
        public var preloadedSystemSounds: [String] = []
        /// When `alert` vibrates (the older setting): `alertPolicy`, when set, wins over it.
        public var alertVibration = AlertVibration.whenMuted
        /// Which channels an alert uses (sound, vibration, flash, caption) and the
        /// do-not-disturb window; nil: `AlertPolicy(vibration: alertVibration)`.
        public var alertPolicy: AlertPolicy?
        /// The alert's visual channel (an LED, a command, a callback); nil: no flash.
        public var flashBackend: (any FlashBackend)?
        /// How an alert flashes.
        public var flashPattern = FlashPattern.default
        /// Receives a notice for every alert, on the engine's delivery thread; the same as
        /// setting `onAlert` later.
        public var onAlert: (@Sendable (AlertNotice) -> Void)?
        /// sfx's own mute switch, shared with the `sfx` command and the daemon.
        public var muteFlag = MuteFlag.user()
        /// Where to look for vibration hardware and which optional backends to offer.
        public var haptics = HapticConfiguration()
        /// The haptic backend to use; nil takes the first available (evdev, GPIO, sysfs, command, callback).
        public var hapticBackend: HapticBackendKind?
        /// Receives engine events from the start (a refused SCHED_FIFO is reported as the output
        /// thread starts); the same as setting `onEvent` later.
        public var onEvent: (@Sendable (EngineEvent) -> Void)?
        /// Locks the whole process's memory, present and future, into RAM (`mlockall`), so that
        /// the real-time thread never waits for a page to come back from swap or a file. Off by
        /// default: it is a decision for the whole program (every later allocation is locked
        /// too, and counts against RLIMIT_MEMLOCK), which a library should not take alone. When
        /// refused, the engine plays all the same and reports `.memoryLockRefused`.
        public var lockMemory = false
        /// Rewind mode (on by default): the device runs with a buffer of 20 ms or more, and a
        /// play, stop or change wakes the output thread at once, which rewinds the device to
        /// 1 ms ahead of its DAC and writes again from there with the change in it, so a sound
        /// starts about a millisecond after `play` while the deep buffer rides out late
        /// wake-ups. A device that cannot rewind (or pretends to) is reopened with `output` as
        /// it is, on the classic path; `metrics.rewind` says which. Off: `output` is used as
        /// given and a play starts behind what the buffer holds.
        public var rewind = true
        /// Binaural rendering of positional voices for headphones: `.off` (the default: they
        /// are panned, equal power), `.default` (the SOFA set libmysofa1 installs,
        /// /usr/share/libmysofa/default.sofa) or `.sofa(url)`. Stereo output only;
        /// `metrics.hrtf` says what the engine does. A file that cannot be read fails `init`.
        public var hrtf = HRTFChoice.off

        /// Opens the device but leaves the output thread to `start()`, so that sounds loaded and
        /// played before it are in the very first period written (a command that plays one sound
        /// and exits: no buffer of silence ahead of it). Off: the thread starts at once.
        public var deferredStart = false

        /// The queues between the threads, zeroed up front so the real-time thread never takes a
        /// page fault on them: commands for the output thread (rounded up to a power of two;
        /// beyond, `play` and the like are refused as the queue is full) and what it reports
        /// (at least four times what one period can produce). 8,192 and 32,768 take about
        /// 0.5 ms to set up, which a command that plays a sound or two and exits can spare.
        public var commandCapacity = 8192
        public var noticeCapacity = 32_768

        public init() {}

        /// What `maxVoices` may be.
        public static let voiceLimits = 1...4096
        /// What `realtimePriority` may be: SCHED_FIFO's range.
        public static let realtimePriorities = 1...99
        /// What `idleTimeout` may be when it is not nil.
        public static let idleTimeouts = Duration.milliseconds(1)...Duration.seconds(86_400)

        /// The format the library's sounds are decoded at until the device says what it granted.
        var requestedFormat: AudioFormat {
            output.sampleRate > 0 && (1...2).contains(output.channels)
                ? AudioFormat(sampleRate: output.sampleRate, channels: output.channels) : .standard
        }

        /// Throws for the first number out of its range (the device's numbers in `output` first).
        public func validate() throws(SettingError) {
            if let bad = output.invalidSetting {
                throw SettingError(setting: "output.\(bad.setting)", value: bad.value, allowed: bad.allowed)
            }
            try SettingError.check("maxVoices", maxVoices, in: Self.voiceLimits)
            try SettingError.check("virtualVoices", virtualVoices, in: 0...Self.voiceLimits.upperBound)
            try SettingError.check("realtimePriority", Int(realtimePriority), in: Self.realtimePriorities)
            if case .queue(let limit) = whileNoDevice {
                try SettingError.check("whileNoDevice queue limit", limit, in: 1...max(1, commandCapacity / 2))
            }
            if let idleTimeout { try SettingError.check("idleTimeout", idleTimeout, in: Self.idleTimeouts) }
        }
    }

    /// What the engine runs with now.
    public struct Metrics: Sendable, CustomStringConvertible {
        /// What the device granted (format, rate, period, buffer).
        public var parameters: PlaybackParameters
        /// The longest a trigger waits before it reaches the DAC: one period until the next
        /// render, plus the buffer ahead of it; in rewind mode, the guard (1 ms) plus as much
        /// again for the wake-up and the re-render (trigger → DAC measured 1.0 ms p50, 1.1 ms p95
        /// on the virtual card).
        public var latencyEstimate: Duration
        public var xruns: Int
        /// Of `xruns`, those within 200 ms of the device's (re)opening, while a sound server's
        /// stream settles; the rest happened in steady playback.
        public var startupXruns: Int = 0
        public var activeVoices: Int
        /// Whether the real-time thread runs under SCHED_FIFO; nil before it first tried.
        public var realtimeGranted: Bool?
        public var deviceOpen: Bool
        /// The device failed and has not come back yet, or never opened (`whileNoDevice`).
        public var deviceLost: Bool
        /// Why there is no device now, in one line with the fix (what `deviceUnavailable` or
        /// `deviceLost` said); nil while the device plays.
        public var deviceProblem: String? = nil
        /// How long a frame written now takes to be heard: what sfx has queued plus what the
        /// device, or the sound server behind ALSA's pipewire or pulse plugin, holds after it
        /// (its graph, its sink, a Bluetooth codec), as `snd_pcm_delay` says, read every 50 ms
        /// while the device plays; nil while no device plays. In rewind mode a new sound starts
        /// ahead of what sfx queued, so it is heard the guard plus the device's or server's own
        /// part after `play`, not all of this.
        public var outputLatency: Duration? = nil
        public var framesRendered: Int
        /// The kernel's thread id of the real-time thread (see it with `chrt -p ID` or `top -H`).
        public var outputThreadID: Int32
        /// Completions and events handed over by the real-time thread and not yet delivered:
        /// high while a completion or event handler is slow (see `SoundEngine` on slow handlers).
        public var undeliveredEvents: Int
        /// Reports the real-time thread could not hand over because its ring to the delivery
        /// thread was full. Completions are never among them (the real-time thread holds back
        /// commands instead); only xrun notices could be. Should stay 0.
        public var lostEvents: Int
        /// Periods in which the real-time thread left queued commands for later because the
        /// delivery thread had fallen behind (its ring lacked room for the events they could
        /// cause). Should stay 0.
        public var heldCommandPeriods: Int
        /// Whether this engine locked the process's memory (`Configuration.lockMemory`).
        public var memoryLocked: Bool
        /// Rewind mode: off, starting, active, or unsupported by the device (and why).
        public var rewind: RewindStatus = .off
        /// Rewinds done so far, and the frames they took back.
        public var rewinds: Int = 0
        public var rewoundFrames: Int = 0
        /// Rewind mode: how many frames the device's pointer moves at a time, as measured when
        /// rewind mode was tried (1: it follows the DAC; a period: it moves per period), 0 before.
        /// Rewinds stay this far clear of the pointer, besides the guard, unless `delayFollowsDAC`.
        public var pointerGranularity: Int = 0
        /// Rewind mode: whether the device's delay followed its DAC frame by frame when measured;
        /// rewinds then go to the guard ahead of the DAC by the delay, whatever the pointer does.
        public var delayFollowsDAC: Bool = false
        /// "off", or what renders positional voices binaurally ("default.sofa, 48 taps at 48000 Hz"),
        /// or why the HRTF asked for is not used ("off: HRTF needs stereo output, the output has 1 channel").
        public var hrtf: String = "off"
        /// Of `activeVoices`, the virtual ones: positional voices too quiet to hear, not mixed.
        public var virtualVoices: Int = 0

        public var description: String {
            let rt = realtimeGranted.map { $0 ? "SCHED_FIFO" : "normal priority (SCHED_FIFO refused)" } ?? "starting"
            let pointer = pointerGranularity > 0
                ? ", pointer granularity \(pointerGranularity) frames" + (delayFollowsDAC ? ", delay to the frame" : "") : ""
            let output = outputLatency.map { String(cFormat: ", output latency %.2f ms", $0.seconds * 1000) } ?? ""
            return "\(parameters), latency ≤ \(latencyEstimate)\(output), \(xruns) xruns (\(startupXruns) at start-up), \(activeVoices) voices\(virtualVoices > 0 ? " (\(virtualVoices) virtual)" : ""), \(rt), \(rewind)\(pointer)"
        }
    }

    public let configuration: Configuration
    /// The sounds this engine plays.
    public let library: SoundLibrary

    private let output: OutputThread
    /// Watches for cards while there is no device.
    let deviceWatch: DeviceWatch
    /// The output thread, for tests that look at where commands were placed.
    var outputThread: OutputThread { output }
    private let commands: CommandQueue
    let delivery: EventDelivery
    private let nextVoice = Atomic<UInt64>(1)
    private let closed = Atomic<Bool>(false)
    private let outputMixer = Mutex<MixerControl?>(nil)
    private let haptics = Mutex<Vibrator?>(nil)
    /// The alert flasher, made on first use from `configuration.flashBackend`.
    let flasher = Mutex<Flasher?>(nil)
    private let memoryLocked: Bool
    private let hrtfStatus: String
    /// How far rewind mode may render again: effect processors keep that much room.
    let effectHeadroomFrames: Int
    private let started = Atomic<Bool>(false)
    /// The listener and the world as last set (`listener`, `world`), for readers on any thread.
    let spatial = Mutex<(listener: Listener, world: SpatialWorld)>((Listener(), SpatialWorld()))

    /// Opens `configuration.output.device` and starts the real-time thread. Throws when the
    /// device cannot be opened (the error names it and the fix) or the sound theme is missing.
    public convenience init(configuration: Configuration = Configuration()) throws {
        try self.init(configuration: configuration, validating: true)
    }

    /// `validating: false` lets tests open an engine with a value the checks refuse (a SCHED_FIFO
    /// priority the kernel refuses, to test that refusal).
    init(configuration: Configuration, validating: Bool) throws {
        if validating { try configuration.validate() }
        // The library is made on a second thread while the device opens, at the format asked
        // for: finding the sound themes (their index files) and decoding `preloadedSystemSounds`
        // take about as long as opening the device (ALSA's configuration, the device's plugin),
        // and neither needs the other. A device that settles on another format gets a library
        // of its own format, from the same themes.
        // (Where sfx's code was loaded from is asked first: for libsfx.so, loaded by a program,
        // the question waits for the dynamic loader, which the device's plugin may hold meanwhile.)
        let image = SoundBundle.currentImage()
        let preparing = SideTask(name: "sfx-library") { [configuration] () throws(SoundError) -> SoundLibrary in
            var asked = configuration.library
            asked.format = configuration.requestedFormat
            let library = SoundLibrary(configuration: asked, themes: try SoundLibrary.Themes(configuration: asked, executablePath: image))
            // A name the theme lacks is reported when it is played, as without the preload.
            for name in configuration.preloadedSystemSounds { _ = try? library.systemSound(named: name) }
            return library
        }
        // A card named by its index is followed by its id, which stays when the card comes back
        // at another index (a USB speaker switched off and on).
        var asked = configuration.output
        if let card = CardName.resolve(asked.device, asoundRoot: configuration.asoundRoot) { asked.device = card.stableName }
        let request = configuration.rewind ? RewindMode.coarseRequest(for: asked) : asked
        // Without its device (`whileNoDevice`), the engine runs as after a loss: by the clock,
        // at the rate and channels asked for, trying the device until it opens.
        let pcm: (any PlaybackDevice)?
        var unavailable: String?
        do {
            pcm = try configuration.devices.open(request)
        } catch {
            if configuration.whileNoDevice == .fail { throw error }
            pcm = nil
            unavailable = "\(error)"
        }
        let granted = pcm?.parameters ?? .awaited(request)
        let format = granted.audioFormat
        self.configuration = configuration
        var mixerConfiguration = Mixer.Configuration()
        mixerConfiguration.maxVoices = configuration.maxVoices
        mixerConfiguration.virtualVoices = configuration.virtualVoices
        // Rewind mode renders again at most what the device buffer holds.
        mixerConfiguration.rewindHeadroomFrames = max(4096, granted.bufferFrames)
        // Blocks of up to 4096 frames, so that a device attached later with a larger buffer
        // renders in few blocks; a deferred start (a command that plays and exits) has its
        // device and renders a buffer at most, and zeroing buses and sends for 4096 frames cost
        // its first period 0.2 ms of page faults. Rendering is the same however it is split.
        mixerConfiguration.maxFramesPerRender = configuration.deferredStart && pcm != nil
            ? granted.bufferFrames : max(granted.bufferFrames, 4096)
        // The output thread releases streaming voices' frames itself: after each render on the
        // classic path, and in rewind mode only once they can no longer be rendered again.
        mixerConfiguration.releasesStreamsAfterRender = false
        // Every voice can end in one render, and each command between two hand-overs can end
        // or reject a voice and release a cue.
        let slots = mixerConfiguration.maxVoices + mixerConfiguration.virtualVoices + mixerConfiguration.tailVoices
        mixerConfiguration.eventCapacity = max(1024, 2 * slots + 4 * OutputThread.eventBatch)
        let (table, hrtfStatus) = try Self.loadHRTF(configuration.hrtf, format: format)
        self.hrtfStatus = hrtfStatus
        effectHeadroomFrames = mixerConfiguration.rewindHeadroomFrames
        let mixer = Mixer(format: format, configuration: mixerConfiguration, hrtf: table)
        let ring = SPSCRing<MixerCommand>(capacity: max(1, configuration.commandCapacity))
        // Room for several periods' worth of the events the real-time thread keeps room for.
        let budget = OutputThread.commandBudget(periodFrames: granted.periodFrames)
        let reserve = OutputThread.noticeReserve(slots: slots, commandBudget: budget)
        let notices = SPSCRing<OutputNotice>(capacity: max(configuration.noticeCapacity, 4 * reserve))
        let idleFrames = configuration.idleTimeout.map { max(1, Int(Double(format.sampleRate) * $0.seconds)) } ?? 0
        output = OutputThread(device: pcm, parameters: granted, mixer: mixer, commands: ring, notices: notices,
                              settings: .init(request: asked, devices: configuration.devices,
                                              realtimePriority: configuration.realtimePriority,
                                              idleFrames: idleFrames, rewind: configuration.rewind),
                              commandBudget: budget, noticeReserve: reserve)
        var queueLimit = 0
        if case .queue(let limit) = configuration.whileNoDevice { queueLimit = limit }
        commands = CommandQueue(ring: ring, output: output, queueLimit: queueLimit)
        deviceWatch = DeviceWatch(device: asked.device, asoundRoot: configuration.asoundRoot, source: configuration.cardEvents,
                                  output: output)
        delivery = EventDelivery(notices: notices, output: output, commands: commands, deviceWatch: deviceWatch)
        delivery.handler = configuration.onEvent
        delivery.alertHandler = configuration.onAlert
        let prepared = try preparing.value()
        if prepared.configuration.format == format {
            library = prepared
        } else {
            var libraryConfiguration = configuration.library
            libraryConfiguration.format = format
            library = SoundLibrary(configuration: libraryConfiguration, themes: prepared.themes)
        }
        memoryLocked = configuration.lockMemory && mlockall(MCL_CURRENT | MCL_FUTURE) == 0
        if configuration.lockMemory, !memoryLocked {
            delivery.publish(.memoryLockRefused(String(cString: strerror(errno))
                + "; raise the memlock limit (ulimit -l, memlock in /etc/security/limits.d) or grant CAP_IPC_LOCK"))
        }
        if let unavailable {
            deviceWatch.start()
            commands.hold(reason: unavailable)
            delivery.deviceProblem.withLock { $0 = unavailable }
            delivery.publish(.deviceUnavailable(unavailable))
        }
        delivery.start()
        if !configuration.deferredStart { start() }
    }

    /// Starts the output thread, once (with `Configuration.deferredStart`; otherwise `init` did).
    /// What was played before is mixed into the first period it writes.
    public func start() {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        output.start()
        if configuration.rewind, !output.deviceLost.load(ordering: .acquiring) { output.waitForRewindVerdict(seconds: 0.25) }
    }

    deinit { close(drain: false) }

    /// Stops every sound at once, stops the threads and closes the device. With `drain`, the
    /// device first plays what it already holds (a few milliseconds); without, it stops at once.
    /// Completions of sounds still playing are delivered as `.stopped`.
    public func close(drain: Bool = true) {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        start()   // a thread never started would never say it stopped
        haptics.withLock { $0?.close() }
        output.stop(drain: drain)
        deviceWatch.stop()
        delivery.stop()
        if memoryLocked { munlockall() }
    }

    // MARK: Sounds

    /// The system sound `name` (sfx's theme first, then the themes it inherits), loaded on first use.
    public func systemSound(named name: String) throws(SoundError) -> SoundID {
        try library.systemSound(named: name)
    }

    /// Decodes a file (WAV, AIFF, FLAC, Ogg, Opus, MP3, … anything libsndfile reads; M4A, ALAC, WMA, …
    /// through FFmpeg) into a new sound;
    /// `normalize` brings it to a target loudness first (see `LoudnessNormalization`; off by default).
    public func load(contentsOf url: URL, normalize: LoudnessNormalization? = nil) throws(SoundError) -> SoundID {
        try library.load(contentsOf: url, normalize: normalize)
    }

    /// The same as `load(contentsOf:normalize:)`, decoding on a thread of Dispatch's global
    /// queue rather than the caller's (decoding reads the file and resamples it: milliseconds to
    /// seconds), so an actor or a UI task is free meanwhile.
    public func load(contentsOf url: URL, normalize: LoudnessNormalization? = nil) async throws(SoundError) -> SoundID {
        let library = library
        let result: Result<SoundID, SoundError> = await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(returning: Result { () throws(SoundError) -> SoundID in
                    try library.load(contentsOf: url, normalize: normalize)
                })
            }
        }
        return try result.get()
    }

    /// Converts interleaved float PCM at any rate and channel count into a new sound.
    public func load(buffer: [Float], sampleRate: Int, channels: Int, name: String = "buffer") throws(SoundError) -> SoundID {
        try library.load(buffer: buffer, sampleRate: sampleRate, channels: channels, name: name)
    }

    /// Forgets a custom sound. Voices playing it fade out and complete with `.stopped`; its
    /// memory is freed once the real-time thread has confirmed that no voice reads it.
    public func dispose(_ id: SoundID) throws(SoundError) {
        let cue = try library.dispose(id)
        delivery.retire(cue)
    }

    // MARK: Playing

    /// Starts a sound and returns its voice at once (see `SoundEngine` on what it does meanwhile).
    ///
    /// A number out of range, an unknown sound or a closed engine does not start the sound: the
    /// completion gets `.rejected` with the reason (`RejectReason.invalidSetting` names the
    /// setting and its range).
    ///
    /// - Parameters:
    ///   - volume: linear gain, 1 as recorded: 0…16 (`Mixer.maximumGain`).
    ///   - pan: −1 left … 1 right (constant power for mono sounds, balance for stereo ones).
    ///   - loops: extra repeats: 0 plays once, −1 until stopped.
    ///   - group: for group gain, mute and stop.
    ///   - priority: which voices give way when all are busy.
    ///   - maxInstances: at most this many voices of this sound at once (0: no cap); the oldest gives way.
    ///   - fadeIn: a fade-in, 0…60 s (the shortest is the 0.3 ms declick every sound gets).
    ///   - rate: 0.5…2, speed and pitch together (SoundPool's setRate; see `Voice.setRate`).
    ///   - completion: called once with how the play ended, on the engine's completion queue
    ///     (never on the caller's thread); `await voice.outcome` gives the same.
    @discardableResult
    public func play(_ id: SoundID, volume: Float = 1, pan: Float = 0, loops: Int = 0,
                     group: SoundGroup = .effects, priority: VoicePriority = .normal, maxInstances: Int = 0,
                     fadeIn: Duration = .zero, rate: Float = 1,
                     completion: (@Sendable (PlayOutcome) -> Void)? = nil) -> Voice {
        let voice = reserveVoice()
        if let refusal = begin(voice, id, volume: volume, pan: pan, loops: loops, group: group, priority: priority,
                               maxInstances: maxInstances, fadeIn: fadeIn, rate: rate, source: nil, completion: completion,
                               completesRefusals: true) {
            delivery.reject(completion, voice.handle, refusal)
        }
        return voice
    }

    /// `play` of a positional voice: `source` says where it is and how it carries (see
    /// `SoundEngine.play(_:at:velocity:...)`).
    func play(_ id: SoundID, source: Source, volume: Float, loops: Int, group: SoundGroup, priority: VoicePriority,
              maxInstances: Int, fadeIn: Duration, rate: Float, sends: SIMD4<Float>, filter: FilterSettings? = nil,
              completion: (@Sendable (PlayOutcome) -> Void)?) -> Voice {
        let voice = reserveVoice()
        if let refusal = begin(voice, id, volume: volume, pan: 0, loops: loops, group: group, priority: priority,
                               maxInstances: maxInstances, fadeIn: fadeIn, rate: rate, source: source, sends: sends,
                               filter: filter, completion: completion, completesRefusals: true) {
            delivery.reject(completion, voice.handle, refusal)
        }
        return voice
    }

    /// A voice for a play not started yet (`start`), so that its id is known before the play can
    /// end: for front ends that record the voice before its completion may run (the C API).
    package func reserveVoice() -> Voice {
        Voice(id: VoiceID(nextVoice.wrappingAdd(1, ordering: .relaxed).oldValue), engine: self)
    }

    /// `play` on a reserved voice, for front ends that return a refusal to their caller (the C
    /// API's sfx_play): a play refused before it reaches the mixer (a setting out of range, an
    /// unknown sound, a closed engine, a full command queue) returns why, its completion is never
    /// called, and `voice.outcome` gives the refusal. Otherwise (nil) the completion is called
    /// exactly once, as for `play`.
    package func start(_ voice: Voice, _ id: SoundID, volume: Float = 1, pan: Float = 0, loops: Int = 0,
                       group: SoundGroup = .effects, priority: VoicePriority = .normal, maxInstances: Int = 0,
                       fadeIn: Duration = .zero, rate: Float = 1, source: Source? = nil,
                       completion: (@Sendable (PlayOutcome) -> Void)? = nil) -> RejectReason? {
        let refusal = begin(voice, id, volume: volume, pan: pan, loops: loops, group: group, priority: priority,
                            maxInstances: maxInstances, fadeIn: fadeIn, rate: rate, source: source, completion: completion,
                            completesRefusals: false)
        if let refusal { voice.handle.fulfil(.rejected(refusal)) }
        return refusal
    }

    /// Checks a play and sends it to the mixer; returns why it was refused, or nil once it is on
    /// its way. A full command queue is found after the play was registered: `completesRefusals`
    /// completes it there (in the same step as it is taken back, so that `waitUntilIdle` never
    /// sees it gone and its completion not yet queued); otherwise it is taken back and returned.
    func begin(_ voice: Voice, _ id: SoundID, volume: Float, pan: Float, loops: Int, group: SoundGroup,
               priority: VoicePriority, maxInstances: Int, fadeIn: Duration, rate: Float, source: Source?,
               sends: SIMD4<Float> = .zero, filter: FilterSettings? = nil, startFrame: Int? = nil,
               completion: (@Sendable (PlayOutcome) -> Void)?, completesRefusals: Bool) -> RejectReason? {
        do throws(SettingError) {
            try Self.checkGain("volume", volume)
            try Self.checkPan(pan)
            try SettingError.check("loops", loops, in: SettingLimits.loops)
            try SettingError.check("maxInstances", maxInstances, in: 0...Int.max)
            try SettingError.check("fadeIn", fadeIn, in: Self.fades)
            try Self.checkRate(rate)
            if let source { try Self.checkSource(source) }
            for bus in 0..<4 { try SettingError.check("sends[\(bus)]", sends[bus], in: SettingLimits.send) }
            if let filter { try Self.checkFilter(filter) }
        } catch {
            return .invalidSetting(error)
        }
        guard let cue = library.cue(for: id) else { return .unknownSound(id) }
        let request = PlayRequest(voice: voice.id, cue: cue, gain: volume, pan: pan, loops: loops,
                                  group: group, priority: priority, maxInstances: maxInstances,
                                  fadeInFrames: frames(fadeIn), rate: rate, source: source, filter: filter, sends: sends)
        guard delivery.expect(voice.id, cue: cue, completion: completion, handle: voice.handle, endless: loops < 0) else {
            return .engineClosed
        }
        let refusal: RejectReason
        switch commands.submit(startFrame.map { .playAt(request, frame: $0) } ?? .play(request)) {
        case .queued, .held: return nil
        case .full: refusal = .commandQueueFull
        case .overLimit(let why): refusal = .noDevice(why)
        }
        if completesRefusals {
            delivery.reject(voice.id, refusal)
            return nil
        }
        delivery.withdraw(voice.id)
        return refusal
    }

    /// Starts a streaming voice on `ring` (which `ring` keeps alive until the voice ends); the
    /// Player's way in.
    func playStream(_ request: StreamRequest, ring: StreamRing, startFrame: Int? = nil, crossfadeAtEnd expectedEnd: Int? = nil,
                    completion: @escaping @Sendable (PlayOutcome) -> Void) -> Voice {
        let voice = Voice(id: VoiceID(nextVoice.wrappingAdd(1, ordering: .relaxed).oldValue), engine: self)
        var request = request
        request.voice = voice.id
        guard delivery.expect(voice.id, cue: ring, completion: completion, handle: voice.handle) else {
            delivery.reject(completion, voice.handle, .engineClosed)
            return voice
        }
        let command: MixerCommand = if let expectedEnd { .crossfadeAtEnd(request, expectedEnd: expectedEnd) }
            else if let startFrame { .playStreamAt(request, frame: startFrame) } else { .playStream(request) }
        switch commands.submit(command) {
        case .queued, .held: break
        case .full: delivery.reject(voice.id, .commandQueueFull)
        case .overLimit(let why): delivery.reject(voice.id, .noDevice(why))
        }
        return voice
    }

    /// Pauses every voice of one group (a short ramp, no click); they keep their places, and
    /// voices started in the group meanwhile wait too.
    public func pause(group: SoundGroup) { send(.setGroupPaused(group, true)) }

    /// Resumes a paused group from where its voices were.
    public func resume(group: SoundGroup) { send(.setGroupPaused(group, false)) }

    /// Pauses everything (SoundPool's autoPause): every voice ramps to silence and holds.
    public func pauseAll() { send(.setAllPaused(true)) }

    /// Resumes everything `pauseAll` paused (SoundPool's autoResume).
    public func resumeAll() { send(.setAllPaused(false)) }

    /// Makes `trigger` lower `target` by `decibels` (≤ 0) while any voice of `trigger` plays, as
    /// AVAudioSession's duckOthers; 0 dB removes the rule. By default alerts lower music by 12 dB
    /// over 20 ms and give it back over 300 ms.
    public func setDucking(_ trigger: SoundGroup, ducks target: SoundGroup, by decibels: Float,
                           attack: Duration = .milliseconds(20), release: Duration = .milliseconds(300)) throws(SettingError) {
        try SettingError.check("ducking", decibels, in: -96...0)
        try SettingError.check("attack", attack, in: Self.fades)
        try SettingError.check("release", release, in: Self.fades)
        send(.setDucking(Ducking(trigger: trigger, target: target, gain: decibels == 0 ? 1 : Float(pow(10, Double(decibels) / 20)),
                                 attackFrames: frames(attack), releaseFrames: frames(release))))
    }

    /// Fades out every voice over 5 ms.
    public func stopAll() { send(.stopAll(fadeFrames: frames(Self.defaultFade))) }

    /// Fades out every voice over `fade` (0…60 s).
    public func stopAll(fade: Duration) throws(SettingError) {
        send(.stopAll(fadeFrames: try checkedFrames(fade)))
    }

    /// Fades out every voice of one group over 5 ms.
    public func stop(group: SoundGroup) { send(.stopGroup(group, fadeFrames: frames(Self.defaultFade))) }

    /// Fades out every voice of one group over `fade` (0…60 s).
    public func stop(group: SoundGroup, fade: Duration) throws(SettingError) {
        send(.stopGroup(group, fadeFrames: try checkedFrames(fade)))
    }

    /// Sets a group's gain, 0…16 (smoothed).
    public func setGain(_ gain: Float, for group: SoundGroup) throws(SettingError) {
        try Self.checkGain("group gain", gain)
        send(.setGroupGain(group, gain))
    }

    /// Mutes or unmutes a group (smoothed).
    public func setMuted(_ muted: Bool, group: SoundGroup) { send(.setGroupMuted(group, muted)) }

    /// Sets the gain of everything, 0…16 (smoothed).
    public func setMasterGain(_ gain: Float) throws(SettingError) {
        try Self.checkGain("master gain", gain)
        send(.setMasterGain(gain))
    }

    /// The fades a stop may have (`SettingLimits.fade`).
    public static let fades = SettingLimits.fade
    static let defaultFade = Duration.milliseconds(5)

    // MARK: State

    /// The negotiated device parameters and the engine's counters now.
    public var metrics: Metrics {
        let p = output.currentParameters
        let status = output.realtimeStatus.load(ordering: .acquiring)
        let rewind = output.rewindStatus
        let rewinding = rewind == .active || rewind == .starting
        // Rewinding, a trigger reaches the DAC the guard after the thread wakes (and up to the
        // pointer's granularity more), plus the wake-up and the re-render (as much again allows
        // for both); else it waits behind the buffer.
        let delay = output.outputDelayFrames.load(ordering: .relaxed)
        let exactDelay = output.delayFollowsDAC.load(ordering: .acquiring)
        let granularity = exactDelay ? 0 : Double(output.pointerGranularity.load(ordering: .acquiring)) / Double(p.sampleRate)
        let latency = rewinding ? 2 * RewindMode.guardSeconds + granularity
                                : Double(p.bufferFrames + p.periodFrames) / Double(p.sampleRate)
        return Metrics(parameters: p, latencyEstimate: .nanoseconds(Int64(latency * 1e9)),
                       xruns: output.xruns.load(ordering: .relaxed),
                       startupXruns: output.startupXruns.load(ordering: .relaxed),
                       activeVoices: output.activeVoices.load(ordering: .relaxed),
                       realtimeGranted: status == 0 ? nil : status > 0,
                       deviceOpen: output.deviceOpen.load(ordering: .relaxed) == 1,
                       deviceLost: output.deviceLost.load(ordering: .relaxed),
                       deviceProblem: output.deviceLost.load(ordering: .relaxed) ? delivery.deviceProblem.withLock { $0 } : nil,
                       outputLatency: delay < 0 ? nil : .nanoseconds(Int64(Double(delay) / Double(p.sampleRate) * 1e9)),
                       framesRendered: output.framesRendered.load(ordering: .relaxed),
                       outputThreadID: output.threadID.load(ordering: .acquiring),
                       undeliveredEvents: delivery.backlog,
                       lostEvents: output.lostNotices.load(ordering: .relaxed),
                       heldCommandPeriods: output.heldCommandPeriods.load(ordering: .relaxed),
                       memoryLocked: memoryLocked, rewind: rewind,
                       rewinds: output.rewinds.load(ordering: .relaxed),
                       rewoundFrames: output.rewoundFrames.load(ordering: .relaxed),
                       pointerGranularity: output.pointerGranularity.load(ordering: .acquiring),
                       delayFollowsDAC: exactDelay, hrtf: hrtfStatus, virtualVoices: output.virtualVoices.load(ordering: .relaxed))
    }

    /// The output's Master (or PCM) playback switch and volume, read from its mixer now, or nil
    /// when the device has no mixer (plugin devices often have none: then mute detection from
    /// the mixer is unavailable).
    public func outputMaster() -> MasterState? {
        outputMixer.withLock { control in
            if control == nil { control = try? MixerControl(device: configuration.output.device) }
            return control?.read()
        }
    }

    /// The engine's events (xruns, device lost and back, voices stolen, SCHED_FIFO refused), for
    /// one consumer per stream: each access makes a new stream.
    public var events: AsyncStream<EngineEvent> { delivery.makeStream() }

    /// Called for every alert with its caption and how it reached the user (heard, felt,
    /// flashed), on the engine's delivery thread, after the engine events before it.
    public var onAlert: (@Sendable (AlertNotice) -> Void)? {
        get { delivery.alertHandler }
        set { delivery.alertHandler = newValue }
    }

    /// Called for every engine event, on the engine's delivery thread.
    public var onEvent: (@Sendable (EngineEvent) -> Void)? {
        get { delivery.handler }
        set { delivery.handler = newValue }
    }

    /// Waits until no voice is playing and every completion has been delivered, or `timeout` passes.
    /// Returns whether everything finished.
    @discardableResult
    public func waitUntilIdle(timeout: Duration = .seconds(60)) -> Bool {
        start()   // with `deferredStart`, nothing would ever end before the stream starts
        return delivery.waitUntilNoVoices(timeout: timeout)
    }

    // MARK: Helpers

    /// The engine's vibrator, opened on first use (which switches the actuator off).
    func vibrator() throws(HapticError) -> Vibrator {
        let result: Result<Vibrator, HapticError> = haptics.withLock { vibrator in
            if let vibrator { return .success(vibrator) }
            let made = Result { () throws(HapticError) -> Vibrator in
                try Vibrator(configuration: configuration.haptics, backend: configuration.hapticBackend)
            }
            vibrator = try? made.get()
            return made
        }
        return try result.get()
    }

    func existingVibrator() -> Vibrator? { haptics.withLock { $0 } }

    func report(_ event: EngineEvent) { delivery.publish(event) }

    /// Completes a play that was never made (a muted alert) on the completion queue.
    func reject(_ completion: (@Sendable (PlayOutcome) -> Void)?, _ reason: RejectReason) {
        delivery.reject(completion, nil, reason)
    }

    @discardableResult
    func send(_ command: MixerCommand) -> Bool { commands.send(command) }

    func frames(_ duration: Duration) -> Int {
        Int((duration.seconds * Double(output.currentParameters.sampleRate)).rounded())
    }

    /// `fade` in frames, once it is known to be in `fades`.
    func checkedFrames(_ fade: Duration) throws(SettingError) -> Int {
        try SettingError.check("fade", fade, in: Self.fades)
        return frames(fade)
    }

    static func checkGain(_ setting: String, _ gain: Float) throws(SettingError) {
        try SettingError.check(setting, gain, in: SettingLimits.gain)
    }

    static func checkPan(_ pan: Float) throws(SettingError) {
        try SettingError.check("pan", pan, in: SettingLimits.pan)
    }

    static func checkRate(_ rate: Float) throws(SettingError) {
        try SettingError.check("rate", rate, in: SettingLimits.rate)
    }
}

final class WeakEngine: @unchecked Sendable {
    weak var value: SoundEngine?
    init(_ value: SoundEngine) { self.value = value }
}

extension Duration {
    package var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) * 1e-18
    }
}
