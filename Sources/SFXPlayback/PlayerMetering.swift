import FoundationEssentials
import Glibc
import SFXCore

/// What `updateMeters()` last read, per channel, in dBFS.
struct PlayerMeters {
    var enabled = false
    var average: [Float] = []
    var peak: [Float] = []
}

/// Metering as AVAudioPlayer has it, for the bars a chat app draws while a message plays: turn
/// `isMeteringEnabled` on, call `updateMeters()` (each frame of the animation), then read
/// `averagePower(forChannel:)` and `peakPower(forChannel:)`.
///
/// The levels are those of the frames being played (at `currentTime`, not the reader's
/// lookahead): the reader measures each 256-frame chunk as it decodes it, and a reading spans
/// the four chunks just played (about 21 ms at 48 kHz; `StreamRing.level(channel:before:)`).
/// They are the file's own levels, before the player's volume, pan and group gains, as
/// AVAudioPlayer's are. Nothing of it runs on the output thread.
extension Player {
    /// The dBFS both meters give when metering is off, before a play, or in digital silence.
    public static let meterFloor: Float = -160

    /// Off by default; while off, the meters read `meterFloor`.
    public var isMeteringEnabled: Bool {
        get { meters.withLock { $0.enabled } }
        set {
            meters.withLock {
                $0.enabled = newValue
                if !newValue { $0.average = []; $0.peak = [] }
            }
        }
    }

    /// Reads the level at the current position into the meters (any thread).
    public func updateMeters() {
        guard isMeteringEnabled else { return }
        let ring = state.withLock { $0.voice == nil ? nil : $0.reader?.ring }
        var average: [Float] = [], peak: [Float] = []
        if let ring {
            let frame = ring.releasedFrames
            for channel in 0..<ring.channels {
                let level = ring.level(channel: channel, before: frame)
                average.append(Self.decibels(level.rms))
                peak.append(Self.decibels(level.peak))
            }
        }
        meters.withLock {
            $0.average = average
            $0.peak = peak
        }
    }

    /// The RMS level of `channel` (0 the first; a mono file's one channel for any) at the last
    /// `updateMeters()`, in dBFS: −160 … 0 (above 0 for a file that clips).
    public func averagePower(forChannel channel: Int) -> Float {
        meters.withLock { Self.reading($0.average, channel) }
    }

    /// The highest |sample| of `channel` over the same span, in dBFS.
    public func peakPower(forChannel channel: Int) -> Float {
        meters.withLock { Self.reading($0.peak, channel) }
    }

    private static func reading(_ values: [Float], _ channel: Int) -> Float {
        guard !values.isEmpty else { return meterFloor }
        return values[min(max(channel, 0), values.count - 1)]
    }

    private static func decibels(_ amplitude: Float) -> Float {
        amplitude > 0 ? max(20 * log10(amplitude), meterFloor) : meterFloor
    }
}
