import SFXPlayback
import CSFXSystem
import FoundationEssentials
import SFXSystem
import Dispatch
import Glibc
import Synchronization
import SFXDevice
import SFXMedia

/// Records from a capture device to a file, as AVAudioRecorder does: `record()`, `pause()`,
/// `resume()`, `stop()`, `cancel()`, `currentTime`, meters, a length limit, a minimum length, an
/// optional prompt tone, and events.
///
/// ```swift
/// var settings = RecorderSettings(format: .m4a)         // or .wav, .flac, .opus, .vorbis, .mp3
/// settings.maxDuration = .seconds(30)                     // stops by itself
/// settings.minDuration = .seconds(1)                      // shorter: removed, `.discarded(…)`
/// settings.prompt = try engine.systemSound(named: "tock") // played first, never in the file
/// let recorder = try Recorder(settings: settings, engine: engine)
/// recorder.onEvent = { print($0) }                        // or `for await e in recorder.events`
/// try recorder.record()                                   // $XDG_DATA_HOME/sfx/recordings/<time>.m4a
/// print(recorder.averagePower(channel: 0), recorder.peakPower(channel: 0), recorder.currentTime)
/// recorder.stop()                                         // the file is complete when it returns
/// ```
///
/// ## Threads
/// The capture thread (`CaptureLoop`, SCHED_FIFO) reads the device a period at a time, meters
/// it and puts it in a lock-free ring; a writer thread of normal priority takes it from there and
/// encodes it. Nothing on the capture thread allocates, locks, logs or touches a file.
///
/// ## Files that survive a crash
/// The writer makes the file readable every quarter second (`RecordingEncoder.checkpoint`: WAV's
/// header rewritten with the length so far, M4A's finished fragments pushed out; FLAC, Ogg and
/// MP3 are streams), so a SIGKILL loses at most the last second. Files are created
/// O_EXCL|O_NOFOLLOW with mode 0600, never over an existing file. A full disk stops the
/// recording, completes the file with what fits, and says so (`.failed(.diskFull(…))`).
///
/// At `stop()` (or `maxDuration`) the writer thread rewrites a fragmented M4A as a standard
/// one (`RecorderSettings.container`), into a new file renamed over it; `stop()` returns after
/// that. When the rewrite fails (a full disk, a directory turned read-only) the fragmented file
/// stays, complete and readable, and the last event is `.failed(.file(…))`, whose line says so.
///
/// Events come on a serial queue of the recorder's, to `onEvent` and `events`, in order:
/// `started`, then `paused`, `resumed`, `overrun`, and one of `finished`, `discarded`, `failed`.
public final class Recorder: @unchecked Sendable {
    public let settings: RecorderSettings
    public let engine: SoundEngine?
    /// Events as an `AsyncStream`; it ends after the last event.
    public let events: AsyncStream<RecorderEvent>
    /// The meters about 20 times a second while capturing, for UIs; ends when the recording does.
    public let levels: AsyncStream<LevelReading>
    /// `recording`, `paused`, then `ended(last event)`: one value per change (as `isRecording`
    /// goes), delivered with the events on the recorder's queue; it ends after `ended`.
    public let states: AsyncStream<RecorderState>

    private let eventQueue = DispatchQueue(label: "sfx-recorder-events")
    private let eventContinuation: AsyncStream<RecorderEvent>.Continuation
    private let levelContinuation: AsyncStream<LevelReading>.Continuation
    private let stateContinuation: AsyncStream<RecorderState>.Continuation
    private let handler = Mutex<(@Sendable (RecorderEvent) -> Void)?>(nil)
    private let state = Mutex<State>(State())
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    /// How the recording is asked to end: an `Ending`'s raw value (0 while it runs).
    private let ending = Atomic<Int>(Ending.running.rawValue)

    /// How a recording ends: kept (`stop`, `maxDuration`) or deleted (`cancel`).
    private enum Ending: Int {
        case running = 0, keep = 1, delete = 2
    }
    /// Set once by `record()`; read from any thread.
    private let captureSlot = Mutex<CaptureLoop?>(nil)
    private var capture: CaptureLoop? { captureSlot.withLock { $0 } }
    /// Set by `record()` before the writer starts, cancelled by the writer.
    private let levelTimer = TimerSlot()

