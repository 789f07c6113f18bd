/// A stream's level at the frame being played, for a player's meters (AVAudioPlayer's
/// `averagePower(forChannel:)` and `peakPower(forChannel:)`).
///
/// The producer measures each chunk of `levelChunk` frames as it writes it (its peak and its sum
/// of squares per channel, into `levels`); a meter reads the chunks just before the released
/// frame — what the mixer has played, and in rewind mode what has passed the DAC — so the level
/// follows `currentTime`, not the reader's lookahead. The mixer never touches any of it. A read
/// races only with the producer writing chunks at least a ring ahead, in other slots.
extension StreamRing {
    /// Frames a measured chunk holds (5.3 ms at 48 kHz).
    public static let levelChunk = 256
    /// Chunks a meter reading spans (about 21 ms at 48 kHz).
    public static let meterWindowChunks = 4

    /// Adds `frames` frames from `source`, the ring's frames from `start` on, to their chunks'
    /// levels. Producer thread only.
    func measure(_ source: UnsafePointer<Float>, frames: Int, from start: Int) {
        let slotMask = levelSlots - 1
        for frame in 0..<frames {
            let absolute = start + frame
            let slot = levels + ((absolute / Self.levelChunk) & slotMask) * channels * 2
            if absolute % Self.levelChunk == 0 { slot.update(repeating: 0, count: channels * 2) }
            for channel in 0..<channels {
                let sample = source[frame * channels + channel]
                slot[channel * 2] = max(slot[channel * 2], abs(sample))
                slot[channel * 2 + 1] += sample * sample
            }
        }
    }

    /// The peak and the RMS (linear, 0 … 1 for full scale) of `channel` over the whole chunks
    /// played just before `frame` (at most `meterWindowChunks`); zeros before the first chunk
    /// has been played. `frame` is normally `releasedFrames`.
    public func level(channel: Int, before frame: Int) -> (peak: Float, rms: Float) {
        let channel = min(max(channel, 0), channels - 1)
        let last = min(frame, writtenFrames) / Self.levelChunk   // chunks wholly before `frame`
        let first = max(0, last - Self.meterWindowChunks)
        guard last > first else { return (0, 0) }
        var peak: Float = 0, squares: Float = 0
        for chunk in first..<last {
            let slot = levels + (chunk & (levelSlots - 1)) * channels * 2
            peak = max(peak, slot[channel * 2])
            squares += slot[channel * 2 + 1]
        }
        return (peak, (squares / Float((last - first) * Self.levelChunk)).squareRoot())
    }
}
