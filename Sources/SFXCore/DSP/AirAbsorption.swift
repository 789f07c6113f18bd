#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// OpenAL's AL_AIR_ABSORPTION_FACTOR, as OpenAL Soft computes it: a high-frequency gain of
/// 0.99426^(factor × distance × metersPerUnit) (about −0.05 dB per metre at 5 kHz), applied by a
/// high shelf at 5 kHz with slope 1.
///
/// OpenAL Soft's shelf takes the gain at its reference frequency, the shelf's midpoint, and its
/// plateau above is the square of that. `FilterSettings.highShelf` takes the plateau, so
/// `filter(distance:factor:metersPerUnit:)` asks for a plateau of gain², which puts exactly
/// `highFrequencyGain` at 5 kHz — the same filter as OpenAL Soft's (with its floor: at least
/// −60 dB at 5 kHz, −120 dB above).
///
/// ```swift
/// voiceFilter.set(AirAbsorption.filter(distance: 100, factor: 1))   // −5 dB at 5 kHz
/// ```
public enum AirAbsorption {
    /// Hz: the shelf's midpoint, where the gain is `highFrequencyGain` (OpenAL Soft's
    /// LowPassFreqRef).
    public static let referenceFrequency: Float = 5_000

    /// The gain per metre at the reference frequency, linear (AL_AIR_ABSORPTION_GAINHF,
    /// −0.05 dB).
    public static let gainPerMetre: Float = 0.99426

    /// 0.99426^(factor × distance × metersPerUnit), linear, in 0 … 1: 1 for a factor of 0
    /// (OpenAL's default) or a distance of 0. Negative or NaN products count as 0; factor is
    /// meant to be 0 … 10 (OpenAL's range). `distance` is in world units and is what OpenAL Soft
    /// feeds it: (clamped distance − reference distance) × rolloff factor, and only when the
    /// clamped distance exceeds the reference distance.
    public static func highFrequencyGain(distance: Float, factor: Float, metersPerUnit: Float = 1) -> Float {
        let metres = Double(factor) * Double(distance) * Double(metersPerUnit)
        guard metres > 0 else { return 1 }
        return Float(pow(Double(gainPerMetre), metres))
    }

    /// `.highShelf(cutoff: 5000, gain: g², slope: 1)` with g = `highFrequencyGain(…)`: unity
    /// below 5 kHz, g at 5 kHz, g² towards Nyquist.
    public static func filter(distance: Float, factor: Float, metersPerUnit: Float = 1) -> FilterSettings {
        let g = highFrequencyGain(distance: distance, factor: factor, metersPerUnit: metersPerUnit)
        return .highShelf(cutoff: referenceFrequency, gain: g * g, slope: 1)
    }
}
