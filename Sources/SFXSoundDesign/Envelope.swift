/// A gain that changes over time, applied to a `Signal` with `shaped(_:)`.
///
/// - `struck`: what a struck bar, bell or string does — a short raised-cosine rise, then an
///   exponential decay that falls by 60 dB every `t60` seconds (`.infinity` holds the level).
/// - `gate`: a held note — raised-cosine rise over `attack`, `hold` at full level, a
///   raised-cosine fall over `release`, then silence. A zero attack starts at full level.
///
/// Raised-cosine ramps start and end with zero slope, so nothing clicks.
enum Envelope {
    case struck(attack: Double, t60: Double)
    case gate(attack: Double, hold: Double, release: Double)

    /// The gain `t` seconds from the start.
    func level(at t: Double) -> Double {
        switch self {
        case let .struck(attack, t60):
            // ln(1000) = 6.9078: the natural-log span of 60 dB.
            return Envelope.rise(t, over: attack) * ExactMath.exp(-6.907_755_278_982_137 * t / t60)
        case let .gate(attack, hold, release):
            let fall = t - attack - hold
            return Envelope.rise(t, over: attack) * (fall <= 0 ? 1 : 1 - Envelope.rise(fall, over: release))
        }
    }

    /// 0 → 1 along a raised cosine (sin², exactly 0 at the start) over `duration`; 1 afterwards.
    static func rise(_ t: Double, over duration: Double) -> Double {
        guard t < duration else { return 1 }
        let s = ExactMath.sine(turns: t / duration / 4)
        return s * s
    }
}
