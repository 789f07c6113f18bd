import FoundationEssentials
import Glibc
import Synchronization
import SFXCore

/// One play of a sound: stop it or change it while it sounds, or await how it ended. Calls on
/// a voice that has ended do nothing.
public struct Voice: Sendable, Hashable {
    public let id: VoiceID
    let handle: VoiceHandle
    private var engine: WeakEngine { handle.engine }

    init(id: VoiceID, engine: SoundEngine) {
        self.id = id
        handle = VoiceHandle(engine)
    }

    /// How the play ended, once it has: the outcome its completion gets, after the completion
    /// has run. Awaiting it does not keep the sound playing or stop it (cancelling the waiting
    /// task does not stop it either: call `stop`).
    ///
    /// ```swift
    /// let outcome = await engine.play(coin).outcome     // .finished, .stopped, .stolen or .rejected(why)
    /// ```
    public var outcome: PlayOutcome {
        get async { await handle.outcome() }
    }

    /// Fades the voice out over 5 ms; its completion says `.stopped`.
    public func stop() {
        guard let engine = engine.value else { return }
        engine.send(.stop(id, fadeFrames: engine.frames(SoundEngine.defaultFade)))
    }

    /// Fades the voice out over `fade` (0…60 s; the shortest fade is the 0.3 ms declick); its
    /// completion says `.stopped`.
    public func stop(fade: Duration) throws(SettingError) {
        try SettingError.check("fade", fade, in: SoundEngine.fades)
        guard let engine = engine.value else { return }
        engine.send(.stop(id, fadeFrames: engine.frames(fade)))
    }

    /// Changes the volume, 0…16, smoothly.
    public func setVolume(_ volume: Float) throws(SettingError) {
        try SoundEngine.checkGain("volume", volume)
        engine.value?.send(.setGain(id, volume))
    }

    /// Changes the pan, −1…1, smoothly.
    public func setPan(_ pan: Float) throws(SettingError) {
        try SoundEngine.checkPan(pan)
        engine.value?.send(.setPan(id, pan))
    }

    /// Pauses the voice: a short ramp to silence (no click), then it holds its place.
    public func pause() { engine.value?.send(.pause(id)) }

    /// Resumes a paused voice from where it was.
    public func resume() { engine.value?.send(.resume(id)) }

    /// Changes the rate, 0.5…2: speed and pitch together, as SoundPool's setRate (the voice reads
    /// its sound faster or slower, linearly interpolated); 2 halves the time left.
    public func setRate(_ rate: Float) throws(SettingError) {
        try SoundEngine.checkRate(rate)
        engine.value?.send(.setRate(id, rate))
    }

    public static func == (a: Voice, b: Voice) -> Bool { a.id == b.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// What a `Voice` shares with the engine: the engine, weakly, and the play's outcome once known.
final class VoiceHandle: Sendable {
    let engine: WeakEngine
    /// Frames a play at a time already past started after it (`Voice.lateFrames`).
    let lateFrames = Atomic<Int>(0)
    private let state = Mutex<(outcome: PlayOutcome?, waiting: [CheckedContinuation<PlayOutcome, Never>])>((nil, []))

    init(_ engine: SoundEngine) { self.engine = WeakEngine(engine) }

    /// Records the outcome (the first one only) and resumes whoever awaits it.
    func fulfil(_ outcome: PlayOutcome) {
        let waiting = state.withLock { state -> [CheckedContinuation<PlayOutcome, Never>] in
            guard state.outcome == nil else { return [] }
            state.outcome = outcome
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume(returning: outcome) }
    }

    func outcome() async -> PlayOutcome {
        await withCheckedContinuation { continuation in
            let known = state.withLock { state -> PlayOutcome? in
                if state.outcome == nil { state.waiting.append(continuation) }
                return state.outcome
            }
            if let known { continuation.resume(returning: known) }
        }
    }
}
