import Glibc

/// The master bus's last stage: a peak limiter, then a soft clip.
///
/// The limiter follows the peak of each frame (the larger of its channels) with an envelope that
/// jumps up at once (instant attack) and decays exponentially (smooth release); while the
/// envelope is above `threshold` the frame is scaled by `threshold / envelope`, so the limited
/// output never exceeds the threshold. Signals that stay below the threshold pass through
/// multiplied by exactly 1. The soft clip after it is the identity up to the threshold and bends
/// anything above (only rounding can get there) smoothly towards, never past, 1. Samples that are
/// NaN or infinite are replaced by silence before they can reach the envelope.
struct Limiter {
    let threshold: Float
    /// Per-frame decay of the envelope: exp(−1 / release frames).
    let decay: Float
    private var envelope: Float = 0

    init(threshold: Float, releaseFrames: Int) {
        self.threshold = threshold
        decay = releaseFrames > 0 ? Float(exp(-1 / Double(releaseFrames))) : 0
    }

    /// Limits one frame of `channels` samples in place.
    @inline(__always)
    mutating func process(_ frame: UnsafeMutablePointer<Float>, channels: Int) {
        var peak: Float = 0
        for c in 0..<channels {
            if !frame[c].isFinite { frame[c] = 0 }
            peak = max(peak, abs(frame[c]))
        }
        envelope = max(peak, envelope * decay)
        let gain: Float = envelope > threshold ? threshold / envelope : 1
        for c in 0..<channels {
            frame[c] = softClip(frame[c] * gain)
        }
    }

    @inline(__always)
    private func softClip(_ x: Float) -> Float {
        let magnitude = abs(x)
        guard magnitude > threshold else { return x }
        let headroom = 1 - threshold
        let over = (magnitude - threshold) / headroom
        let bent = threshold + headroom * over / (1 + over)
        return x < 0 ? -bent : bent
    }
}
