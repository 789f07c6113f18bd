import FoundationEssentials
import SFXSystem
import Glibc

/// A vibration: timed segments, each either on at some amplitude or off.
///
/// `VibrationPattern` is what `Vibrator.vibrate(_:)` plays. It is sfx's counterpart of iOS's
/// `kSystemSoundID_Vibrate` and Android's `VibrationEffect`:
///
/// ```swift
/// vibrator.vibrate()                                        // .default: one buzz of 400 ms
/// vibrator.vibrate(.click)                                  // a short named effect
/// vibrator.vibrate(try .waveform([200, 100, 200]))          // on 200 ms, off 100 ms, on 200 ms
/// vibrator.vibrate(try .waveform([300, 200], amplitudes: [0.5, 0], repeatIndex: 0))  // until cancelled
/// vibrator.vibrate(try VibrationPattern(parsing: "200,100,200", amplitude: "0.6"))  // from the command line
/// ```
///
/// Timings alternate on and off **starting with on** (Android's `createWaveform(timings, repeat)`
/// starts with an off delay; to start with a pause here, give amplitudes and make the first 0).
/// With amplitudes, every timing has its own amplitude from 0 (off) to 1 (full), as in Android's
/// `createWaveform(timings, amplitudes, repeat)`.
///
/// `repeatIndex` is −1 for a pattern that plays once, or the index of the segment that playback
/// returns to after the last one, forever, until the vibration is cancelled or replaced.
///
/// Limits, so that a typo cannot leave a device buzzing: each segment lasts 0…10 000 ms, a
/// pattern has at most 256 segments and at least one that is on, and the repeated part lasts at
/// least 10 ms.
public struct VibrationPattern: Sendable, Equatable, CustomStringConvertible {
    /// One step of a pattern: `amplitude` 0 is off, anything above 0 is on at that strength.
    public struct Segment: Sendable, Equatable {
        public var milliseconds: Int
        public var amplitude: Double

        public init(milliseconds: Int, amplitude: Double) {
            self.milliseconds = milliseconds
            self.amplitude = amplitude
        }

        public var isOn: Bool { amplitude > 0 }
    }

    /// The longest a single segment may last.
    public static let maximumSegmentMilliseconds = 10_000
    /// The most segments a pattern may have.
    public static let maximumSegmentCount = 256
    /// The shortest a repeated part may last (a shorter one would spin).
    public static let minimumRepeatMilliseconds = 10

    public let segments: [Segment]
    /// −1: play once; otherwise the segment index that playback loops back to.
    public let repeatIndex: Int

    /// Checks every limit listed above; `PatternError` says which one was broken and how to fix it.
    public init(segments: [Segment], repeatIndex: Int = -1) throws(PatternError) {
        guard !segments.isEmpty else { throw PatternError("the vibration pattern is empty — give on/off durations in ms, e.g. 200,100,200") }
        guard segments.count <= Self.maximumSegmentCount else {
            throw PatternError("the vibration pattern has \(segments.count) segments — give at most \(Self.maximumSegmentCount)")
        }
        for segment in segments {
            guard segment.milliseconds >= 0 else {
                throw PatternError("vibration duration \(segment.milliseconds) ms is negative — give 0…\(Self.maximumSegmentMilliseconds) ms")
            }
            guard segment.milliseconds <= Self.maximumSegmentMilliseconds else {
                throw PatternError("vibration duration \(segment.milliseconds) ms is too long — give at most \(Self.maximumSegmentMilliseconds) ms per segment")
            }
            guard segment.amplitude >= 0, segment.amplitude <= 1 else {
                throw PatternError("vibration amplitude \(segment.amplitude) is out of range — give 0…1")
            }
        }
        guard segments.contains(where: { $0.isOn && $0.milliseconds > 0 }) else {
            throw PatternError("the vibration pattern never switches on — give at least one non-zero duration with an amplitude above 0")
        }
        guard repeatIndex >= -1, repeatIndex < segments.count else {
            throw PatternError("repeat index \(repeatIndex) is out of range — give -1 (no repeat) or 0…\(segments.count - 1)")
        }
        if repeatIndex >= 0 {
            let repeated = segments[repeatIndex...].reduce(0) { $0 + $1.milliseconds }
            guard repeated >= Self.minimumRepeatMilliseconds else {
                throw PatternError("the repeated part lasts \(repeated) ms — make it at least \(Self.minimumRepeatMilliseconds) ms")
            }
        }
        self.segments = segments
        self.repeatIndex = repeatIndex
    }

    /// Android's `createWaveform`: `timings` alternate on/off starting with on at full strength,
    /// or, with `amplitudes` (one per timing, 0…1), each timing has its own strength.
    public static func waveform(_ timings: [Int], amplitudes: [Double]? = nil, repeatIndex: Int = -1) throws(PatternError) -> VibrationPattern {
        let strengths = amplitudes ?? timings.indices.map { $0 % 2 == 0 ? 1 : 0 }
        guard strengths.count == timings.count else {
            throw PatternError("\(strengths.count) amplitudes for \(timings.count) durations — give one amplitude per duration, or one for all")
        }
        let segments = zip(timings, strengths).map { Segment(milliseconds: $0, amplitude: $1) }
        return try VibrationPattern(segments: segments, repeatIndex: repeatIndex)
    }

