import Glibc
import Synchronization

/// Whether the engine starts sounds by rewinding its device (`SoundEngine.Configuration.rewind`),
/// as `metrics.rewind` reports it.
public enum RewindStatus: Sendable, Equatable, CustomStringConvertible {
    /// Switched off by the configuration: the classic path (a sound starts at the next period
    /// rendered, behind what the buffer holds).
    case off
    /// On, and not yet tried on the device.
    case starting
    /// On: the device rewound and the rewind was seen to take effect (its delay dropped).
    case active
    /// On in the configuration, but the device could not rewind, so the engine fell back to the
    /// classic path (with the configured buffer) for the rest of the session.
    case unsupported(RewindRefusal)

    public var description: String {
        switch self {
        case .off: "rewind off"
        case .starting: "rewind starting"
        case .active: "rewind active"
        case .unsupported(let why): "rewind unsupported (\(why)), classic path"
        }
    }
}

/// Why a device could not be rewound.
public enum RewindRefusal: Sendable, Equatable, CustomStringConvertible {
    /// snd_pcm_rewindable() answered 0 with a full buffer.
    case nothingRewindable
    /// snd_pcm_rewindable() or snd_pcm_rewind() failed with this errno.
    case failed(errno: Int32)
    /// The device answered the rewind but its delay did not drop: it plays everything written
    /// all the same (as ALSA's `pulse` plugin does).
    case ignored

    public var description: String {
        switch self {
        case .nothingRewindable: "the device has nothing rewindable"
        case .failed(let code): "rewinding failed: \(String(cString: strerror(code)))"
        case .ignored: "the device accepted a rewind and ignored it"
        }
    }
}


extension OutputThread {
    /// Waits (at most `seconds`) until rewind mode has been tried on the device: active, or
    /// refused and the device reopened for the classic path. The probe runs as soon as the
    /// device's buffer is first full, a few milliseconds after the start, so an engine is
    /// handed out with its device settled (a sound server sees one stream, not a first one
    /// that is closed at once).
    func waitForRewindVerdict(seconds: Double) {
        let deadline = monotonicSeconds() + seconds
        while rewindState.load(ordering: .acquiring) == RewindCode.starting, monotonicSeconds() < deadline {
            usleep(1_000)
        }
    }

    /// `rewindState` as the engine reports it.
    var rewindStatus: RewindStatus {
        let code = rewindState.load(ordering: .acquiring)
        switch code {
        case RewindCode.off: return .off
        case RewindCode.starting: return .starting
        case RewindCode.active: return .active
        case RewindCode.nothingRewindable: return .unsupported(.nothingRewindable)
        case RewindCode.ignored: return .unsupported(.ignored)
        default: return .unsupported(.failed(errno: Int32(clamping: -code)))
        }
    }
}