    private struct State {
        var started = false
        var finished = false
        var url: URL?
        var last: RecorderEvent?
    }

    /// Checks the settings (and that `engine` is given when there is a prompt). Nothing is opened
    /// until `record()`.
    public init(settings: RecorderSettings = RecorderSettings(), engine: SoundEngine? = nil) throws(RecorderError) {
        do { try settings.validate() } catch { throw .setting(error) }
        if settings.prompt != nil, engine == nil {
            throw .prompt("a prompt needs the SoundEngine to play it: Recorder(settings:engine:)")
        }
        self.settings = settings
        self.engine = engine
        (events, eventContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        (levels, levelContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(16))
        (states, stateContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        eventQueue.setSpecific(key: Self.eventQueueKey, value: true)
    }

    /// Called with every event, in order, on the recorder's event queue. Set it before `record()`.
    public var onEvent: (@Sendable (RecorderEvent) -> Void)? {
        get { handler.withLock { $0 } }
        set { handler.withLock { $0 = newValue } }
    }

    /// The file being (or last) recorded; nil before `record()`.
    public var url: URL? { state.withLock { $0.url } }

    /// Seconds recorded so far (pauses not counted).
    public var currentTime: Double {
        guard let capture else { return 0 }
        return Double(capture.framesRecorded.load(ordering: .acquiring)) / Double(capture.device.parameters.sampleRate)
    }

    /// Whether frames are going to the file now (started, not paused, not ended).
    public var isRecording: Bool {
        guard let capture, !state.withLock({ $0.finished }) else { return false }
        return capture.mode.load(ordering: .acquiring) == CaptureLoop.Mode.recording.rawValue
    }

    /// Recording or paused: `record()` called and the recording not ended.
    var isUnderway: Bool { capture != nil && !state.withLock { $0.finished } }

    /// Overruns so far (each recovered at once; the frames the device dropped are missing).
    public var overruns: Int { capture?.overruns.load(ordering: .relaxed) ?? 0 }

    /// Seconds of sound missing from the file at overruns (the capture thread late, the process
    /// stopped): from the clock, the time between the last read before each overrun and the
    /// first after it, less what that read brought. 0 when nothing was lost.
    public var missingSeconds: Double {
        guard let capture else { return 0 }
        return Double(capture.framesMissed.load(ordering: .relaxed)) / Double(capture.device.parameters.sampleRate)
    }

    /// Frames lost because the writer fell the ring's four seconds behind (a stalled disk); 0
    /// normally. The file then lacks them, as after an overrun.
    public var droppedFrames: Int { capture?.framesDropped.load(ordering: .relaxed) ?? 0 }

    /// Whether the capture thread got SCHED_FIFO (nil before it asked).
    public var realtimeGranted: Bool? {
        guard let status = capture?.realtimeStatus.load(ordering: .acquiring), status != 0 else { return nil }
        return status > 0
    }

    /// The kernel's id of the capture thread (for `chrt -p`, `top -H`); 0 before it runs.
    public var captureThreadID: Int32 { capture?.threadID.load(ordering: .acquiring) ?? 0 }

    /// The format the device agreed to (rate and channels are the file's); nil before `record()`.
    public var parameters: CaptureParameters? { capture?.device.parameters }

    /// Average power of `channel` over the last capture period, in dBFS (−160 … 0); see `LevelMeter`.
    public func averagePower(channel: Int) -> Float { capture?.meter.averagePower(channel: channel) ?? LevelMeter.floor }

    /// Peak power of `channel` with hold and decay, in dBFS (−160 … 0); see `LevelMeter`.
    public func peakPower(channel: Int) -> Float { capture?.meter.peakPower(channel: channel) ?? LevelMeter.floor }

    /// The default place for recordings: `$XDG_DATA_HOME/sfx/recordings` (`~/.local/share/…`).
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        xdgDirectory("XDG_DATA_HOME", default: ".local/share", environment: environment).appending(path: "sfx/recordings")
    }

    // MARK: Recording

    /// Plays the prompt (when set) and waits for it to end, opens the device, creates the file and
    /// starts capturing. Throws one line naming the device or file and the fix; after a throw
    /// there is no file.
    public func record() throws(RecorderError) {
        try begin(limit: settings.maxDuration)
    }

    /// Records as `record()` does and stops by itself after `duration` (AVAudioRecorder's
    /// `record(forDuration:)`): the file holds exactly round(duration × rate) frames, and the
    /// events are those of a `maxDuration` stop. A `maxDuration` shorter than `duration` wins.
    public func record(forDuration duration: Duration) throws(RecorderError) {
        guard duration > .zero, duration.seconds.isFinite else {
            throw .setting(SettingError(setting: "record(forDuration:)", value: "\(duration)", allowed: "a duration above 0"))
        }
        try begin(limit: settings.maxDuration.map { min($0, duration) } ?? duration)
    }

    private func begin(limit maxDuration: Duration?) throws(RecorderError) {
        let first = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started
        }
        guard first else { throw .alreadyStarted }
        if let prompt = settings.prompt, let engine { try playPrompt(prompt, engine: engine) }

        if settings.device == "default", settings.captureDevices is SystemCaptureDevices { try VirtualInput.engageIfAsked() }
        let device: any CaptureDevice
        do { device = try settings.captureDevices.open(settings.request) } catch { throw RecorderError.opening(error) }
        let parameters = device.parameters
        let encoding = RecordingEncoding(format: settings.format, sampleRate: parameters.sampleRate, channels: parameters.channels,
                                         bitRate: settings.bitRate, quality: settings.quality, container: settings.container)
        var encoder: any RecordingEncoder
        let url: URL
        do {
            (encoder, url) = try createFile(encoding)
        } catch {
            device.close()
            throw error
        }
        if !settings.voiceProcessing.isOff || settings.trimSilence {
            do {
                encoder = try VoiceEncoder(wrapping: encoder, processing: settings.voiceProcessing,
                                           trimSilence: settings.trimSilence, margin: settings.trimMargin)
            } catch {
                encoder.abandon()
                unlink(url.path)
                device.close()
                throw error
            }
        }
        let limit = maxDuration.map { Int(($0.seconds * Double(parameters.sampleRate)).rounded()) } ?? Int.max
        // Four seconds of slack for the writer (a slow disk, a busy machine).
        let ring = SampleRing(capacity: parameters.sampleRate * parameters.channels * 4)
        let capture = CaptureLoop(device: device, ring: ring, frameLimit: max(limit, 1), realtimePriority: settings.realtimePriority)
        captureSlot.withLock { $0 = capture }
        state.withLock { $0.url = url }
        send(.started(url))
        capture.start(mode: .recording)
        startLevels(capture.meter)
        let box = EncoderBox(encoder)
        Threads.start(name: "sfx-rec-writer") { [self] in
            write(capture: capture, ring: ring, encoder: box.encoder, url: url)
        }
    }