    /// Parses command-line text: a named effect (`default`, `click`, `tick`, `double-click`,
    /// `heavy-click`) or on/off durations in ms such as `"200,100,200"`.
    ///
    /// `amplitude` is one value for every on segment (`"0.6"`) or one value per duration
    /// (`"1,0,0.5"`); `repeatIndex` is as in `waveform`. Each error is one line naming the bad part.
    public init(parsing text: String, amplitude: String? = nil, repeatIndex: Int = -1) throws(PatternError) {
        let trimmed = text.trimmed
        guard !trimmed.isEmpty else { throw PatternError("the vibration pattern is empty — give on/off durations in ms, e.g. 200,100,200") }
        if amplitude == nil, repeatIndex == -1, let named = Self.named(trimmed) {
            self = named
            return
        }
        let timings = try Self.numbers(in: trimmed, what: "duration") { Int($0) }
        var amplitudes: [Double]?
        if let amplitude {
            let values = try Self.numbers(in: amplitude, what: "amplitude") { Double($0) }
            amplitudes = values.count == 1
                ? timings.indices.map { $0 % 2 == 0 ? values[0] : 0 }
                : values
        }
        self = try Self.waveform(timings, amplitudes: amplitudes, repeatIndex: repeatIndex)
    }

    private static func numbers<Number>(in text: String, what: String, _ convert: (String) -> Number?) throws(PatternError) -> [Number] {
        var numbers: [Number] = []
        for field in text.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = field.trimmed
            guard let number = convert(trimmed) else {
                let shown = trimmed.isEmpty ? "an empty field" : "'\(trimmed)'"
                let example = what == "duration" ? "200,100,200" : "0.5 or 1,0,0.5"
                throw PatternError("vibration \(what) \(shown) in '\(text)' is not a number — write e.g. \(example)")
            }
            numbers.append(number)
        }
        return numbers
    }

    /// One buzz of 400 ms at full strength, like iOS's `kSystemSoundID_Vibrate`.
    public static let `default` = fixed([Segment(milliseconds: 400, amplitude: 1)])
    /// A crisp, short tap.
    public static let click = fixed([Segment(milliseconds: 20, amplitude: 1)])
    /// A lighter, shorter tap than `click`.
    public static let tick = fixed([Segment(milliseconds: 10, amplitude: 0.5)])
    /// Two clicks in quick succession.
    public static let doubleClick = fixed([
        Segment(milliseconds: 20, amplitude: 1), Segment(milliseconds: 80, amplitude: 0),
        Segment(milliseconds: 20, amplitude: 1),
    ])
    /// A longer, stronger tap than `click`.
    public static let heavyClick = fixed([Segment(milliseconds: 50, amplitude: 1)])

    /// The named effects, by the name the command line uses.
    public static let namedEffects: [(name: String, pattern: VibrationPattern)] = [
        ("default", .default), ("click", .click), ("tick", .tick),
        ("double-click", .doubleClick), ("heavy-click", .heavyClick),
    ]

    /// The named effect called `name`, or nil.
    public static func named(_ name: String) -> VibrationPattern? {
        namedEffects.first { $0.name == name.lowercased() }?.pattern
    }

    private static func fixed(_ segments: [Segment]) -> VibrationPattern {
        // The built-in effects are within every limit; a failure here is a mistake in this file.
        try! VibrationPattern(segments: segments)
    }

    /// Durations as `"200,100,200"`; the form `SFX_VIBRATE_PATTERN` carries.
    public var timingsText: String { segments.map { String($0.milliseconds) }.joined(separator: ",") }
    /// Amplitudes as `"1,0,1"`; the form `SFX_VIBRATE_AMPLITUDE` carries.
    public var amplitudesText: String { segments.map { Self.format($0.amplitude) }.joined(separator: ",") }
    /// The length of one pass through the pattern, in ms.
    public var totalMilliseconds: Int { segments.reduce(0) { $0 + $1.milliseconds } }

    public var description: String {
        let repeatText = repeatIndex >= 0 ? ", repeat from \(repeatIndex)" : ""
        return "\(timingsText) ms at \(amplitudesText)\(repeatText)"
    }

    private static func format(_ amplitude: Double) -> String {
        amplitude == amplitude.rounded() ? String(Int(amplitude)) : String(amplitude)
    }

    /// The segments in playback order: once through, then from `repeatIndex` forever.
    var playbackOrder: some Sequence<Segment> {
        var index = 0
        return AnyIterator { [segments, repeatIndex] () -> Segment? in
            if index == segments.count {
                guard repeatIndex >= 0 else { return nil }
                index = repeatIndex
            }
            defer { index += 1 }
            return segments[index]
        }
    }
}

/// Why a vibration pattern was refused: one line naming the bad part and the fix.
public struct PatternError: Error, Equatable, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
