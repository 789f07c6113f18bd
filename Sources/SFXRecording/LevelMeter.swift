import SFXPlayback
import Glibc
import Synchronization

/// Levels in dBFS with AVAudioRecorder's meaning, per channel, −160 (silence) … 0 (full scale).
///
/// The law, applied to every capture period (10 ms by default) on the capture thread:
/// - **average power** = 10·log10(mean of x²) over the period: the RMS level in dBFS (a
///   full-scale sine reads −3.01, a square wave 0), −160 for silence and anything below −160;
/// - **peak power** follows the period's largest |x| (20·log10, clamped to −160…0): it rises at
///   once, holds for `holdSeconds` (1 s), then falls by `decayDecibelsPerSecond` (20 dB/s) until
///   the signal's own peak meets it — a real meter's peak-hold.
///
/// The capture thread calls `process`; any thread reads the last values (atomics, no lock).
public final class LevelMeter: @unchecked Sendable {
    /// The floor: silence, or anything quieter.
    public static let floor: Float = -160
    /// How long a peak holds before it decays (seconds).
    public static let holdSeconds = 1.0
    /// How fast a held peak falls after the hold (dB a second).
    public static let decayDecibelsPerSecond = 20.0

    public let channels: Int
    public let sampleRate: Int
    private let averages: UnsafeMutablePointer<Atomic<UInt32>>
    private let peaks: UnsafeMutablePointer<Atomic<UInt32>>
    /// Capture-thread state: the held peak and the hold left, per channel.
    private let held: UnsafeMutablePointer<Float>
    private let holdLeft: UnsafeMutablePointer<Double>

    public init(channels: Int, sampleRate: Int) {
        self.channels = channels
        self.sampleRate = sampleRate
        averages = .allocate(capacity: channels)
        peaks = .allocate(capacity: channels)
        held = .allocate(capacity: channels)
        holdLeft = .allocate(capacity: channels)
        for c in 0..<channels {
            (averages + c).initialize(to: Atomic(LevelMeter.floor.bitPattern))
            (peaks + c).initialize(to: Atomic(LevelMeter.floor.bitPattern))
        }
        held.initialize(repeating: LevelMeter.floor, count: channels)
        holdLeft.initialize(repeating: 0, count: channels)
    }

    deinit {
        averages.deinitialize(count: channels)
        peaks.deinitialize(count: channels)
        averages.deallocate()
        peaks.deallocate()
        held.deallocate()
        holdLeft.deallocate()
    }

    /// The last period's average power of `channel` in dBFS (−160 for a channel that does not exist).
    public func averagePower(channel: Int) -> Float {
        guard (0..<channels).contains(channel) else { return LevelMeter.floor }
        return Float(bitPattern: averages[channel].load(ordering: .relaxed))
    }

    /// The held peak power of `channel` in dBFS.
    public func peakPower(channel: Int) -> Float {
        guard (0..<channels).contains(channel) else { return LevelMeter.floor }
        return Float(bitPattern: peaks[channel].load(ordering: .relaxed))
    }

    /// Both levels of every channel now.
    public var reading: LevelReading {
        LevelReading(average: (0..<channels).map(averagePower(channel:)), peak: (0..<channels).map(peakPower(channel:)))
    }

    /// Meters one period of interleaved frames. Real-time safe: no allocation, lock or I/O.
    public func process(_ samples: UnsafePointer<Float>, frames: Int) {
        guard frames > 0 else { return }
        let seconds = Double(frames) / Double(sampleRate)
        for c in 0..<channels {
            var sum = 0.0
            var largest: Float = 0
            var i = c
            for _ in 0..<frames {
                let x = samples[i]
                sum += Double(x) * Double(x)
                largest = max(largest, abs(x))
                i += channels
            }
            let average = LevelMeter.decibels(power: sum / Double(frames))
            let instant = min(LevelMeter.decibels(power: Double(largest) * Double(largest)), 0)
            if instant >= held[c] {
                held[c] = instant
                holdLeft[c] = LevelMeter.holdSeconds
            } else if holdLeft[c] > 0 {
                holdLeft[c] -= seconds
            } else {
                held[c] = max(instant, held[c] - Float(LevelMeter.decayDecibelsPerSecond * seconds))
            }
            averages[c].store(min(average, 0).bitPattern, ordering: .relaxed)
            peaks[c].store(held[c].bitPattern, ordering: .relaxed)
        }
    }

    /// 10·log10(power), at or above the floor.
    @inline(__always)
    static func decibels(power: Double) -> Float {
        guard power > 0 else { return floor }
        return max(Float(10 * log10(power)), floor)
    }
}

/// The levels of every channel at one moment (dBFS), as the level stream gives them.
public struct LevelReading: Sendable, Hashable {
    public var average: [Float]
    public var peak: [Float]

    public init(average: [Float], peak: [Float]) {
        self.average = average
        self.peak = peak
    }
}
