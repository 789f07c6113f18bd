import SFXCore
import SFXDevice

/// How one play ended. Every play gets exactly one, delivered on the engine's completion queue
/// (see `SoundEngine.play`), never on the caller's thread nor the real-time thread.
public enum PlayOutcome: Sendable, Hashable, CustomStringConvertible {
    /// The sound played to its end (all its loops).
    case finished
    /// `Voice.stop`, `stopAll`, a group stop or `dispose` ended it.
    case stopped
    /// A newer or more important sound took its voice (max voices or the sound's instance cap).
    case stolen
    /// It never started; the reason says why, and its description what to change.
    case rejected(RejectReason)

    public var description: String {
        switch self {
        case .finished: "finished"
        case .stopped: "stopped"
        case .stolen: "stolen"
        case .rejected(let why): "rejected: \(why)"
        }
    }
}

/// Why a play never started.
public enum RejectReason: Sendable, Hashable, CustomStringConvertible {
    /// A number given to `play` is out of range.
    case invalidSetting(SettingError)
    /// No sound has this id: it was never loaded, or it was disposed.
    case unknownSound(SoundID)
    /// The sound is being disposed.
    case soundDisposed
    /// Every voice is busy with sounds of higher priority.
    case outranked
    /// The engine was closed before the play.
    case engineClosed
    /// The output thread has not taken the commands queued before it (8,192 wait).
    case commandQueueFull
    /// An alert found the output muted (and vibrated instead, if it could).
    case muted(MuteState)
    /// The sound's format differs from the mixer's (a cue not made by this engine's library).
    case formatMismatch
    /// The voice id is already sounding (two plays with one `VoiceID`).
    case duplicateVoice
    /// The engine has no device and holds plays for it (`Configuration.whileNoDevice` is
    /// `.queue(limit:)`), and `limit` plays wait already; the text says why there is no device.
    case noDevice(String)
    /// A play at a future time (`play(_:at:)`) found the mixer's schedule full: at most
    /// `Mixer.scheduleCapacity` plays may wait for their time at once.
    case scheduleFull
    /// A `SoundEvent` was triggered again inside its cooldown.
    case cooldown
    /// A bank has no event of this name.
    case unknownEvent(String)

    /// The reason the mixer gave.
    init(_ rejection: PlayRejection) {
        switch rejection {
        case .formatMismatch: self = .formatMismatch
        case .noVoiceAvailable: self = .outranked
        case .duplicateVoice: self = .duplicateVoice
        case .cueReleasing: self = .soundDisposed
        case .scheduleFull: self = .scheduleFull
        }
    }

    public var description: String {
        switch self {
        case .invalidSetting(let error): error.description
        case .unknownSound(let id): SoundError.unknownID(id).description
        case .soundDisposed: PlayRejection.cueReleasing.description
        case .outranked: PlayRejection.noVoiceAvailable.description
        case .engineClosed: "the engine is closed"
        case .commandQueueFull: "the command queue is full: the output thread is not keeping up"
        case .muted(let state): "the output is muted: \(state)"
        case .formatMismatch: PlayRejection.formatMismatch.description
        case .duplicateVoice: PlayRejection.duplicateVoice.description
        case .scheduleFull: PlayRejection.scheduleFull.description
        case .unknownEvent(let name): "no event \"\(name)\" in the bank: check its name (sfx bank check lists them)"
        case .cooldown: "the event is in its cooldown: trigger it later, or shorten its cooldown"
        case .noDevice(let why): "no output device yet, and the plays held for it are at their limit (whileNoDevice .queue): \(why)"
        }
    }

    // MuteState is Equatable only: hash what equal reasons share.
    public func hash(into hasher: inout Hasher) { hasher.combine(description) }
}

/// What the engine reports as it runs: on `SoundEngine.events` and to `SoundEngine.onEvent`.
public enum EngineEvent: Sendable, Equatable, CustomStringConvertible {
    /// The device ran dry and was restarted; `total` counts every xrun since the engine opened.
    case xrun(total: Int)
    /// The device disappeared (unplugged, disconnected, failed). The engine keeps mixing by the
    /// clock, so completions still arrive, and reopens the device when it comes back.
    case deviceLost(String)
    /// The device is back and playing again, or, after `deviceUnavailable`, open for the first time.
    case deviceRestored(PlaybackParameters)
    /// The engine opened without its device (absent, busy, or behind a sound server that is not
    /// up yet): the text is the one-line reason and its fix. It mixes by the clock (or holds
    /// plays, with `Configuration.whileNoDevice`), tries the device again every second at most,
    /// and reports `deviceRestored` once it plays. Reported once, even to a handler or a stream
    /// made after the engine opened.
    case deviceUnavailable(String)
    /// Nothing played for the idle timeout: the device was closed so other programs can use it.
    /// The next play reopens it.
    case deviceClosedWhenIdle
    /// A voice was stolen for a newer or more important sound.
    case voiceStolen(VoiceID)
    /// The real-time thread could not get SCHED_FIFO; playback runs at normal priority.
    case realtimePriorityRefused(String)
    /// An alert could neither play nor vibrate; the text says why.
    case alertUnheard(String)
    /// Completions and events are waiting for slow handlers: `waiting` of them (reported at
    /// 1,024, then each time the count doubles). Sound is not affected; see `SoundEngine`.
    case deliveryBehind(waiting: Int)
    /// `Configuration.lockMemory` was asked for and `mlockall` refused; the text says why and
    /// what to change. The engine plays all the same.
    case memoryLockRefused(String)
    /// The real-time thread could not hand over some reports (never completions): `total`
    /// since the engine opened.
    case eventsLost(total: Int)
    /// A watched bank (`SoundEngine.loadBank`) changed on disk and was reloaded: its name.
    case bankReloaded(String)
    /// A watched bank changed on disk but has a problem: it keeps its last good version. The
    /// file, the line (0 when not known) and what is wrong.
    case bankRejected(file: String, line: Int, reason: String)

    public var description: String {
        switch self {
        case .xrun(let total): "xrun (\(total) in all)"
        case .deviceLost(let why): "device lost: \(why)"
        case .deviceRestored(let p): "device restored: \(p)"
        case .deviceUnavailable(let why): "no output device yet (sfx tries it again every second): \(why)"
        case .deviceClosedWhenIdle: "device closed while idle"
        case .voiceStolen(let v): "\(v) stolen"
        case .realtimePriorityRefused(let why): "SCHED_FIFO refused: \(why)"
        case .alertUnheard(let why): "alert unheard: \(why)"
        case .deliveryBehind(let waiting): "\(waiting) completions and events wait for slow handlers"
        case .memoryLockRefused(let why): "memory lock refused: \(why)"
        case .eventsLost(let total): "\(total) reports of the real-time thread lost"
        case .bankReloaded(let name): "bank \(name) reloaded"
        case .bankRejected(let file, let line, let reason): "bank \(BankError(file: file, line: line, reason: reason)) (the last good version stays)"
        }
    }
}
