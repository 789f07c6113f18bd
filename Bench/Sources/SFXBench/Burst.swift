import Foundation
import Glibc
import Synchronization
import SFX
import SFXCore
import SFXCardSupport

/// `sfx-bench --burst`: the real-time thread's work bound. Prints, for sfx's default setting
/// (128 × 3 frames, 48 kHz, 64 voices):
///
/// - the time one period's work takes (commands, a render of 128 frames, the events drained),
///   measured in this process on the mixer alone, for a burst of 8,000 plays of a 2 ms click
///   with every voice busy (each play steals): taking at most `budget` commands a period versus
///   taking the whole burst in one period, as the engine did before the budget;
/// - what one play and one stop cost with few and with 4,096 voices sounding (`commandCost`);
/// - xruns on the virtual card during 10 bursts of 8,000 plays, 0.5 s apart;
/// - xruns during 3 s of a flood of plays from one thread, as fast as `play` returns.
///
/// The card xruns are the card's own `underrun` events. Run as root (SCHED_FIFO), on an
/// otherwise idle machine, in release: `swift build -c release --product sfx-bench`, the same
/// with `--product sfxcard`, then `.build/release/sfx-bench --burst`.
enum Burst {
    static let burstSize = 8_000
    static let bursts = 10
    static let floodSeconds = 3.0
    static let period = 128

    /// `lockMemory`: the engines on the card run with `Configuration.lockMemory` (`--lock-memory`).
    static func run(scratch: URL, lockMemory: Bool) throws {
        let budget = 256
        // Measured under SCHED_FIFO, as the output thread runs, so that other programs' time
        // slices do not count as work.
        var param = sched_param()
        param.sched_priority = 70
        let fifo = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0
        if !fifo { print("period work measured at normal priority (SCHED_FIFO refused): the figures include preemption") }
        for (label, limit) in [("budget \(budget) a period", budget), ("the whole burst in one period", Int.max)] {
            let work = periodWork(limit: limit)
            print(String(format: "period work, %@: max %.0f µs, p99 %.0f µs, median %.0f µs (a period is %.0f µs); %d periods",
                         label, work.max, work.p99, work.median, 1e6 * Double(period) / 48_000, work.periods))
        }
        let cost = commandCost()
        print(String(format: "command cost at 4,096 voices: a play %.2f µs with 0–255 voices sounding, %.2f µs with 3,840–4,095; " +
                     "a stop %.2f µs with 4,096 sounding", cost.playFew, cost.playMany, cost.stop))
        param.sched_priority = 0
        pthread_setschedparam(pthread_self(), SCHED_OTHER, &param)
        let bursts = try cardBursts(scratch: scratch, lockMemory: lockMemory)
        print("bursts: \(Self.bursts) × \(burstSize) plays at \(period) × 3: \(bursts.xruns) xruns, " +
              "\(bursts.rejected) plays rejected, \(bursts.completed) of \(bursts.plays) completed")
        let flood = try cardFlood(scratch: scratch, lockMemory: lockMemory)
        print(String(format: "flood: %.0f plays/s for %.0f s at %d × 3: %d xruns, %d plays rejected (queue full), %d of %d completed",
                     Double(flood.plays) / floodSeconds, floodSeconds, period, flood.xruns, flood.rejected,
                     flood.completed, flood.plays))
    }

    struct Work { var max: Double; var p99: Double; var median: Double; var periods: Int }

    /// Each of 10 bursts: 8,000 plays queued at once while 64 voices play, then periods until
    /// the queue is empty and 20 more; each period takes up to `limit` commands, renders 128
    /// frames and drains the events. Times in µs of CLOCK_MONOTONIC, this thread.
    static func periodWork(limit: Int) -> Work {
        let format = AudioFormat(sampleRate: 48_000, channels: 2)
        var configuration = Mixer.Configuration(sampleRate: 48_000, maxVoices: 64)
        configuration.maxFramesPerRender = 4096
        configuration.eventCapacity = 1024
        let mixer = Mixer(format: format, configuration: configuration)
        let cue = Cue(name: "click", format: AudioFormat(sampleRate: 48_000, channels: 1),
                      interleaved: (0..<4_800).map { Float(($0 / 16) % 2 == 0 ? 0.1 : -0.1) })
        let ring = SPSCRing<MixerCommand>(capacity: 8192)
        let output = UnsafeMutablePointer<Float>.allocate(capacity: 4096 * 2)
        defer { output.deallocate() }
        var times: [Double] = []
        var voice: UInt64 = 0
        for _ in 0..<bursts {
            for _ in 0..<64 {
                voice += 1
                mixer.apply(.play(PlayRequest(voice: VoiceID(voice), cue: cue, loops: -1)))
            }
            for _ in 0..<burstSize {
                voice += 1
                _ = ring.push(.play(PlayRequest(voice: VoiceID(voice), cue: cue)))
            }
            var quiet = 0
            while quiet < 20 {
                let start = now()
                var taken = 0
                while taken < limit, let command = ring.pop() {
                    mixer.apply(command)
                    taken += 1
                    if taken % 128 == 0 { mixer.drainEvents { _, _ in } }
                }
                mixer.render(into: output, frameCount: period)
                mixer.drainEvents { _, _ in }
                times.append(now() - start)
                if ring.count == 0 { quiet += 1 }
            }
            mixer.apply(.stopAll(fadeFrames: 0))
            mixer.render(into: output, frameCount: period)
            mixer.drainEvents { _, _ in }
        }
        withExtendedLifetime(cue) {}
        let sorted = times.sorted()
        return Work(max: sorted.last ?? 0, p99: sorted[sorted.count * 99 / 100], median: sorted[sorted.count / 2],
                    periods: sorted.count)
    }

