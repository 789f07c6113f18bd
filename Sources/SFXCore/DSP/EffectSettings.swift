/// The settings of the effect buses' two processors, reverb and echo, with the reverb presets.
/// Settings are plain values: a bus changes effect or preset by getting a new `EffectProcessor`
/// made off the real-time thread (see `EffectProcessor`). Values out of range are brought into
/// range when the processor is made; the settings themselves keep what they were given.

/// A reverb: a feedback delay network whose tail decays by 60 dB in `decayTime` at mid
/// frequencies and in `decayTime × highFrequencyRatio` at 5 kHz (see `EffectProcessor`).
public struct ReverbSettings: Sendable, Hashable {
    /// RT60 at mid frequencies, seconds (0.1 ... 20): the time in which the tail falls by 60 dB.
    public var decayTime: Float
    /// High-frequency decay time ÷ decayTime (0.1 ... 2), as EFX's AL_REVERB_DECAY_HFRATIO (at 5 kHz).
    /// Above 1 the high frequencies ring longer than the mids; the loop gain is kept below 0.995
    /// at every frequency, which limits ratios above 1 for decay times of many seconds.
    public var highFrequencyRatio: Float
    /// Seconds before the first reflection (0 ... 0.3): the wet output begins `preDelay` after
    /// the input (to the frame), as EFX's AL_REVERB_REFLECTIONS_DELAY.
    public var preDelay: Float
    /// 0 ... 1: how quickly echoes thicken (input allpass diffusion). The four input allpasses
    /// have the coefficient 0.62 × diffusion; at 0 they are plain delays.
    public var diffusion: Float
    /// Linear output level of the wet signal (0 ... 1). Normalised so that at 1 the wet output of
    /// a unit impulse (mono input) carries, in each output channel, about the energy of that
    /// impulse (Σ y² ≈ 1 over the whole tail; within ±1 dB for the presets); the energy of the
    /// tail is gain².
    public var gain: Float

    /// EFX_REVERB_PRESET_ROOM: 0.40 s, HF ratio 0.83, reflections after 2 ms.
    public static let room = ReverbSettings(decayTime: 0.40, highFrequencyRatio: 0.83, preDelay: 0.002)
    /// EFX_REVERB_PRESET_CONCERTHALL: 3.92 s, HF ratio 0.70, reflections after 20 ms.
    public static let hall = ReverbSettings(decayTime: 3.92, highFrequencyRatio: 0.70, preDelay: 0.020)
    /// EFX_REVERB_PRESET_CAVE: 2.91 s, HF ratio 1.30 (highs ring longer), reflections after 15 ms.
    public static let cave = ReverbSettings(decayTime: 2.91, highFrequencyRatio: 1.30, preDelay: 0.015)
    /// EFX_REVERB_PRESET_LIVINGROOM: 0.50 s, HF ratio 0.10 (soft furnishings), reflections after 3 ms.
    public static let livingRoom = ReverbSettings(decayTime: 0.50, highFrequencyRatio: 0.10, preDelay: 0.003)
    /// EFX_REVERB_PRESET_BATHROOM: 1.49 s, HF ratio 0.54, reflections after 7 ms.
    public static let bathroom = ReverbSettings(decayTime: 1.49, highFrequencyRatio: 0.54, preDelay: 0.007)
    /// EFX_REVERB_PRESET_STONEROOM: 2.31 s, HF ratio 0.64, reflections after 12 ms.
    public static let stoneRoom = ReverbSettings(decayTime: 2.31, highFrequencyRatio: 0.64, preDelay: 0.012)
    /// EFX_REVERB_PRESET_ARENA: 7.24 s, HF ratio 0.33, reflections after 20 ms.
    public static let arena = ReverbSettings(decayTime: 7.24, highFrequencyRatio: 0.33, preDelay: 0.020)
    /// EFX_REVERB_PRESET_HANGAR: 10.05 s, HF ratio 0.23, reflections after 20 ms.
    public static let hangar = ReverbSettings(decayTime: 10.05, highFrequencyRatio: 0.23, preDelay: 0.020)
    /// EFX_REVERB_PRESET_UNDERWATER: 1.49 s, HF ratio 0.10, reflections after 7 ms.
    public static let underwater = ReverbSettings(decayTime: 1.49, highFrequencyRatio: 0.10, preDelay: 0.007)

    /// The presets above, by name, in the order listed (for menus and tests).
    public static let presets: [(name: String, settings: ReverbSettings)] = [
        ("room", .room), ("hall", .hall), ("cave", .cave), ("livingRoom", .livingRoom),
        ("bathroom", .bathroom), ("stoneRoom", .stoneRoom), ("arena", .arena), ("hangar", .hangar),
        ("underwater", .underwater),
    ]

    /// A reverb; the defaults are EFX's generic reverb's HF ratio, reflections delay, diffusion and gain.
    public init(decayTime: Float, highFrequencyRatio: Float = 0.83, preDelay: Float = 0.007, diffusion: Float = 1, gain: Float = 0.32) {
        self.decayTime = decayTime
        self.highFrequencyRatio = highFrequencyRatio
        self.preDelay = preDelay
        self.diffusion = diffusion
        self.gain = gain
    }
}

/// A ping-pong echo: taps every `delay` seconds, alternating left and right, each `feedback`
/// times the one before and low-passed by `damping` in the loop (see `EffectProcessor`).
public struct EchoSettings: Sendable, Hashable {
    /// Seconds between taps, 0.001 ... 2 (`EchoSettings.maximumDelay`); rounded to whole frames (at least 1).
    public var delay: Float
    /// Amplitude of each tap relative to the one before, 0 ... 0.95 (0: a single tap).
    public var feedback: Float
    /// 0 ... 1, level of the echoes: the first tap is `wet` times the input.
    public var wet: Float
    /// 0 ... 0.99, one-pole low-pass in the feedback loop (0 = none):
    /// y[n] = (1 − damping)·x[n] + damping·y[n−1], applied once per round trip.
    public var damping: Float
    /// The longest delay, seconds.
    public static let maximumDelay: Float = 2
    /// An echo; by default taps fall by 8 dB each, at half level, slightly darkened.
    public init(delay: Float, feedback: Float = 0.4, wet: Float = 0.5, damping: Float = 0.2) {
        self.delay = delay
        self.feedback = feedback
        self.wet = wet
        self.damping = damping
    }
}

/// What one effect bus runs.
public enum Effect: Sendable, Hashable {
    /// A reverb tail (wet only).
    case reverb(ReverbSettings)
    /// Echoes (wet only).
    case echo(EchoSettings)
}