    /// Stops taking frames into the file (metering goes on); the file gets no gap for the pause.
    public func pause() {
        guard let capture, !state.withLock({ $0.finished }) else { return }
        if capture.mode.compareExchange(expected: CaptureLoop.Mode.recording.rawValue, desired: CaptureLoop.Mode.paused.rawValue,
                                        ordering: .acquiringAndReleasing).exchanged {
            send(.paused)
        }
    }

    /// Takes frames into the file again after `pause()`.
    public func resume() {
        guard let capture, !state.withLock({ $0.finished }) else { return }
        if capture.mode.compareExchange(expected: CaptureLoop.Mode.paused.rawValue, desired: CaptureLoop.Mode.recording.rawValue,
                                        ordering: .acquiringAndReleasing).exchanged {
            send(.resumed)
        }
    }

    /// Stops and completes the file (or removes it when shorter than `minDuration`). Returns once
    /// the file is complete and `onEvent` has been called with the last event (as
    /// AVAudioRecorder's delegate has been told when its `stop()` returns), with that event
    /// (`finished`, `discarded` or `failed`); nil when recording never started. Called from
    /// `onEvent` itself it cannot wait for that call, and returns before it.
    @discardableResult
    public func stop() -> RecorderEvent? {
        end(.keep)
    }

    /// Stops and deletes the file (`.discarded(url, "cancelled")`).
    @discardableResult
    public func cancel() -> RecorderEvent? {
        end(.delete)
    }

