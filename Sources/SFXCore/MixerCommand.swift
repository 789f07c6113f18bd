/// Everything the mixer needs to start one voice.
///
/// The request holds its cue unretained: whoever sends it keeps the cue alive until the mixer
/// reports `.cueReleased(cue.key)` (see `MixerCommand.releaseCue`). Out-of-range values are
/// brought into range when the mixer applies the request: gains to 0…`Mixer.maximumGain`
/// (NaN counts as 0), pan to −1…1 (NaN counts as centre).
public struct PlayRequest: Sendable, BitwiseCopyable {
    /// The caller's name for the new voice.
    public var voice: VoiceID
    /// The sound to play, in the mixer's sample rate, mono or stereo.
    public var cue: Unmanaged<Cue>
    /// Linear gain: 1 plays the cue as recorded.
    public var gain: Float
    /// −1 is hard left, 0 centre, 1 hard right (see `Mixer` for the pan laws).
    public var pan: Float
    /// Extra repeats after the first play: 0 plays once, n plays n + 1 times, a negative number
    /// loops until stopped.
    public var loops: Int
    public var group: SoundGroup
    public var priority: VoicePriority
    /// The most voices of this cue that may sound at once; when a new one would exceed it, the
    /// oldest is stolen. 0 means no cap.
    public var maxInstances: Int

    /// A request for `cue`, which the caller keeps alive until the mixer releases it.
    public init(
        voice: VoiceID, cue: Cue, gain: Float = 1, pan: Float = 0, loops: Int = 0,
        group: SoundGroup = .effects, priority: VoicePriority = .normal, maxInstances: Int = 0
    ) {
        self.voice = voice
        self.cue = .passUnretained(cue)
        self.gain = gain
        self.pan = pan
        self.loops = loops
        self.group = group
        self.priority = priority
        self.maxInstances = maxInstances
    }
}

/// One instruction for the mixer, small and trivially copyable so it can cross a lock-free ring
/// (`SPSCRing<MixerCommand>`) to the real-time thread.
///
/// Fades and smoothing are counted in frames of the mixer's rate. A stop fades for at least
/// `Mixer.Configuration.startFadeFrames` so it never clicks. Gain, pan and mute changes glide
/// over `Mixer.Configuration.smoothingFrames`.
public enum MixerCommand: Sendable, BitwiseCopyable {
    /// Starts a voice. Exactly one terminal event (`.finished`, `.stopped`, `.stolen` or
    /// `.rejected`) will follow for it.
    case play(PlayRequest)
    /// Fades a voice out; it then reports `.stopped`. Unknown or finished voices are ignored.
    case stop(VoiceID, fadeFrames: Int)
    case setGain(VoiceID, Float)
    case setPan(VoiceID, Float)
    /// Stops every voice.
    case stopAll(fadeFrames: Int)
    /// Stops every voice of one group.
    case stopGroup(SoundGroup, fadeFrames: Int)
    /// Stops every voice of the cue with this key (fading over `stopFadeFrames`), rejects new
    /// plays of it, and reports `.cueReleased(key)` once no voice reads the cue any more; only
    /// then may the cue be freed.
    case releaseCue(UInt32)
    case setGroupGain(SoundGroup, Float)
    case setGroupMuted(SoundGroup, Bool)
    case setMasterGain(Float)
}

/// What the mixer reports back, drained after each render with `Mixer.drainEvents(_:)`.
public enum MixerEvent: Sendable, BitwiseCopyable, Hashable {
    /// The voice played to its end.
    case finished(VoiceID)
    /// The voice faded out after a stop, a stop of its group or of everything, or a cue release.
    case stopped(VoiceID)
    /// The voice gave its place to a newer or more important one.
    case stolen(VoiceID)
    /// The voice never started.
    case rejected(VoiceID, PlayRejection)
    /// No voice reads the cue with this key any more: it may be freed.
    case cueReleased(UInt32)

    /// The voice this event ends, or nil for `.cueReleased`.
    public var voice: VoiceID? {
        switch self {
        case .finished(let v), .stopped(let v), .stolen(let v), .rejected(let v, _): v
        case .cueReleased: nil
        }
    }
}

/// Why a play request was turned down.
public enum PlayRejection: UInt8, Sendable, BitwiseCopyable, Hashable, CustomStringConvertible {
    /// The cue's sample rate is not the mixer's: resample it at load time.
    case formatMismatch
    /// Every voice is busy with sounds of higher priority.
    case noVoiceAvailable
    /// Another sounding voice already has this `VoiceID`.
    case duplicateVoice
    /// The cue is being released (`MixerCommand.releaseCue`).
    case cueReleasing

    public var description: String {
        switch self {
        case .formatMismatch: "the cue's sample rate differs from the mixer's; resample it when loading"
        case .noVoiceAvailable: "all voices are busy with higher-priority sounds; raise the priority or maxVoices"
        case .duplicateVoice: "another playing voice has the same VoiceID; use a fresh ID per play"
        case .cueReleasing: "the cue is being released; load it again to play it"
        }
    }
}
