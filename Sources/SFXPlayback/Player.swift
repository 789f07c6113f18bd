import FoundationEssentials
import Glibc
import Synchronization
import SFXCore
import SFXMedia

/// Plays one sound of any length without loading it whole, as AVAudioPlayer does: a reader
/// thread decodes ahead (libsndfile, or FFmpeg for M4A/AAC, ALAC, WMA, …; resampled by libsoxr
/// when the file's rate is not the device's) into a lock-free ring that one streaming voice of
/// the engine's mixer plays.
///
/// ```swift
/// let player = try engine.makePlayer(contentsOf: URL(filePath: "podcast.m4a"))   // group .music
/// player.didFinish = { ok in print("done", ok) }
/// player.play()
/// player.pause(); player.resume()
/// player.currentTime = 90                 // seconds; lands on the exact frame (`try seek(to:)` throws instead)
/// player.rate = 1.5                       // 0.5…2, speed and pitch together
/// player.numberOfLoops = -1               // forever, gapless at the loop point
/// player.loopRegion = 96_000..<480_000     // intro, then loop these frames (or LOOPSTART/LOOPLENGTH tags)
/// try player.crossfade(to: next, duration: .seconds(2))   // equal-power handover
/// print(player.currentTime, player.duration)     // seconds; duration is .infinity for a live stream
/// player.isMeteringEnabled = true; player.updateMeters(); player.averagePower(forChannel: 0)   // dBFS
/// ```
///
/// Memory is the ring (2 s at 48 kHz, 1 MB in stereo) plus a few decoding blocks, whatever the
/// file's length: there is no cue limit for a player. If the disk falls behind, the voice plays
/// silence and counts an underrun (`underruns`); the real-time thread never waits.
///
/// Interruptions: when the engine loses its device (`EngineEvent.deviceLost`) a playing player
/// pauses and `onInterruption` gets `.began`; when the device is back it resumes and gets
/// `.ended(resumed: true)` (a player paused or stopped meanwhile stays so).
///
/// Every method may be called from any thread; callbacks run on the engine's completion and
/// event queues.
public final class Player: @unchecked Sendable {
    public enum Interruption: Sendable, Equatable {
        case began
        case ended(resumed: Bool)
    }

    /// Where the sound comes from: a file, or a URL being downloaded (`PlayerDownload`).
    public let url: URL
    public let group: SoundGroup
    /// The length in seconds (one pass, without loops), as AVAudioPlayer's: known at open for
    /// files and for web streams whose server says their length; `.infinity` for a stream of
    /// unknown length (a live stream), so `currentTime / duration` is 0 there, never NaN.
    public let duration: Double
    /// Whether `duration` is the source's length (false: a stream that does not say).
    public var isDurationKnown: Bool { duration.isFinite }

    /// Called once a play ends by itself (true), or when it could not go on (false: a decoding or
    /// download error, a voice stolen, the engine stopping it); not after `stop()`.
    public var didFinish: (@Sendable (_ successfully: Bool) -> Void)? {
        get { state.withLock { $0.didFinish } }
        set { state.withLock { $0.didFinish = newValue } }
    }
    /// Called when the device is lost and when it comes back (see `Player`).
    public var onInterruption: (@Sendable (Interruption) -> Void)? {
        get { state.withLock { $0.onInterruption } }
        set { state.withLock { $0.onInterruption = newValue } }
    }

    enum Mode { case stopped, playing, paused }

    /// What a player is doing, for UI code (`states`).
    public enum PlaybackState: Sendable, Equatable { case stopped, playing, paused }

    /// One value per change of `isPlaying` and the rest (`playing`, `paused`, `stopped`, also when
    /// a play ends by itself), sent from the caller's or the completion queue, never the output
    /// thread. One listener.
    public let states: AsyncStream<PlaybackState>
    private let stateContinuation: AsyncStream<PlaybackState>.Continuation
    private let lastState = Mutex(PlaybackState.stopped)
    /// The meters' switch and last reading (PlayerMetering.swift).
    let meters = Mutex(PlayerMeters())

