import Foundation
import SFX
import SFXCardSupport

/// `play(_:at:)` accuracy: where a play at a frame lands in the card's recording, in frames early
/// (negative) or late (positive) of the frame asked for; expected 0 on every path. And how well
/// the engine's clock maps that frame to CLOCK_MONOTONIC against the card's own DAC time of it.
///
/// Each row: a fresh card and engine (the classic path at 256 × 4, or rewind mode at its 512 × 3
/// request), `count` plays of a 10 ms blip 60 ms apart, each at a frame picked at random (seeded)
/// 5–35 ms past `clock.nextSchedulable` on the classic path and 5–20 ms past `clock.now` in rewind
/// mode (inside what the device already holds, so it is placed by rewinding). The engine opens
/// its device once, so the card's stream frame is the engine's frame.
enum Schedule {
    struct Row: Codable {
        var path: String
        var pointer: String
        var plays: Int
        /// Plays matched to an onset in the recording (within 10 ms of their frame).
        var matched: Int
        /// Frames from the frame asked for to where it was heard: most early, most late, plays off.
        var earliest: Int
        var latest: Int
        var off: Int
        /// Plays the engine reported late (`Voice.lateFrames` > 0).
        var reportedLate: Int
        /// |clock's CLOCK_MONOTONIC instant of the frame − the card's DAC time of it|, µs.
        var clockErrorP50: Double
        var clockErrorMax: Double
        var xruns: Int
    }

    static func measure(count: Int, scratch: URL, progress: (String) -> Void) throws -> [Row] {
        var rows: [Row] = []
        for rewind in [false, true] {
            for pointer in [VirtualCard.PointerGranularity.period, .frame] {
                progress("play(at:) accuracy, \(rewind ? "rewind mode" : "classic path"), pointer \(pointer.rawValue)")
                rows.append(try run(rewind: rewind, pointer: pointer, count: count, scratch: scratch))
            }
        }
        return rows
    }

    static func run(rewind: Bool, pointer: VirtualCard.PointerGranularity, count: Int, scratch: URL) throws -> Row {
        let saved = CardRun.pointer
        CardRun.pointer = pointer
        defer { CardRun.pointer = saved }
        let run = try CardRun(scratch: scratch, name: "schedule-\(rewind ? "rewind" : "classic")-\(pointer.rawValue)")
        defer { run.remove() }
        let engine = rewind ? try SfxOnCard.engine(run, period: Latency.rewindPeriod, periods: Latency.rewindPeriods, rewind: true)
                            : try SfxOnCard.engine(run, period: 256, periods: 4)
        let blip = try engine.load(buffer: [Float](repeating: 0.5, count: 480), sampleRate: 48_000, channels: 1, name: "blip")
        let clock = engine.clock
        let anchored = Meter.now() + 5_000_000_000
        while !clock.isAnchored, Meter.now() < anchored { Meter.sleep(seconds: 0.01) }
        Meter.sleep(seconds: 0.2)
        var random = SplitMix(seed: rewind ? 2 : 1)
        var targets: [(frame: Int64, seconds: Double?, voice: Voice)] = []
        for _ in 0..<count {
            let ahead = Int64(240 + random.next() % (rewind ? 720 : 1_440))
            let time = (rewind ? clock.now : clock.nextSchedulable).advanced(by: ahead)
            let voice = engine.play(blip, at: time)
            targets.append((time.frame, clock.monotonicSeconds(of: time), voice))
            Meter.sleep(seconds: 0.06)
        }
        _ = engine.waitUntilIdle(timeout: .seconds(5))
        Meter.sleep(seconds: 0.1)
        let late = targets.filter { $0.voice.lateFrames > 0 }.count
        engine.close()
        var onsets: [(frame: Int, dac: UInt64)] = []
        var xruns = 0
        for event in try run.card.events() {
            switch event.kind {
            case .onset(let frame, let dac, _): onsets.append((frame, dac))
            case .xrun(.playback, _, _): xruns += 1
            default: break
            }
        }
        var errors: [Int] = [], clockErrors: [Double] = []
        for target in targets {
            guard let onset = onsets.min(by: { abs(Int64($0.frame) - target.frame) < abs(Int64($1.frame) - target.frame) }),
                  abs(Int64(onset.frame) - target.frame) <= 480 else { continue }
            errors.append(onset.frame - Int(target.frame))
            if let seconds = target.seconds { clockErrors.append(abs(Double(onset.dac) * 1e-9 - seconds) * 1e6) }
        }
        clockErrors.sort()
        return Row(path: rewind ? "rewind \(Latency.rewindPeriod) × \(Latency.rewindPeriods)" : "classic 256 × 4",
                   pointer: pointer.rawValue, plays: count, matched: errors.count,
                   earliest: errors.min() ?? 0, latest: errors.max() ?? 0, off: errors.filter { $0 != 0 }.count,
                   reportedLate: late,
                   clockErrorP50: clockErrors.isEmpty ? .nan : clockErrors[clockErrors.count / 2],
                   clockErrorMax: clockErrors.last ?? .nan, xruns: xruns)
    }

    static func lines(_ rows: [Row]) -> [String] {
        guard !rows.isEmpty else { return [] }
        var lines = ["", "## play(at:) accuracy", "",
                     "Plays at a frame (`engine.play(_:at:)`), a 10 ms blip each, 60 ms apart; where each was heard in the card's recording against the frame asked for (expected 0), and the engine clock's CLOCK_MONOTONIC instant of that frame against the card's DAC time of it.", "",
                     "| path | card pointer | plays | matched | frames early/late (min … max) | plays off | reported late | clock error p50 µs | max µs | xruns |",
                     "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for row in rows {
            lines.append("| \(row.path) | \(row.pointer) | \(row.plays) | \(row.matched) | \(row.earliest) … \(row.latest) | \(row.off) | \(row.reportedLate) | \(format(row.clockErrorP50, digits: 0)) | \(format(row.clockErrorMax, digits: 0)) | \(row.xruns) |")
        }
        return lines
    }
}

/// SplitMix64: a seeded sequence for the plays' frames.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> Int64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int64((z ^ (z >> 31)) >> 1)
    }
}
