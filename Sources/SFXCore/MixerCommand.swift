import Glibc

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
    /// The fade-in, in frames: the envelope rises linearly from 0 to 1 over
    /// max(`fadeInFrames`, `Mixer.Configuration.startFadeFrames`).
    public var fadeInFrames: Int
    /// Playback rate, 0.5…2 (1 as recorded); see `Mixer` on rate.
    public var rate: Float
    /// Where the voice is in the game's world; nil (the default) plays it as it is, panned by
    /// `pan`. A positional voice ignores `pan` (see `Mixer` on positional voices).
    public var source: Source?
    /// A filter on the voice from its first frame (low-pass for occlusion, …), or nil.
    public var filter: FilterSettings?
    /// Send levels to the effect buses 0…3 (linear, 0…1): how much of the voice (after its
    /// gains and filters) each bus's effect gets.
    public var sends: SIMD4<Float>

    /// A request for `cue`, which the caller keeps alive until the mixer releases it.
    public init(
        voice: VoiceID, cue: Cue, gain: Float = 1, pan: Float = 0, loops: Int = 0,
        group: SoundGroup = .effects, priority: VoicePriority = .normal, maxInstances: Int = 0,
        fadeInFrames: Int = 0, rate: Float = 1, source: Source? = nil, filter: FilterSettings? = nil,
        sends: SIMD4<Float> = .zero
    ) {
        self.voice = voice
        self.cue = .passUnretained(cue)
        self.gain = gain
        self.pan = pan
        self.loops = loops
        self.group = group
        self.priority = priority
        self.maxInstances = maxInstances
        self.fadeInFrames = fadeInFrames
        self.rate = rate
        self.source = source
        self.filter = filter
        self.sends = sends
    }
}

/// Everything the mixer needs to start a streaming voice: one that plays frames a producer
/// thread writes into a `StreamRing` as it decodes (a long file, a download), rather than a cue.
///
/// The ring must be in the mixer's sample rate and channel count. The request holds it
/// unretained: the sender keeps it alive until the voice's terminal event. The voice reads from
/// frame 0 of the ring and finishes when it reaches the ring's end (`StreamRing.finish()`); a
/// frame not yet written plays as silence and counts an underrun, and the voice goes on.
public struct StreamRequest: Sendable, BitwiseCopyable {
    public var voice: VoiceID
    public var stream: Unmanaged<StreamRing>
    public var gain: Float
    public var pan: Float
    public var group: SoundGroup
    public var priority: VoicePriority
    /// See `PlayRequest.fadeInFrames`.
    public var fadeInFrames: Int
    /// See `PlayRequest.rate`.
    public var rate: Float
    /// Starts the voice paused (silent, its cursor held) until `.resume`.
    public var paused: Bool
    /// See `PlayRequest.source`. A positional stream is never made virtual.
    public var source: Source?
    /// A crossfade: this playing voice fades out over `fadeInFrames` as the new one fades in,
    /// both on the same frames and both equal-power (gains cos and sin of one angle), and it ends
    /// reporting `.stopped` once silent. Applied in the same block as the start, so sample-aligned.
    public var crossfadeFrom: VoiceID?

    public init(
        voice: VoiceID, stream: StreamRing, gain: Float = 1, pan: Float = 0, group: SoundGroup = .music,
        priority: VoicePriority = .high, fadeInFrames: Int = 0, rate: Float = 1, paused: Bool = false,
        source: Source? = nil
    ) {
        self.voice = voice
        self.stream = .passUnretained(stream)
        self.gain = gain
        self.pan = pan
        self.group = group
        self.priority = priority
        self.fadeInFrames = fadeInFrames
        self.rate = rate
        self.paused = paused
        self.source = source
    }
}

/// One group lowering another while it plays, as AVAudioSession's duckOthers: while any voice of
/// `trigger` plays (not paused), the `target` group's gain is multiplied by `gain`, reached over
/// `attackFrames`, and restored over `releaseFrames` once no voice of `trigger` plays. A target
/// ducked by several triggers takes the lowest gain. A gain of 1 removes the rule.
public struct Ducking: Sendable, BitwiseCopyable, Hashable {
    public var trigger: SoundGroup
    public var target: SoundGroup
    /// Linear gain while ducked, 0…1.
    public var gain: Float
    public var attackFrames: Int
    public var releaseFrames: Int

    public init(trigger: SoundGroup, target: SoundGroup, gain: Float, attackFrames: Int, releaseFrames: Int) {
        self.trigger = trigger
        self.target = target
        self.gain = gain
        self.attackFrames = attackFrames
        self.releaseFrames = releaseFrames
    }