    /// Sends the mode's state when it changed since the last one sent.
    private func publishState() {
        let now: PlaybackState = switch state.withLock({ $0.mode }) {
        case .stopped: .stopped
        case .playing: .playing
        case .paused: .paused
        }
        let changed = lastState.withLock { last -> Bool in
            defer { last = now }
            return last != now
        }
        if changed { stateContinuation.yield(now) }
    }

    struct State {
        var mode = Mode.stopped
        var reader: StreamReader?
        var voice: Voice?
        /// Changes with every new voice, so a replaced voice's completion is ignored.
        var generation = 0
        /// Where the next voice starts (source frames) while none plays.
        var position: Int64 = 0
        var volume: Float = 1
        var pan: Float = 0
        var rate: Float = 1
        var source: Source?
        var loops = 0
        var loopRegion: Range<Int64>?
        var fadeIn = Duration.zero
        var interrupted = false
        var underrunsBefore = 0
        var error: (any Error)?
        var didFinish: (@Sendable (Bool) -> Void)?
        var onInterruption: (@Sendable (Interruption) -> Void)?
    }

    let engine: SoundEngine
    let state = Mutex(State())
    /// Opens a reader at a source frame (a file again, or the download's bytes).
    private let open: @Sendable (_ startFrame: Int64, _ loops: Int) throws -> StreamReader
    private let sourceRate: Int
    private var observer: Task<Void, Never>?
    /// The download a URL's player streams from (nil for a file).
    let download: HTTPDownload?
    /// Called with each reader before it starts (a playlist hands it the next files).
    var configureReader: ((StreamReader) -> Void)?
    /// The reader of the play (nil while stopped).
    var currentReader: StreamReader? { state.withLock { $0.voice == nil ? nil : $0.reader } }

    init(url: URL, engine: SoundEngine, group: SoundGroup, download: HTTPDownload? = nil,
         open: @escaping @Sendable (Int64, Int) throws -> StreamReader) throws {
        self.url = url
        self.engine = engine
        self.group = group
        self.open = open
        self.download = download
        (states, stateContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(64))
        let first = try open(0, 0)
        duration = first.duration ?? .infinity
        sourceRate = first.sourceRate
        state.withLock { $0.reader = first }
        let events = engine.events
        observer = Task { [weak self] in
            for await event in events { self?.handle(event) }
        }
    }

    deinit {
        stateContinuation.finish()
        observer?.cancel()
        let (voice, reader) = state.withLock { ($0.voice, $0.reader) }
        voice?.stop()
        reader?.stop()
    }

    // MARK: Playing

    /// Starts playing (from the start, or where `seek` or `stop` left it), or resumes a paused
    /// player. Throws when the file can no longer be opened.
    public func play() throws {
        let mode = state.withLock { $0.mode }
        switch mode {
        case .playing: return
        case .paused: resume()
        case .stopped: try startVoice(at: state.withLock { $0.position }, paused: false)
        }
    }

    /// Starts playing so that the first frame heard is frame `time` of the engine's output (see
    /// `SoundEngine.play(_:at:)`): music started on a `BeatGrid` point shares the grid with the
    /// effects played on it. It plays from where `play()` would (the start, or where `seek` or
    /// `stop` left it), replacing the voice of a player already playing. Throws when the file
    /// can no longer be opened.
    public func play(at time: EngineTime) throws {
        try startVoice(at: state.withLock { $0.position }, paused: false, startFrame: SoundEngine.mixerFrame(time))
    }

    /// Pauses: a short ramp to silence, then the position is held.
    public func pause() {
        let voice = state.withLock { state -> Voice? in
            guard state.mode == .playing else { return nil }
            state.mode = .paused
            state.interrupted = false
            return state.voice
        }
        voice?.pause()
        publishState()
    }

    /// Resumes a paused player from where it was.
    public func resume() {
        let voice = state.withLock { state -> Voice? in
            guard state.mode == .paused else { return nil }
            state.mode = .playing
            return state.voice
        }
        voice?.resume()
        publishState()
    }

