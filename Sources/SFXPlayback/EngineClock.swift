import Glibc
import SFXCore

/// A moment of the engine's output: a frame of the stream it mixes, counted at the device's
/// sample rate from the first frame the engine mixed (frame 0, when the engine opened). The
/// count goes on while the device is lost (the engine mixes by the clock then) and across
/// reopenings, so a time stays meaningful for as long as the engine lives.
public struct EngineTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Frames since the engine opened.
    public var frame: Int64

    public init(frame: Int64) { self.frame = frame }

    /// This time moved on by `frames` (back for a negative count).
    public func advanced(by frames: Int64) -> EngineTime { EngineTime(frame: frame + frames) }

    /// This time moved on by `duration` at `sampleRate` (rounded to the nearest frame).
    public func advanced(by duration: Duration, sampleRate: Int) -> EngineTime {
        advanced(by: Int64((duration.seconds * Double(sampleRate)).rounded()))
    }

    /// Seconds since the engine opened, at `sampleRate`.
    public func seconds(sampleRate: Int) -> Double { Double(frame) / Double(sampleRate) }

    /// Frames from `b` to `a`.
    public static func - (a: EngineTime, b: EngineTime) -> Int64 { a.frame - b.frame }
    public static func < (a: EngineTime, b: EngineTime) -> Bool { a.frame < b.frame }
    public var description: String { "frame \(frame)" }
}

/// The engine's sample clock (`SoundEngine.clock`): where its output is now, and when a frame of
/// it is heard, on CLOCK_MONOTONIC.
///
/// Two times matter:
/// - `now`: the frame the DAC plays at this instant. The output thread reads the device's delay
///   (`snd_pcm_delay`: what sfx queued plus what the device, or the sound server behind an ALSA
///   plugin, holds after it) every 50 ms, and publishes the frame at the DAC with the
///   CLOCK_MONOTONIC instant it read it (atomics, no lock); `now` runs on from there by
///   CLOCK_MONOTONIC. It is as exact as the delay the device reports: to the frame on a card
///   whose delay follows its DAC, within a period on one whose pointer moves by periods.
/// - `nextSchedulable`: the earliest frame a `play(_:at:)` sent now can still start on exactly.
///   On the classic path a play is taken at the start of the next period mixed, so that is the
///   end of what was mixed plus a period; in rewind mode a play starts by rewinding, so it is
///   `now` plus the rewind guard (1 ms), the pointer's granularity when the delay does not
///   follow the DAC, and a 2 ms margin for the output thread to wake. A play for an earlier
///   frame plays at once and reports how late it started (`Voice.lateFrames`).
///
/// Before the device has played (or while there is none), `now` is the end of what was mixed.
public struct EngineClock: Sendable {
    let output: OutputThread
    /// Frames per second of the engine's output.
    public let sampleRate: Int

    /// The frame heard at the DAC now.
    public var now: EngineTime { EngineTime(frame: Int64(dacFrame(atNanoseconds: Self.monotonicNanoseconds()))) }

    /// The earliest frame a play sent now can start on exactly (see `EngineClock`).
    public var nextSchedulable: EngineTime {
        if output.rewindState.load(ordering: .acquiring) == RewindCode.active {
            let slack = output.delayFollowsDAC.load(ordering: .relaxed) ? 0 : output.pointerGranularity.load(ordering: .relaxed)
            let lead = RewindMode.guardFrames(sampleRate: sampleRate) + slack + sampleRate / 500
            return EngineTime(frame: Int64(dacFrame(atNanoseconds: Self.monotonicNanoseconds()) + lead))
        }
        let mixed = output.clockAnchor.mixedFrame.load(ordering: .relaxed)
        return EngineTime(frame: Int64(mixed + output.currentParameters.periodFrames))
    }

    /// The time `duration` from now (`now` moved on by it).
    public func time(after duration: Duration) -> EngineTime { now.advanced(by: duration, sampleRate: sampleRate) }

    /// When `time` is (or was) heard at the DAC, in CLOCK_MONOTONIC seconds; nil before the
    /// device first said where its DAC is.
    public func monotonicSeconds(of time: EngineTime) -> Double? {
        guard let anchor = output.clockAnchor.read() else { return nil }
        return Double(anchor.nanoseconds) * 1e-9 + Double(Int(time.frame) - anchor.dacFrame) / Double(sampleRate)
    }

    /// The frame heard at the DAC at `seconds` of CLOCK_MONOTONIC (past or future), rounded to
    /// the nearest frame.
    public func time(atMonotonicSeconds seconds: Double) -> EngineTime {
        EngineTime(frame: Int64(dacFrame(atNanoseconds: Int((seconds * 1e9).rounded()))))
    }

    /// Whether the device has said where its DAC is (`now` follows it rather than the mixer).
    public var isAnchored: Bool { output.clockAnchor.read() != nil }

    /// Frames in `duration` at the clock's rate (rounded).
    public func frames(_ duration: Duration) -> Int64 { Int64((duration.seconds * Double(sampleRate)).rounded()) }

    private func dacFrame(atNanoseconds nanoseconds: Int) -> Int {
        guard let anchor = output.clockAnchor.read() else { return output.clockAnchor.mixedFrame.load(ordering: .relaxed) }
        let elapsed = Double(nanoseconds - anchor.nanoseconds) * 1e-9
        return anchor.dacFrame + Int((elapsed * Double(sampleRate)).rounded())
    }

    static func monotonicNanoseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int(now.tv_sec) * 1_000_000_000 + Int(now.tv_nsec)
    }
}

extension Voice {
    /// For a play at a time already past when it reached the mixer (`play(_:at:)`): how many
    /// frames after that time it started (0 when on time, or not yet known). Known before the
    /// voice's outcome is: read it once `outcome` has come, or a period after the start.
    public var lateFrames: Int { handle.lateFrames.load(ordering: .acquiring) }

    /// `lateFrames` as a time, at the engine's rate (zero once the engine is gone).
    public var lateBy: Duration {
        guard let engine = handle.engine.value else { return .zero }
        return .nanoseconds(Int64(lateFrames) * 1_000_000_000 / Int64(engine.clock.sampleRate))
    }
}
