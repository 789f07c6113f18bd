import FoundationEssentials
import Glibc

/// Tells speech from silence a 10 ms frame at a time, for `RecorderSettings.trimSilence`: a frame
/// is active when its level stands `margin` dB above the noise floor and above `threshold` dBFS.
/// The floor follows the quietest frames at once and rises slowly (2 dB a second), so a floor
/// learnt in a pause between words holds through the next words, and a room that gets noisier
/// is followed within seconds. It starts at the first frame's level, but no higher than
/// `initialFloor`: a recording that opens on speech keeps its first word. It runs after voice processing when that is on, where the
/// noise is already low.
///
/// (speexdsp's own detector is not used: see sfx_voice.c.)
struct VoiceActivity {
    /// dB above the floor a frame must be.
    var margin: Double = 15
    /// dBFS a frame must reach, however low the floor (digital silence, a muted input).
    var threshold: Double = -60
    /// dB the floor rises a frame when frames are louder than it (2 dB/s at 10 ms frames).
    var rise: Double = 0.02
    /// The highest the floor starts at, in dBFS.
    var initialFloor: Double = -50
    private(set) var floor: Double?

    /// Whether `frame` (interleaved, all channels) is speech; updates the floor.
    mutating func isSpeech(_ frame: UnsafeBufferPointer<Float>) -> Bool {
        var sum = 0.0
        for s in frame { sum += Double(s) * Double(s) }
        let level = max(10 * log10(sum / Double(max(frame.count, 1)) + 1e-20), -120)
        let current = floor ?? min(level, initialFloor)
        floor = level < current ? level : current + rise
        return level > max(current + margin, threshold)
    }
}