    /// Waits (up to `timeout`) for the recording to end by itself (`maxDuration`, a full disk, a
    /// lost device); returns the last event, once `onEvent` has had it, or nil on timeout.
    public func waitUntilFinished(timeout: Duration = .seconds(86_400)) -> RecorderEvent? {
        guard capture != nil else { return state.withLock { $0.last } }
        guard done.wait(timeout: .now() + timeout.seconds) == .success else { return nil }
        done.signal()
        flushEvents()
        return state.withLock { $0.last }
    }

    // MARK: Private

    private func end(_ how: Ending) -> RecorderEvent? {
        guard capture != nil else { return nil }
        _ = ending.compareExchange(expected: Ending.running.rawValue, desired: how.rawValue, ordering: .acquiringAndReleasing)
        wake.signal()
        done.wait()
        done.signal()
        flushEvents()
        return state.withLock { $0.last }
    }

    private static let eventQueueKey = DispatchSpecificKey<Bool>()

    /// Waits until the event queue has delivered what was sent before (the last event, sent
    /// before `done` is signalled); not from the event queue itself, which would wait for itself.
    private func flushEvents() {
        guard DispatchQueue.getSpecific(key: Self.eventQueueKey) == nil else { return }
        eventQueue.sync {}
    }

    private func playPrompt(_ prompt: SoundID, engine: SoundEngine) throws(RecorderError) {
        let ended = DispatchSemaphore(value: 0)
        let outcome = Mutex<PlayOutcome?>(nil)
        engine.play(prompt, group: .ui, priority: .high) { result in
            outcome.withLock { $0 = result }
            ended.signal()
        }
        guard ended.wait(timeout: .now() + 60) == .success else { throw .prompt("it did not end within 60 s") }
        let result = outcome.withLock { $0 }
        guard result == .finished else { throw .prompt(result.map { "\($0)" } ?? "no outcome") }
        // The completion comes when the mixer has rendered the last frame; the device still holds
        // up to a buffer of it.
        let wait = engine.metrics.latencyEstimate + settings.promptMargin
        Threads.sleep(seconds: wait.seconds)
    }

    /// Creates the file: `settings.url`, or the first free timestamped name in the directory.
    private func createFile(_ encoding: RecordingEncoding) throws(RecorderError) -> (any RecordingEncoder, URL) {
        if let url = settings.url {
            do { return (try RecordingFile.create(url, encoding: encoding), url) } catch let error as MediaError {
                throw .file(error)
            } catch { throw .file(MediaError(.failed(detail: "\(error)"), subject: url.path)) }
        }
        let directory = settings.directory ?? Self.defaultDirectory()
        do { try RecordingStore.prepare(directory) } catch let error as MediaError { throw .file(error) } catch {
            throw .file(MediaError(.failed(detail: "\(error)"), subject: directory.path))
        }
        let stem = RecordingStore.timestamp(Date())
        for n in 1...1000 {
            let url = directory.appending(path: (n == 1 ? stem : "\(stem)-\(n)") + "." + encoding.format.fileExtension)
            var st = stat()
            if lstat(url.path, &st) == 0 { continue }
            do { return (try RecordingFile.create(url, encoding: encoding), url) } catch let error as MediaError {
                if lstat(url.path, &st) == 0 { continue }     // taken meanwhile: the next name
                throw .file(error)
            } catch { throw .file(MediaError(.failed(detail: "\(error)"), subject: url.path)) }
        }
        throw .file(MediaError(.failed(detail: "1000 recordings already carry this second's name; remove some"), subject: directory.path))
    }

