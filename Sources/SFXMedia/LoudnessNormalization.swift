import FoundationEssentials
import Glibc
import SFXCore

/// Bringing a sound to a target loudness when it is loaded, so that effects from mixed sources
/// play at one level.
///
/// ```swift
/// let coin = try engine.load(contentsOf: URL(filePath: "coin.ogg"), normalize: .standard)   // to −23 LUFS
/// ```
///
/// The laws: the cue is measured as `Loudness` measures (integrated loudness from 400 ms up,
/// the loudest 400 ms window below), then every sample is multiplied by one gain:
/// `target − loudness` dB, lowered when needed so that the true peak comes out at or under
/// `truePeakCeiling` (−1 dBTP): a sound whose peaks would pass the ceiling stays quieter than
/// the target rather than clip. A silent sound (nothing above −70 LUFS) cannot be normalised:
/// that is `MediaError.Reason.silent`.
public struct LoudnessNormalization: Sendable, Hashable {
    /// The loudness to bring sounds to, in LUFS.
    public var target: Double
    /// The highest true peak the gain may produce, in dBTP.
    public var truePeakCeiling: Double

    public init(target: Double = LoudnessNormalization.standardTarget, truePeakCeiling: Double = -1) {
        self.target = target
        self.truePeakCeiling = truePeakCeiling
    }

    /// −23 LUFS: EBU R128's programme target, between sfx's notification (−26) and alarm (−14)
    /// sounds.
    public static let standardTarget = -23.0
    /// To −23 LUFS, true peak at most −1 dBTP.
    public static let standard = LoudnessNormalization()

    /// The gain in dB that brings a sound measuring `loudness` to the target, limited by the
    /// true-peak ceiling. Throws `MediaError` (`.silent`) for silence.
    public func gain(for loudness: Loudness, subject: String) throws -> Double {
        guard let lufs = loudness.lufs, let truePeak = loudness.truePeak else {
            throw MediaError(.silent, subject: subject)
        }
        return min(target - lufs, truePeakCeiling - truePeak)
    }

    /// `cue` measured and scaled to the target: a new cue with the same name and format.
    public func apply(to cue: Cue, subject: String? = nil) throws -> Cue {
        let subject = subject ?? cue.name
        let loudness = try Loudness(interleaved: cue.samples, sampleRate: cue.format.sampleRate,
                                    channels: cue.format.channels, subject: subject)
        let dB = try gain(for: loudness, subject: subject)
        let linear = Float(pow(10, dB / 20))
        return Cue(name: cue.name, format: cue.format, interleaved: cue.samples.lazy.map { $0 * linear })
    }
}
