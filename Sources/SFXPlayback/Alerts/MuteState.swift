import SFXDevice

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
    /// The output read (an ALSA PCM name).
    public var device: String
    /// The output's Master (or PCM) control as read, when the output is not a sound server's.
    public var master: MasterState?
    /// What the sound server said, when the output goes to one that answered.
    public var server: SoundServerState?

    public init(reasons: [MuteReason], mixerAvailable: Bool, device: String = "default",
                master: MasterState? = nil, server: SoundServerState? = nil) {
        self.reasons = reasons
        self.mixerAvailable = mixerAvailable
        self.device = device
        self.master = master
        self.server = server
    }

    public var isMuted: Bool { !reasons.isEmpty }

    /// The one rule for whether sfx counts `device` as muted, which `SoundEngine.muteState()`
    /// (and so `alert`) and `sfx mute status` both follow: sfx's flag; when a sound server that
    /// answers is behind the device, the server's view (its sink muted or at zero volume, sfx's
    /// own stream muted or at zero volume, or the mute it remembers for sfx's next streams);
    /// otherwise the device's Master or PCM switch off or volume at zero; and no usable output
    /// (`deviceLost`).
    ///
    /// `outputOpen` says whether this process has the device open, as an engine has. When it
    /// has not and the server neither lists a stream of sfx's nor says what it will apply to
    /// one (PipeWire 0.3 through pipewire-pulse keeps its per-application mute to itself), the
    /// device is opened for a moment, without playing, so that the server sets up a stream as
    /// it would for an alert, and that stream is read. `master` reads the mixer (an engine's
    /// own, kept open); by default the device's is opened. Takes a round trip to a server (at
    /// most 500 ms when it does not answer): call it from an ordinary thread.
    public static func reading(output device: String, flag: MuteFlag, outputOpen: Bool, deviceLost: Bool = false,
                               master: (() -> MasterState?)? = nil) -> MuteState {
        var reasons: [MuteReason] = []
        if flag.isMuted { reasons.append(.flag) }
        var state = MuteState(reasons: [], mixerAvailable: false, device: device)
        if SoundServer.server(behind: device) != nil, var server = SoundServer.state(timeout: .milliseconds(500)) {
            if !outputOpen, server.stream == nil, server.restored == nil,
               let probe = try? PCMPlayback(PlaybackRequest(device: device, periodFrames: 512)) {
                server = SoundServer.state(timeout: .milliseconds(500)) ?? server
                probe.close()
            }
            reasons += server.silencingReasons.map { .soundServer(server: server.serverName, why: $0) }
            state.server = server
            state.mixerAvailable = true
        } else {
            let control = master.map { $0() } ?? (try? MixerControl(device: device).read())
            if let control {
                if control.switchOn == false { reasons.append(.mixerSwitchOff(control: control.control)) }
                if control.volume == 0 { reasons.append(.mixerVolumeZero(control: control.control)) }
            }
            state.master = control
            state.mixerAvailable = control != nil
        }
        if deviceLost { reasons.append(.noOutput) }
        state.reasons = reasons
        return state
    }

    public var description: String {
        let base = isMuted ? "muted: " + reasons.map(\.description).joined(separator: "; ") : "not muted"
        return mixerAvailable ? base : base + " (the output has no mixer control, so its switch and volume are not known)"
    }
}