    /// What a play and a stop cost as the number of sounding voices grows: a mixer of 4,096
    /// voices (the engine's most) filled by plays of a looping cue, timed 256 at a time, then
    /// every voice stopped by its id, timed 256 at a time. Best of 5 fillings, µs per command.
    static func commandCost() -> (playFew: Double, playMany: Double, stop: Double) {
        let format = AudioFormat(sampleRate: 48_000, channels: 2)
        let cue = Cue(name: "loop", format: AudioFormat(sampleRate: 48_000, channels: 1),
                      interleaved: [Float](repeating: 0.01, count: 480))
        var few = Double.infinity, many = Double.infinity, stop = Double.infinity
        var voice: UInt64 = 0
        for _ in 0..<5 {
            let mixer = Mixer(format: format, configuration: Mixer.Configuration(sampleRate: 48_000, maxVoices: 4096))
            var first = voice + 1
            for batch in 0..<16 {
                let start = now()
                for _ in 0..<256 {
                    voice += 1
                    mixer.apply(.play(PlayRequest(voice: VoiceID(voice), cue: cue, loops: -1)))
                }
                let each = (now() - start) / 256
                if batch == 0 { few = min(few, each) }
                if batch == 15 { many = min(many, each) }
                mixer.drainEvents { _, _ in }
            }
            for _ in 0..<16 {
                let start = now()
                for _ in 0..<256 {
                    mixer.apply(.stop(VoiceID(first), fadeFrames: 0))
                    first += 1
                }
                stop = min(stop, (now() - start) / 256)
                mixer.drainEvents { _, _ in }
            }
        }
        withExtendedLifetime(cue) {}
        return (few, many, stop)
    }

    struct CardFigures { var xruns = 0; var plays = 0; var rejected = 0; var completed = 0 }

    static func cardBursts(scratch: URL, lockMemory: Bool) throws -> CardFigures {
        try onCard(scratch: scratch, name: "burst", lockMemory: lockMemory) { engine, click, completion in
            var plays = 0
            for _ in 0..<bursts {
                for _ in 0..<burstSize {
                    engine.play(click, volume: 0.01, completion: completion)
                    plays += 1
                }
                usleep(500_000)
            }
            return plays
        }
    }

    static func cardFlood(scratch: URL, lockMemory: Bool) throws -> CardFigures {
        try onCard(scratch: scratch, name: "flood", lockMemory: lockMemory) { engine, click, completion in
            var plays = 0
            let end = now() + floodSeconds * 1e6
            while now() < end {
                for _ in 0..<100 { engine.play(click, volume: 0.01, completion: completion) }
                plays += 100
            }
            return plays
        }
    }

    /// An engine at 128 × 3 on a fresh card that does not record; `body` plays and returns how
    /// many plays it made.
    static func onCard(scratch: URL, name: String, lockMemory: Bool,
                       _ body: (SoundEngine, SoundID, @escaping @Sendable (PlayOutcome) -> Void) throws -> Int) throws -> CardFigures {
        let run = try CardRun(scratch: scratch, name: name, record: false)
        defer { run.remove() }
        run.card.makeCurrent()
        var configuration = SoundEngine.Configuration()
        configuration.output = PlaybackRequest(device: run.card.pcmName, sampleRate: 48_000, channels: 2,
                                               periodFrames: period, periodCount: 3)
        configuration.lockMemory = lockMemory
        let engine = try SoundEngine(configuration: configuration)
        let click = try engine.load(buffer: Latency.click, sampleRate: 48_000, channels: 1, name: "click")
        let rejected = Atomic<Int>(0)
        let completed = Atomic<Int>(0)
        usleep(500_000)
        let plays = try body(engine, click) { outcome in
            completed.wrappingAdd(1, ordering: .relaxed)
            if case .rejected = outcome { rejected.wrappingAdd(1, ordering: .relaxed) }
        }
        _ = engine.waitUntilIdle(timeout: .seconds(60))
        engine.close()
        var figures = CardFigures()
        figures.xruns = try run.log().xruns
        figures.plays = plays
        figures.rejected = rejected.load(ordering: .relaxed)
        figures.completed = completed.load(ordering: .relaxed)
        return figures
    }

    /// CLOCK_MONOTONIC in µs.
    static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) * 1e6 + Double(t.tv_nsec) / 1e3
    }
}
