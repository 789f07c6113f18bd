/// Why the output counts as muted, as `SoundEngine.muteState()` reports it.
public enum MuteReason: Sendable, Hashable, CustomStringConvertible {
    /// sfx's own flag (`sfx mute on`).
    case flag
    /// The output's mixer control (Master or PCM) has its playback switch off.
    case mixerSwitchOff(control: String)
    /// The output's mixer control is at its minimum volume.
    case mixerVolumeZero(control: String)
    /// There is no usable output: the device is gone.
    case noOutput
    /// The sound server the output goes to silences sfx: the sink, or sfx's own stream, muted
    /// or at zero volume (`why`).
    case soundServer(server: String, why: String)

    public var description: String {
        switch self {
        case .flag: "sfx's mute flag is on (`sfx mute off` clears it)"
        case .mixerSwitchOff(let control): "the output's \(control) switch is off"
        case .mixerVolumeZero(let control): "the output's \(control) volume is at zero"
        case .noOutput: "there is no usable output device"
        case .soundServer(let server, let why): "muted at the sound server (\(server)): \(why)"
        }
    }
}

/// Whether the output is muted, and every reason it is.
public struct MuteState: Sendable, Equatable, CustomStringConvertible {
    public var reasons: [MuteReason]
    /// False when the device has no mixer control: then only the flag and the device's presence count.
    public var mixerAvailable: Bool

    public var isMuted: Bool { !reasons.isEmpty }

    public var description: String {
        let base = isMuted ? "muted: " + reasons.map(\.description).joined(separator: "; ") : "not muted"
        return mixerAvailable ? base : base + " (the output has no mixer control, so its switch and volume are not known)"
    }
}