    /// Stops playing (a 5 ms fade) and keeps the position: `play()` goes on from there.
    public func stop() {
        let position = currentFrame
        let (voice, reader) = state.withLock { state -> (Voice?, StreamReader?) in
            state.generation += 1
            state.mode = .stopped
            state.interrupted = false
            state.position = position
            defer { state.voice = nil; state.reader = nil }
            state.underrunsBefore += state.reader?.ring.underruns ?? 0
            return (state.voice, state.reader)
        }
        voice?.stop()
        reader?.stop()
        publishState()
    }

    /// Moves to `seconds` from the start (clamped to the sound), landing on the exact frame
    /// round(seconds × the file's rate). A playing player goes on from there; a paused one stays
    /// paused there.
    public func seek(to seconds: Double) throws {
        guard seconds.isFinite else { throw SettingError(setting: "seek", value: "\(seconds)", allowed: "a number of seconds from 0") }
        var frame = Int64((max(0, seconds) * Double(sourceRate)).rounded())
        if isDurationKnown { frame = min(frame, Int64((duration * Double(sourceRate)).rounded())) }
        let mode = state.withLock { $0.mode }
        switch mode {
        case .stopped:
            // The next play opens a reader there (one opened ahead for another frame is dropped).
            let stale = state.withLock { state -> StreamReader? in
                state.position = frame
                guard let reader = state.reader, reader.startFrame != frame else { return nil }
                state.reader = nil
                return reader
            }
            stale?.stop()
        case .playing, .paused:
            try startVoice(at: frame, paused: mode == .paused)
        }
    }

    /// Where the play is, in seconds from the file's start: what the mixer has rendered, a
    /// device buffer ahead of what is heard. Through loops it follows the frames played: after a
    /// loop point it is where the loop went back to (the start, or `loopRegion`'s start). Setting it moves there as
    /// `seek(to:)` does (clamped to 0…duration, playing or paused), as AVAudioPlayer's setter
    /// does: it never throws; a move that fails (a source that cannot be opened there, a value
    /// not a number) is ignored and `error` says why.
    public var currentTime: Double {
        get { currentSeconds }
        set {
            do { try seek(to: newValue) } catch { state.withLock { $0.error = error } }
        }
    }

    private var currentSeconds: Double {
        let (frame, rate) = currentPosition
        var seconds = Double(frame) / Double(rate)
        // At the end of the last pass, the duration (a rounding past it reads the same).
        if isDurationKnown, duration > 0, seconds > duration { seconds = duration }
        return seconds
    }

    public var isPlaying: Bool { state.withLock { $0.mode == .playing } }

    /// Linear gain, 0…16, smoothed (a value outside is ignored, as for `pan` and `rate`).
    public var volume: Float {
        get { state.withLock { $0.volume } }
        set {
            guard let voice = state.withLock({ state -> Voice?? in
                guard SettingLimits.gain.contains(newValue) else { return .none }
                state.volume = newValue
                return .some(state.voice)
            }) else { return }
            try? voice?.setVolume(newValue)
        }
    }

    /// −1 left … 1 right, smoothed.
    public var pan: Float {
        get { state.withLock { $0.pan } }
        set {
            guard let voice = state.withLock({ state -> Voice?? in
                guard SettingLimits.pan.contains(newValue) else { return .none }
                state.pan = newValue
                return .some(state.voice)
            }) else { return }
            try? voice?.setPan(newValue)
        }
    }

    /// Where the player is in the game's world (a radio in a room, music from a car), or nil
    /// (the default) to play as it is, panned by `pan`. See `SoundEngine.play(_:from:...)`; a
    /// player is never virtual. Setting a source while playing moves the sound at the next
    /// spatial update; going back to nil takes effect with the next play or seek.
    public var source: Source? { state.withLock { $0.source } }

