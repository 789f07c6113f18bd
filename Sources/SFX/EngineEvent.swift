import SFXCore
import SFXDevice

/// How one play ended. Every play gets exactly one, delivered off the real-time thread.
public enum PlayOutcome: Sendable, Hashable, CustomStringConvertible {
    /// The sound played to its end (all its loops).
    case finished
    /// `Voice.stop`, `stopAll`, a group stop or `dispose` ended it.
    case stopped
    /// A newer or more important sound took its voice (max voices or the sound's instance cap).
    case stolen
    /// It never started; the reason says why and what to change.
    case rejected(String)

    public var description: String {
        switch self {
        case .finished: "finished"
        case .stopped: "stopped"
        case .stolen: "stolen"
        case .rejected(let why): "rejected: \(why)"
        }
    }
}

/// What the engine reports as it runs: on `SoundEngine.events` and to `SoundEngine.onEvent`.
public enum EngineEvent: Sendable, Equatable, CustomStringConvertible {
    /// The device ran dry and was restarted; `total` counts every xrun since the engine opened.
    case xrun(total: Int)
    /// The device disappeared (unplugged, disconnected, failed). The engine keeps mixing by the
    /// clock, so completions still arrive, and reopens the device when it comes back.
    case deviceLost(String)
    /// The device is back and playing again.
    case deviceRestored(PlaybackParameters)
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

    public var description: String {
        switch self {
        case .xrun(let total): "xrun (\(total) in all)"
        case .deviceLost(let why): "device lost: \(why)"
        case .deviceRestored(let p): "device restored: \(p)"
        case .deviceClosedWhenIdle: "device closed while idle"
        case .voiceStolen(let v): "\(v) stolen"
        case .realtimePriorityRefused(let why): "SCHED_FIFO refused: \(why)"
        case .alertUnheard(let why): "alert unheard: \(why)"
        case .deliveryBehind(let waiting): "\(waiting) completions and events wait for slow handlers"
        case .memoryLockRefused(let why): "memory lock refused: \(why)"
        case .eventsLost(let total): "\(total) reports of the real-time thread lost"
        }
    }
}

/// What the real-time thread sends back, beside the mixer's own events.
enum OutputNotice: Sendable, BitwiseCopyable {
    case mixer(MixerEvent)
    case xrun
    /// alsa-lib's negative errno.
    case deviceLost(Int32)
    case deviceRestored
    case closedWhenIdle
}
