import SFXPlayback
import FoundationEssentials
import Glibc

/// What a phone does to a voice before it reaches the file: noise suppression, automatic gain
/// and a high-pass (`RecorderSettings.voiceProcessing`). `.off` (the default, right for music)
/// leaves the captured frames untouched; `.standard` is what a voice message wants.
///
/// The processing is speexdsp's preprocessor (libspeexdsp.so.1, loaded at the first recording
/// that uses it), run on the recorder's writer thread, never on the capture thread, 10 ms at a
/// time at the recording's own rate (speexdsp takes any rate: nothing is resampled), each channel
/// on its own. The high-pass is sfx's RBJ biquad (`Biquad`), before the preprocessor.
public struct VoiceProcessing: Sendable, Hashable {
    /// How much noise is taken out: the most a band of noise is attenuated.
    public enum NoiseSuppression: Sendable, Hashable, CaseIterable {
        case off, low, moderate, high, veryHigh

        /// The attenuation speexdsp is given, in dB (negative; 0 for `off`).
        public var attenuation: Int {
            switch self {
            case .off: 0
            case .low: -9
            case .moderate: -15
            case .high: -25
            case .veryHigh: -35
            }
        }
    }

    public var noiseSuppression: NoiseSuppression
    /// Automatic gain: the gain moves (slowly: about 12 dB a second up) so that speech lands at
    /// `targetLevel`.
    public var automaticGainControl: Bool
    /// The level speech is brought to by the automatic gain: the RMS of speech-active frames, in
    /// dBFS (−50 … −20; phones record voice at about −23).
    public var targetLevel: Double
    /// The most gain the automatic gain adds, in dB (0 … 40).
    public var maxGain: Double
    /// A second-order high-pass at `highPassCutoff` Hz before the rest: rumble, handling noise
    /// and hum out of the voice.
    public var highPass: Bool
    public var highPassCutoff: Double

    public init(noiseSuppression: NoiseSuppression = .high, automaticGainControl: Bool = true, targetLevel: Double = -23,
                maxGain: Double = 30, highPass: Bool = true, highPassCutoff: Double = 80) {
        self.noiseSuppression = noiseSuppression
        self.automaticGainControl = automaticGainControl
        self.targetLevel = targetLevel
        self.maxGain = maxGain
        self.highPass = highPass
        self.highPassCutoff = highPassCutoff
    }

    /// Nothing done: the file holds the frames as captured.
    public static let off = VoiceProcessing(noiseSuppression: .off, automaticGainControl: false, highPass: false)
    /// Noise suppression `.high`, automatic gain to −23 dBFS (at most +30 dB), high-pass at 80 Hz.
    public static let standard = VoiceProcessing()

    /// Whether nothing is done (the library is then not loaded).
    public var isOff: Bool { noiseSuppression == .off && !automaticGainControl && !highPass }

    /// speexdsp's AGC target (its loudness measure, 1 … 32768) for `targetLevel`: speech comes out
    /// of speexdsp's AGC about 19 dB under the level it is given, as an amplitude of full scale
    /// (measured with espeak-ng's speech, clean and noisy, at 48 kHz: VoiceProcessingTests).
    var speexLevel: Float {
        Float(min(32768, max(1, 32768 * pow(10, (targetLevel + Self.speexLevelOffset) / 20))))
    }
    static let speexLevelOffset = 19.0

    /// Throws the first knob out of range.
    func validate() throws(SettingError) {
        func check(_ name: String, _ value: Double, _ range: ClosedRange<Double>) throws(SettingError) {
            guard value.isFinite, range.contains(value) else {
                throw SettingError(setting: "voiceProcessing.\(name)", value: "\(value)",
                                   allowed: "a number from \(range.lowerBound) to \(range.upperBound)")
            }
        }
        try check("targetLevel", targetLevel, -50 ... -20)
        try check("maxGain", maxGain, 0...40)
        try check("highPassCutoff", highPassCutoff, 20...500)
    }
}