    public func setSource(_ source: Source?) throws(SettingError) {
        if let source { try SoundEngine.checkSource(source) }
        let voice = state.withLock { state -> Voice? in
            state.source = source
            return state.voice
        }
        if let source { try voice?.setSource(source) }
    }

    /// Moves a positional player (and sets its velocity, for doppler); no effect while `source` is nil.
    public func setPosition(_ position: Vector3, velocity: Vector3 = .zero) {
        let voice = state.withLock { state -> Voice? in
            state.source?.position = position
            state.source?.velocity = velocity
            return state.source == nil ? nil : state.voice
        }
        voice?.setPosition(position, velocity: velocity)
    }

    /// 0.5…2: speed and pitch change together (the voice reads the stream faster or slower,
    /// linearly interpolated, as SoundPool's setRate). Values outside are ignored.
    public var rate: Float {
        get { state.withLock { $0.rate } }
        set {
            guard let voice = state.withLock({ state -> Voice?? in
                guard Mixer.rates.contains(newValue) else { return .none }
                state.rate = newValue
                return .some(state.voice)
            }) else { return }
            try? voice?.setRate(newValue)
        }
    }

    /// Extra passes after the first: 0 plays once, −1 loops until stopped. The loop point is
    /// gapless (the reader goes back to the start, or to `loopRegion`'s, without flushing the
    /// resampler). A change applies at the next loop point.
    public var numberOfLoops: Int {
        get { state.withLock { $0.loops } }
        set {
            let reader = state.withLock { state -> StreamReader? in
                state.loops = max(-1, newValue)
                return state.reader
            }
            reader?.loops.store(max(-1, newValue), ordering: .relaxed)
        }
    }

    /// The part that loops, in the file's frames (start..<end), or nil (the default) for the
    /// whole file: an intro before it plays once, the region 1 + `numberOfLoops` times, then the
    /// tail after it to the end; the seam is gapless and sample-exact. A file tagged `LOOPSTART`
    /// and `LOOPLENGTH` (or `LOOPEND`) starts with that region (`LoopTags`). Setting a region
    /// outside the file or empty is ignored (`setLoopRegion` says why); a change applies at once.
    public var loopRegion: Range<Int64>? {
        get { state.withLock { $0.loopRegion } }
        set { try? setLoopRegion(newValue) }
    }

    public func setLoopRegion(_ frames: Range<Int64>?) throws(SettingError) {
        if let frames {
            let length = isDurationKnown ? Int64((duration * Double(sourceRate)).rounded()) : Int64.max
            guard frames.lowerBound >= 0, !frames.isEmpty, frames.upperBound <= length else {
                throw SettingError(setting: "loop region", value: "\(frames.lowerBound)..<\(frames.upperBound)",
                                   allowed: "start..<end frames within the file's \(length == .max ? "length" : "\(length) frames"), start < end")
            }
        }
        let reader = state.withLock { state -> StreamReader? in
            state.loopRegion = frames
            return state.reader
        }
        reader?.setLoopRegion(frames)
    }

    /// The loop region in seconds (each bound at the nearest frame).
    public func setLoopRegion(seconds: Range<Double>) throws(SettingError) {
        guard seconds.lowerBound.isFinite, seconds.upperBound.isFinite else {
            throw SettingError(setting: "loop region", value: "\(seconds)", allowed: "start..<end seconds, finite")
        }
        let rate = Double(sourceRate)
        try setLoopRegion(Int64((seconds.lowerBound * rate).rounded())..<Int64((seconds.upperBound * rate).rounded()))
    }

    /// The fade-in of each start (play after a stop, not resume or seek), 0…60 s.
    public var fadeIn: Duration {
        get { state.withLock { $0.fadeIn } }
        set { state.withLock { $0.fadeIn = min(max(newValue, .zero), .seconds(60)) } }
    }

    /// Periods in which the reader had not decoded in time and the voice played silence.
    public var underruns: Int {
        state.withLock { $0.underrunsBefore + ($0.reader?.ring.underruns ?? 0) }
    }