    /// The writer thread: drains the ring into the encoder, makes the file readable every 0.25 s,
    /// reports overruns, and ends the recording when asked, at the length limit, on a full disk
    /// or when the device is lost.
    private func write(capture: CaptureLoop, ring: SampleRing, encoder: any RecordingEncoder, url: URL) {
        let rate = Double(capture.device.parameters.sampleRate)
        let channels = capture.device.parameters.channels
        let chunk = 4096 * channels
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: chunk)
        defer { scratch.deallocate() }
        var lastCheckpoint = ContinuousClock.now
        var overrunsSeen = 0
        var failure: RecorderError?
        var writeError: (any Error)?
        var how = Ending.running
        func drain() throws {
            while true {
                let n = ring.read(into: scratch, count: chunk)
                if n == 0 { return }
                try encoder.append(UnsafeBufferPointer(start: scratch, count: n))
            }
        }
        while failure == nil {
            how = Ending(rawValue: ending.load(ordering: .acquiring)) ?? .keep
            let lost = capture.failure.load(ordering: .acquiring)
            if how == .running, capture.limitReached.load(ordering: .acquiring) { how = .keep }
            if how == .running, lost != 0 { failure = .deviceLost(device: settings.device, code: -lost) }
            if how != .running || failure != nil { capture.stop() }
            do {
                try drain()
                if ContinuousClock.now - lastCheckpoint >= .milliseconds(250) {
                    try encoder.checkpoint()
                    lastCheckpoint = .now
                }
            } catch {
                capture.stop()
                writeError = error
                failure = Self.writeFailure(error, url: url, seconds: Double(encoder.framesWritten) / rate)
            }
            let overruns = capture.overruns.load(ordering: .relaxed)
            if overruns != overrunsSeen {
                overrunsSeen = overruns
                send(.overrun(count: overruns))
            }
            if how != .running || failure != nil { break }
            _ = wake.wait(timeout: .now() + .milliseconds(20))
        }
        capture.device.close()
        levelTimer.cancel()
        // Voice processing holds the last frames, and trimSilence the silence after speech: out
        // before the file's length is taken.
        if how != .delete, failure == nil, let voice = encoder as? VoiceEncoder {
            do { try voice.flush() } catch {
                writeError = error
                failure = Self.writeFailure(error, url: url, seconds: Double(encoder.framesWritten) / rate)
            }
        }
        let seconds = Double(encoder.framesWritten) / rate
        let last: RecorderEvent
        if how == .delete {
            encoder.abandon()
            unlink(url.path)
            last = .discarded(url: url, reason: "cancelled")
        } else if failure == nil, let minimum = settings.minDuration, seconds < minimum.seconds {
            encoder.abandon()
            unlink(url.path)
            last = .discarded(url: url, reason: String(cFormat: "%.2f s is shorter than the minimum of %.2f s", seconds, minimum.seconds))
        } else {
            do {
                try encoder.finish()
            } catch {
                writeError = writeError ?? error
            }
            if let writeError {
                // What the finished file holds, as readers will see it (not what was captured).
                let kept = RecordingProbe(url)?.duration ?? seconds
                last = .failed(Self.writeFailure(writeError, url: url, seconds: kept))
            } else {
                last = failure.map { .failed($0) } ?? .finished(url: url, duration: seconds)
            }
        }
        state.withLock {
            $0.finished = true
            $0.last = last
        }
        send(last)
        done.signal()
    }

    private static func writeFailure(_ error: any Error, url: URL, seconds: Double) -> RecorderError {
        guard let error = error as? MediaError else { return .file(MediaError(.failed(detail: "\(error)"), subject: url.path)) }
        return error.reason == .diskFull ? .diskFull(url: url, seconds: seconds) : .file(error)
    }

    private func startLevels(_ meter: LevelMeter) {
        let timer = DispatchSource.makeTimerSource(queue: eventQueue)
        timer.schedule(deadline: .now() + .milliseconds(50), repeating: .milliseconds(50))
        let continuation = levelContinuation
        timer.setEventHandler { continuation.yield(meter.reading) }
        timer.setCancelHandler { continuation.finish() }
        timer.resume()
        levelTimer.set(timer)
    }

    private func send(_ event: RecorderEvent) {
        let handler = handler.withLock { $0 }
        let continuation = eventContinuation
        let states = stateContinuation
        eventQueue.async {
            handler?(event)
            continuation.yield(event)
            if let state = RecorderState(after: event) { states.yield(state) }
            switch event {
            case .finished, .discarded, .failed:
                continuation.finish()
                states.finish()
            default: break
            }
        }
    }
}

/// Hands the encoder to the writer thread, which alone uses it from then on.
private final class EncoderBox: @unchecked Sendable {
    let encoder: any RecordingEncoder
    init(_ encoder: any RecordingEncoder) { self.encoder = encoder }
}

/// The level timer, set by `record()` and cancelled by the writer thread.
private final class TimerSlot: @unchecked Sendable {
    private let lock = Mutex(())
    private var timer: DispatchSourceTimer?

    func set(_ timer: DispatchSourceTimer) { lock.withLock { _ in self.timer = timer } }
    func cancel() { lock.withLock { _ in timer?.cancel() } }
}