    /// The default: alerts lower music by 12 dB, over 20 ms, and give it back over 300 ms.
    public static func alertsDuckMusic(sampleRate: Int) -> Ducking {
        Ducking(trigger: .alerts, target: .music, gain: Float(pow(10.0, -12.0 / 20)),
                attackFrames: sampleRate / 50, releaseFrames: sampleRate * 3 / 10)
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
    /// Starts a voice on an exact frame of the mixer's output (`Mixer.frameTime`), inside a
    /// render block if need be. A frame already rendered starts it at once and reports
    /// `.late(voice, frames:)` first; a frame ahead waits in the mixer's schedule, which holds
    /// `Mixer.scheduleCapacity` plays (beyond, it is rejected with `.scheduleFull`). A stop of
    /// the voice, its group or everything, or a release of its cue, cancels it while it waits.
    case playAt(PlayRequest, frame: Int)
    /// `.playAt` for a streaming voice.
    case playStreamAt(StreamRequest, frame: Int)
    /// Starts the streaming voice of `request` as a crossfade from `request.crossfadeFrom` (a
    /// streaming voice), on the frame that makes the fade (`fadeInFrames`) end on the last frame
    /// of that voice's stream: the stream's end once its producer has finished, else
    /// `expectedEnd` (its ring frame count as the file's length gives it; `Int.max`: wait for the
    /// producer). The wait follows the old voice's read position frame by frame, through its
    /// rate, pauses and underruns. Too close to the end for the whole fade (or the end known
    /// late), the fade is what is left; the old voice gone, the new one starts at once with the
    /// start fade alone. It waits in the schedule as `.playAt` does (and counts in it).
    case crossfadeAtEnd(StreamRequest, expectedEnd: Int)
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
    /// Starts a streaming voice (see `StreamRequest`); one terminal event follows, as for `.play`.
    case playStream(StreamRequest)
    /// Ramps a voice to silence over `smoothingFrames` and holds its position until `.resume`.
    case pause(VoiceID)
    /// Ramps a paused voice back in, from where it was.
    case resume(VoiceID)
    /// Changes a voice's rate, 0.5…2, at once (see `Mixer` on rate).
    case setRate(VoiceID, Float)
    /// Pauses or resumes every voice of one group: the group ramps to silence and its voices hold
    /// their positions; voices started meanwhile wait too.
    case setGroupPaused(SoundGroup, Bool)
    /// Pauses or resumes everything (SoundPool's autoPause/autoResume).
    case setAllPaused(Bool)
    /// Adds or replaces the ducking rule of `trigger` (see `Ducking`).
    case setDucking(Ducking)
    /// Moves or turns the listener; positional voices follow at the next spatial update.
    case setListener(Listener)
    /// Changes the doppler factor, the speed of sound or the length of a unit.
    case setWorld(SpatialWorld)
    /// Makes a voice positional with these properties (or changes them all).
    case setSource(VoiceID, Source)
    /// Moves a positional voice (a voice that is not positional ignores it).
    case setPosition(VoiceID, Vector3, velocity: Vector3)
    /// Changes one property of a positional voice's source (a voice that is not positional ignores it).
    case changeSource(VoiceID, SourceChange)
    /// Puts a filter on a voice, or glides it to new settings; nil takes it off (it first glides
    /// to an open low-pass, so it never clicks).
    case setFilter(VoiceID, FilterSettings?)
    /// The same for a group's bus: everything the group plays goes through it.
    case setGroupFilter(SoundGroup, FilterSettings?)
    /// Puts an effect on bus `bus` (0 ..< `Mixer.Configuration.effectBuses`), returning into
    /// `returnGroup`, or (nil) takes the bus's effect off. The processor is held unretained: the
    /// sender keeps it alive until the mixer reports `.effectReleased(key)` for it, which it does
    /// when the processor is replaced or removed (once no rewind can bring it back).
    case setEffect(bus: Int, processor: EffectReference?, returnGroup: SoundGroup)
    /// Changes a voice's send level to one bus, gliding.
    case setSend(VoiceID, bus: Int, level: Float)
}

/// An effect processor on its way to the mixer: the processor, unretained, and the key its
/// `.effectReleased` will carry.
public struct EffectReference: Sendable, BitwiseCopyable {
    public var processor: Unmanaged<EffectProcessor>
    public var key: UInt32

    public init(_ processor: EffectProcessor, key: UInt32) {
        self.processor = .passUnretained(processor)
        self.key = key
    }
}

/// One property of a positional voice's `Source`, for `MixerCommand.changeSource`.
public enum SourceChange: Sendable, BitwiseCopyable {
    case position(Vector3)
    case velocity(Vector3)
    /// The cone and the direction the source faces (zero: no direction, the cone has no effect).
    case cone(Cone, direction: Vector3)
    case relative(Bool)
    case distance(DistanceModel, referenceDistance: Float, maximumDistance: Float, rolloffFactor: Float)
    case airAbsorption(Float)

    /// `source` with this change made.
    public func applied(to source: Source) -> Source {
        var s = source
        switch self {
        case .position(let p): s.position = p
        case .velocity(let v): s.velocity = v
        case .cone(let cone, let direction):
            s.cone = cone
            s.direction = direction
        case .relative(let relative): s.relative = relative
        case .distance(let model, let reference, let maximum, let rolloff):
            s.distanceModel = model
            s.referenceDistance = reference
            s.maximumDistance = maximum
            s.rolloffFactor = rolloff
        case .airAbsorption(let factor): s.airAbsorptionFactor = factor
        }
        return s.clamped
    }
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
    /// A play at a frame already rendered (`MixerCommand.playAt`) started this many frames
    /// after it. Not a terminal event: the voice plays on and ends as any other.
    case late(VoiceID, frames: Int)
    /// No voice reads the cue with this key any more: it may be freed.
    case cueReleased(UInt32)
    /// The effect processor sent with this key is no longer used: it may be freed.
    case effectReleased(UInt32)

    /// The voice this event ends, or nil for `.cueReleased`.
    public var voice: VoiceID? {
        switch self {
        case .finished(let v), .stopped(let v), .stolen(let v), .rejected(let v, _): v
        case .cueReleased, .effectReleased, .late: nil
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
    /// A play at a future frame found the mixer's schedule full (`Mixer.scheduleCapacity`).
    case scheduleFull

    public var description: String {
        switch self {
        case .formatMismatch: "the cue's sample rate differs from the mixer's; resample it when loading"
        case .noVoiceAvailable: "all voices are busy with higher-priority sounds; raise the priority or maxVoices"
        case .duplicateVoice: "another playing voice has the same VoiceID; use a fresh ID per play"
        case .cueReleasing: "the cue is being released; load it again to play it"
        case .scheduleFull: "\(Mixer.scheduleCapacity) plays at future times wait already; schedule fewer ahead, or nearer their time"
        }
    }
}