    /// Seconds decoded ahead of the play.
    public var bufferedSeconds: Double {
        let frames = state.withLock { $0.reader?.ring.bufferedFrames ?? 0 }
        return Double(frames) / Double(engine.library.configuration.format.sampleRate)
    }

    /// Slows the reader down by `microseconds` per decoded block: how tests make the disk or
    /// the network fall behind.
    func slowReader(by microseconds: Int) {
        state.withLock { $0.reader?.delayPerBlock.store(microseconds, ordering: .relaxed) }
    }

    // MARK: Internals

    /// The source frame the mixer has reached.
    private var currentFrame: Int64 { currentPosition.frame }

    /// The source frame the mixer has reached (through every loop the reader made: a loop back
    /// to the start or to the loop region's, a playlist's next file) and that source's rate.
    private var currentPosition: (frame: Int64, rate: Int) {
        state.withLock { state in
            guard let reader = state.reader, state.voice != nil else { return (state.position, sourceRate) }
            return reader.sourcePosition(atRingFrame: reader.ring.releasedFrames)
        }
    }

    /// Decodes ahead before a voice starts (at most `prerollWait`): `prerollSeconds`, or the
    /// whole sound if shorter. A source slower than that starts anyway and counts underruns.
    public func prepareToPlay() {
        if let reader = state.withLock({ $0.voice == nil ? $0.reader : nil }) { preroll(reader) }
    }

    /// What a start waits to have decoded (seconds), and how long it waits for it at most.
    public static let prerollSeconds = 0.25
    public static let prerollWait = Duration.seconds(2)

    private func preroll(_ reader: StreamReader) {
        reader.start()
        let wanted = min(Int(Self.prerollSeconds * Double(reader.format.sampleRate)), reader.ring.capacity / 2)
        let deadline = ContinuousClock.now + Self.prerollWait
        while reader.ring.writtenFrames < wanted, !reader.isFinished, ContinuousClock.now < deadline {
            usleep(1_000)
        }
    }

    /// Replaces the voice with a new one reading from `frame`; `startFrame` starts it on that
    /// frame of the engine's clock (`play(at:)`); `crossfading` fades another player's voice out
    /// as this one fades in (`crossfade(to:duration:)`).
    func startVoice(at frame: Int64, paused: Bool, startFrame: Int? = nil, crossfading: (from: VoiceID, frames: Int)? = nil,
                    atEnd expectedEnd: Int? = nil) throws {
        let (oldVoice, oldReader, loops, reusable) = state.withLock { state -> (Voice?, StreamReader?, Int, StreamReader?) in
            let reusable = state.voice == nil && state.reader?.startFrame == frame ? state.reader : nil
            return (state.voice, reusable == nil ? state.reader : nil, state.loops, reusable)
        }
        let reader = try reusable ?? open(frame, loops)
        reader.loops.store(loops, ordering: .relaxed)
        reader.setLoopRegion(state.withLock { $0.loopRegion })
        configureReader?(reader)
        preroll(reader)
        let format = engine.library.configuration.format
        let (request, generation) = state.withLock { state -> (StreamRequest, Int) in
            state.generation += 1
            state.underrunsBefore += oldReader?.ring.underruns ?? 0
            state.reader = reader
            state.mode = paused ? .paused : .playing
            let fade = oldVoice == nil ? state.fadeIn : .zero
            var request = StreamRequest(voice: VoiceID(0), stream: reader.ring, gain: state.volume, pan: state.pan, group: group,
                                        fadeInFrames: crossfading?.frames ?? Int((fade.seconds * Double(format.sampleRate)).rounded()),
                                        rate: state.rate, paused: paused, source: state.source)
            request.crossfadeFrom = crossfading?.from
            return (request, state.generation)
        }
        // Only now, with the generation moved on, may the old voice's completion arrive.
        oldVoice?.stop()
        oldReader?.stop()
        let voice = engine.playStream(request, ring: reader.ring, startFrame: startFrame, crossfadeAtEnd: expectedEnd) { [weak self] outcome in
            self?.ended(generation: generation, outcome)
        }
        state.withLock { if $0.generation == generation { $0.voice = voice } }
        publishState()
    }

