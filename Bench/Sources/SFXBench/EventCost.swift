import Foundation
import SFX

/// What a sound event costs beside a plain play: trigger → DAC and the caller's CPU per trigger,
/// for `engine.play(event)` of a 6-variation event (shuffled, pitch ±1 semitone and volume −3…0 dB
/// drawn per play) against `engine.play(click)`, in rewind mode at its 512 × 3 request, each run
/// on a fresh card, alternating plain and event runs. The event's sounds are six copies of the
/// benchmark's click, so what differs is the event's work: the cooldown check, the draws, the
/// instance bookkeeping, under its lock, on the caller's thread.
enum EventCost {
    struct Row: Codable {
        var client: String
        var latency: LatencyRow
        /// The caller's thread CPU per trigger (CLOCK_THREAD_CPUTIME_ID around the call), µs.
        var cpuP50: Double
        var cpuP95: Double
    }

    static let plain = "sfx play(click)"
    static let event = "sfx play(event), 6 variations"

    static func measure(rounds: Int, count: Int, scratch: URL, progress: (String) -> Void = { _ in }) throws -> [Row] {
        var runs: [Bool: [LatencyRun]] = [:], cpu: [Bool: [Double]] = [:]
        for round in 1...rounds {
            for isEvent in [false, true] {
                progress("a sound event against a plain play: \(isEvent ? "event" : "plain"), round \(round) of \(rounds)")
                let (run, costs) = try self.run(event: isEvent, count: count, scratch: scratch, name: "event-\(isEvent)-\(round)")
                runs[isEvent, default: []].append(run)
                cpu[isEvent, default: []] += costs
            }
        }
        return [false, true].map { isEvent in
            let costs = Distribution(cpu[isEvent] ?? [])
            return Row(client: isEvent ? event : plain,
                       latency: LatencyRow(client: isEvent ? event : plain, label: Latency.rewindLabel,
                                           requestedPeriod: Latency.rewindPeriod, runs: runs[isEvent] ?? []),
                       cpuP50: costs.p50, cpuP95: costs.p95)
        }
    }

    private static func run(event isEvent: Bool, count: Int, scratch: URL, name: String) throws -> (LatencyRun, [Double]) {
        let run = try CardRun(scratch: scratch, name: name)
        defer { run.remove() }
        let engine = try SfxOnCard.engine(run, period: Latency.rewindPeriod, periods: Latency.rewindPeriods, rewind: true)
        let clicks = try (0..<6).map { try engine.load(buffer: Latency.click, sampleRate: 48_000, channels: 1, name: "click-\($0)") }
        let variations = try SoundEvent(name: "click", sounds: clicks, choose: .shuffle, pitch: -1...1, volume: -3...0, seed: 1)
        let gaps = Latency.gaps(period: Latency.rewindPeriod, periods: Latency.rewindPeriods)
        var next = Meter.now() + 200_000_000
        var triggers: [UInt64] = [], cpu: [Double] = []
        triggers.reserveCapacity(count)
        cpu.reserveCapacity(count)
        for gap in Latency.schedule(count: count, gaps: gaps, seed: 7) {
            next += gap
            Meter.sleep(until: next)
            triggers.append(Meter.now())
            let before = World.threadCPUNanoseconds()
            if isEvent { engine.play(variations) } else { engine.play(clicks[0]) }
            cpu.append(Double(World.threadCPUNanoseconds() - before) / 1000)
        }
        Meter.sleep(seconds: gaps.max / 1000 + 0.1)
        engine.close()
        return (LatencyRun(triggers: triggers, log: try run.log()), cpu)
    }

    static func lines(_ rows: [Row]) -> [String] {
        guard rows.count == 2 else { return [] }
        var lines = ["", "## A sound event against a plain play", "",
                     "`engine.play(event)` of a 6-variation event (shuffle, pitch ±1 semitone, volume −3…0 dB) against `engine.play(click)`, rewind mode, alternating runs on fresh cards; CPU is the calling thread's per trigger.", "",
                     "| client | setting | matched/triggers | p50 ms | p95 ms | CPU per trigger p50 µs | p95 µs |",
                     "|---|---|---:|---:|---:|---:|---:|"]
        for row in rows {
            lines.append("| \(row.client) | \(row.latency.setting?.text ?? row.latency.label) | \(row.latency.matched)/\(row.latency.triggers) | "
                         + String(format: "%.3f | %.3f | %.1f | %.1f |", row.latency.milliseconds.p50, row.latency.milliseconds.p95, row.cpuP50, row.cpuP95))
        }
        lines.append(String(format: "Event − plain: p50 %+.3f ms trigger → DAC, %+.1f µs of CPU per trigger.",
                            rows[1].latency.milliseconds.p50 - rows[0].latency.milliseconds.p50, rows[1].cpuP50 - rows[0].cpuP50))
        return lines
    }
}
