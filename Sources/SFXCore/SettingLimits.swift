/// The ranges of what a play, a voice, a group and the master accept, defined once. The engine
/// checks against them (`SoundEngine`, `Player`), the mixer clamps to them, and the C API
/// (SFXC), the daemon's messages (SFXDaemon) and the `sfx` command (SFXCommand) take the same
/// values, so that a setting one way into sfx takes, every other takes too. Where a way in
/// deliberately takes less, its entry is here too, with the reason.
public enum SettingLimits {
    /// Volume and gain, linear (1 plays as recorded): up to 16, +24 dB, for a quiet recording
    /// made loud; the mixer's limiter keeps the mix from clipping.
    public static let gain: ClosedRange<Float> = 0...16

    /// The `sfx` command's `--volume` and `--decibels`: up to 4, +12 dB. Less than `gain` on
    /// purpose: a factor typed at a terminal, whose mistakes (an extra digit) reach a loudspeaker
    /// at once, with no program in between to catch them; +12 dB is canberra-gtk-play's reach.
    /// Programs (the library, the C API, the daemon's messages) take all of `gain`.
    public static let commandGain: ClosedRange<Double> = 0...4

    /// Pan: -1 is left, 0 the centre, 1 right.
    public static let pan: ClosedRange<Float> = -1...1

    /// Playback rate, speed and pitch together (as SoundPool's setRate).
    public static let rate: ClosedRange<Float> = 0.5...2

    /// A stop's or a fade's length.
    public static let fade: ClosedRange<Duration> = .zero ... .seconds(60)

    /// `fade` in whole milliseconds, as the daemon's messages and the command's `--fade` give it.
    public static let fadeMilliseconds: ClosedRange<Int> = 0...60_000

    /// Extra repeats of a play: 0 plays once, -1 repeats until stopped.
    public static let loops: ClosedRange<Int> = -1...Int.max

    /// `loops` as text gives it (the daemon's messages, `sfx play --loops`): up to a million. A
    /// number read as text passes through a Double, which holds every whole number to a million
    /// exactly (and not every one up to `Int.max`); a million repeats of a 10 ms cue is almost
    /// three hours, beyond any sound's use, and `-1` is there for "until stopped".
    public static let textLoops: ClosedRange<Int> = -1...1_000_000

    /// A voice's priority (`VoicePriority.rawValue`): which voices give way when all are busy.
    public static let priority: ClosedRange<Int> = 0...255

    /// A cone's angles, in degrees (`Cone`).
    public static let coneAngle: ClosedRange<Float> = 0...360

    /// A cone's outer gain and the listener's gain beyond 1 are not OpenAL's: 0…1 (`Cone.outerGain`).
    public static let coneOuterGain: ClosedRange<Float> = 0...1

    /// A source's reference and maximum distance, in world units (`Source`).
    public static let distance: ClosedRange<Float> = 0...Float.greatestFiniteMagnitude

    /// A source's rolloff factor (OpenAL's `AL_ROLLOFF_FACTOR`, 0 turns attenuation off).
    public static let rolloff: ClosedRange<Float> = 0...1_000

    /// OpenAL's `AL_AIR_ABSORPTION_FACTOR`.
    public static let airAbsorption: ClosedRange<Float> = 0...10

    /// OpenAL's `AL_DOPPLER_FACTOR`: 0 turns doppler off.
    public static let dopplerFactor: ClosedRange<Float> = 0...100

    /// OpenAL's `AL_SPEED_OF_SOUND` and the length of a unit, in world units: more than 0.
    public static let speedOfSound: ClosedRange<Float> = 0.001...Float.greatestFiniteMagnitude
    public static let metersPerUnit: ClosedRange<Float> = 0.000_001...1_000_000

    /// A filter's cutoff in Hz (above 0.45 × the sample rate the mixer takes 0.45 × the rate),
    /// its resonance Q, a high shelf's slope, and its gain (`FilterSettings`).
    public static let filterCutoff: ClosedRange<Float> = 10...96_000
    public static let filterQ: ClosedRange<Float> = 0.1...30
    public static let shelfSlope: ClosedRange<Float> = 0.1...1
    public static let filterGain: ClosedRange<Float> = 0...1

    /// A voice's send level to an effect bus, linear, and the buses there are.
    public static let send: ClosedRange<Float> = 0...1
    public static let effectBus: ClosedRange<Int> = 0...3
}