    private func ended(generation: Int, _ outcome: PlayOutcome) {
        let (callback, success) = state.withLock { state -> ((@Sendable (Bool) -> Void)?, Bool) in
            guard state.generation == generation else { return (nil, false) }
            let failed: (any Error)? = download?.error ?? state.reader?.error
            // Decoding stopped (past the duration cap, or corrupt): the rest is not wanted.
            if failed != nil { download?.cancel() }
            state.generation += 1
            state.mode = .stopped
            state.interrupted = false
            state.voice = nil
            state.underrunsBefore += state.reader?.ring.underruns ?? 0
            state.reader?.stop()
            state.reader = nil
            state.position = 0
            state.error = failed
            return (state.didFinish, outcome == .finished && failed == nil)
        }
        publishState()
        callback?(success)
    }

    /// How much of a URL's sound has arrived (nil for a file).
    public var downloadProgress: HTTPDownload.Progress? { download?.progress }

    /// Why the last play ended early (a decoding or download error), if it did.
    public var error: (any Error)? { state.withLock { $0.error } }

    private func handle(_ event: EngineEvent) {
        switch event {
        case .deviceLost:
            let callback = state.withLock { state -> (@Sendable (Interruption) -> Void)?? in
                guard state.mode == .playing else { return .none }
                return .some(state.onInterruption)
            }
            guard let callback else { return }
            pause()
            state.withLock { $0.interrupted = true }
            callback?(.began)
        case .deviceRestored:
            let callback = state.withLock { state -> (@Sendable (Interruption) -> Void)?? in
                guard state.interrupted else { return .none }
                state.interrupted = false
                return .some(state.onInterruption)
            }
            guard let callback else { return }
            resume()
            callback?(.ended(resumed: true))
        default:
            break
        }
    }
}

extension SoundEngine {
    /// A player for an http(s) URL, which streams while it downloads (or for a file URL, as
    /// `makePlayer(contentsOf:)`). Returns once the server has answered and `prebufferBytes` have
    /// arrived (or the whole of a shorter body) and the header is decoded; throws a
    /// `DownloadError` (DNS, TLS, HTTP status, truncated, stalled: one line each) or a
    /// `MediaError`. `stallTimeout` is the longest wait for the next bytes; `limits` caps the
    /// body's bytes (`DownloadError.Reason.tooLarge`) and the sound's length as decoded (a
    /// `MediaError` past `maximumDuration`): a body without end stops at the first.
    public func makePlayer(url: URL, group: SoundGroup = .music, stallTimeout: Double = 15,
                           prebufferBytes: Int64 = 64 << 10, limits: DownloadLimits = DownloadLimits()) throws -> Player {
        if url.isFileURL { return try makePlayer(contentsOf: url, group: group) }
        let download = try HTTPDownload(url: url, stallTimeout: stallTimeout, maximumBytes: limits.maximumBytes)
        try download.waitForData(prebufferBytes, timeout: stallTimeout)
        let format = library.configuration.format
        do {
            return try Player(url: url, engine: self, group: group, download: download) { start, loops in
                try StreamReader(bytes: download.bytes(), name: url.absoluteString, format: format, startFrame: start, loops: loops,
                                 maximumDuration: limits.maximumDuration)
            }
        } catch {
            if let failure = download.error { throw failure }
            throw error
        }
    }

    /// A player for the sound file at `url` (anything sfx decodes, of any length), in `group`.
    /// Throws a `MediaError` when the file cannot be opened or decoded.
    public func makePlayer(contentsOf url: URL, group: SoundGroup = .music) throws -> Player {
        let format = library.configuration.format
        let file = RawFilePath(url)
        let player = try Player(url: url, engine: self, group: group) { start, loops in
            try StreamReader(file: file, format: format, startFrame: start, loops: loops)
        }
        if let tagged = LoopTags.region(of: file) { try? player.setLoopRegion(tagged) }
        return player
    }
}
