import SFX
import SFXDaemon

/// The options that place a sound in the world and filter it, for `sfx play` (`--at`) and
/// `sfx render` (`--at-position`, since its `--at` is a start time), declared once:
///
/// - a point `X,Y,Z` in world units: the listener is at the origin facing −z (x right, y up),
///   and a sound within 1 unit plays at full level, falling as 1/distance beyond (OpenAL's
///   inverse clamped model); it is panned by where it is (equal power), or rendered through the
///   HRTF set with `--hrtf`;
/// - one of `--lowpass`, `--highpass`, `--bandpass` HZ, with `--q` (0.7071 unless given).
enum WorldOptions {
    static let at = OptionSpec.option("at", value: "X,Y,Z", help: "Play at this point of the world: the listener is at the origin facing -z (x right, y up), full level within 1 unit, 1/distance beyond; panned by where it is.")
    static let atPosition = OptionSpec.option("at-position", value: "X,Y,Z", repeatable: true, help: "Where the sound of the same position is in the world (as sfx play --at: listener at the origin facing -z, x right, y up).")
    static let lowpass = NumberOption(spec: .option("lowpass", value: "HZ", help: "A low-pass filter at this frequency, 10 to 96000 (at most 0.45 × the rate in effect)."), limits: SettingLimits.filterCutoff)
    static let highpass = NumberOption(spec: .option("highpass", value: "HZ", help: "A high-pass filter at this frequency, 10 to 96000."), limits: SettingLimits.filterCutoff)
    static let bandpass = NumberOption(spec: .option("bandpass", value: "HZ", help: "A band-pass filter centred on this frequency, 10 to 96000 (bandwidth: the centre / --q)."), limits: SettingLimits.filterCutoff)
    static let q = NumberOption(spec: .option("q", value: "Q", help: "The filter's Q (resonance), 0.1 to 30 (default 0.7071, Butterworth)."), limits: SettingLimits.filterQ)
    static let reverb = OptionSpec.option("reverb", value: "PRESET", help: "Send the sounds to effect bus 0 running this reverb: \(WorldFields.presetNames).")
    static let hrtf = OptionSpec.flag("hrtf", help: "Render positional sounds through the default HRTF set (libmysofa's MIT KEMAR), for headphones.")

    static let filters: [(option: NumberOption, kind: FilterKind)] = [(lowpass, .lowPass), (highpass, .highPass), (bandpass, .bandPass)]
    /// `sfx play`'s options; `sfx render` has `atPosition` instead of `at`.
    static let playSpecs = [at] + filterSpecs + [reverb, hrtf]
    static let filterSpecs = filters.map(\.option.spec) + [q.spec]

    /// The filter the options ask for, or nil.
    static func filter(_ arguments: ParsedArguments) throws(UsageError) -> FilterSettings? {
        var chosen: [(FilterKind, Float, String)] = []
        for (option, kind) in filters {
            if let hz = try option.read(arguments) { chosen.append((kind, Float(hz), option.spec.name)) }
        }
        let q = try q.read(arguments)
        if chosen.count > 1 {
            throw UsageError(message: "give one of --lowpass, --highpass and --bandpass, not \(chosen.map { "--\($0.2)" }.joined(separator: " and "))", command: arguments.spec)
        }
        guard let (kind, cutoff, _) = chosen.first else {
            if q != nil { throw UsageError(message: "--q is the filter's Q: give --lowpass, --highpass or --bandpass HZ with it", command: arguments.spec) }
            return nil
        }
        return FilterSettings(kind: kind, cutoff: cutoff, q: Float(q ?? 0.7071))
    }

    /// `--reverb`'s preset, or nil.
    static func reverbPreset(_ arguments: ParsedArguments) throws(UsageError) -> (name: String, settings: ReverbSettings)? {
        guard let name = arguments.value(reverb) else { return nil }
        guard let settings = WorldFields.preset(named: name) else {
            throw UsageError(message: "invalid value '\(name)' for '--reverb': expected a preset, one of \(WorldFields.presetNames)", command: arguments.spec)
        }
        return (name, settings)
    }

    /// The bus `--reverb` runs on, and the level each sound sends it (all of it: the reverb's
    /// own gain sets how loud its tail is).
    static let reverbBus = 0
    /// How long a reverb sounds on after its input ends: until it has decayed by 96 dB (RT60 ×
    /// 96/60 after the pre-delay, the effect's idle law).
    static func tail(of settings: ReverbSettings) -> Double { Double(settings.preDelay + settings.decayTime * 96 / 60) }
    static let reverbSend: Float = 1

    /// A point typed as `X,Y,Z`, or a usage error naming the option and the form.
    static func point(_ text: String, option: String, spec: CommandSpec) throws(UsageError) -> Vector3 {
        guard let point = WorldFields.point(text) else {
            throw UsageError(message: "invalid value '\(text)' for '--\(option)': expected a point X,Y,Z (three numbers, such as 2,0,-1)", command: spec)
        }
        return point
    }

    /// `--at`'s point, or nil.
    static func position(_ arguments: ParsedArguments) throws(UsageError) -> Vector3? {
        try arguments.value(at).map { text throws(UsageError) in try point(text, option: at.name, spec: arguments.spec) }
    }

    /// `--hrtf` without a positional sound does nothing: said, rather than ignored.
    static func checkHRTF(_ arguments: ParsedArguments, positional: Bool, option: String) throws(UsageError) {
        if arguments.flag(hrtf), !positional {
            throw UsageError(message: "--hrtf renders positional sounds: give --\(option) X,Y,Z with it", command: arguments.spec)
        }
    }
}
