import Foundation
import Synchronization
import XCTest
import SFXCore
import SFXCardSupport
import SFX
@testable import SFXPlayback

/// Rewind mode on the virtual card, whose DAC plays by the clock and records what reached it (a
/// frame rewritten after the DAC passed it is logged as lost): plays start about a millisecond
/// ahead of the DAC, what was playing goes on sample for sample, each completion leaves once.
final class RewindTests: XCTestCase {
    /// A sustained tone: `amplitude` × sine at `frequency`, with no fade of its own.
    static func sine(seconds: Double, frequency: Double, amplitude: Float = 0.5) -> [Float] {
        (0..<Int(48_000 * seconds)).map { i in amplitude * Float(sin(2 * .pi * frequency * Double(i) / 48_000)) }
    }

    /// An engine in rewind mode on a card whose pointer moves frame by frame (unless `pointer`).
    static func rewindingEngine(maxVoices: Int = 64, period: Int = 256, periods: Int = 4,
                                pointer: VirtualCard.PointerGranularity = .frame,
                                rewind: VirtualCard.RewindBehavior = .honest) throws -> EngineOnCard {
        try EngineOnCard(period: period, periods: periods, maxVoices: maxVoices, rewind: true,
                         card: VirtualCard(pointer: pointer, rewind: rewind))
    }

    /// Waits until the output thread has placed a command at a frame other than `previous`.
    static func placement(after previous: Int, _ setup: EngineOnCard) -> Int? {
        var placed = -1
        let moved = eventually { placed = setup.engine.outputThread.lastPlacement.load(ordering: .acquiring); return placed != previous }
        return moved ? placed : nil
    }

    func testRewindModeIsTheDefaultAndTheEngineSaysSo() throws {
        let setup = try Self.rewindingEngine()
        defer { setup.close() }
        XCTAssertTrue(SoundEngine.Configuration().rewind, "on by default")
        XCTAssertGreaterThanOrEqual(setup.engine.metrics.parameters.bufferFrames, 960, "a buffer of 20 ms or more")
        XCTAssertTrue(eventually { setup.engine.metrics.rewind == .active }, "\(setup.engine.metrics.rewind)")
        XCTAssertTrue(setup.engine.metrics.description.contains("rewind active"))
    }

    func testTheRecordingIsTheOfflineMixWithEachPlayAtTheFrameTheEnginePlacedIt() throws {
        let setup = try Self.rewindingEngine()
        defer { setup.close() }
        XCTAssertTrue(eventually { setup.engine.metrics.rewind == .active })
        let long = try setup.engine.load(buffer: Self.sine(seconds: 0.4, frequency: 330), sampleRate: 48_000, channels: 1)
        let short = try setup.engine.load(buffer: SoundEngineTests.tone(seconds: 0.15), sampleRate: 48_000, channels: 1)
        var placements: [Int] = []
        var last = setup.engine.outputThread.lastPlacement.load(ordering: .acquiring)
        for (n, sound) in [long, short, short].enumerated() {
            setup.engine.play(sound, volume: 0.6, pan: Float(n) * 0.4 - 0.4)
            last = try XCTUnwrap(Self.placement(after: last, setup))
            placements.append(last)
            usleep(37_000)   // the next play lands while this one sounds, between periods
        }
        XCTAssertTrue(setup.engine.waitUntilIdle(timeout: .seconds(5)))
        XCTAssertGreaterThanOrEqual(setup.engine.metrics.rewinds, 3)
        setup.engine.close()
        let recording = try setup.recording()
        let reference = try OfflineMix.render(zip([long, short, short], placements).enumerated().map { n, play in
            OfflineMix.Play(sound: play.0, at: Double(play.1) / 48_000, volume: 0.6, pan: Float(n) * 0.4 - 0.4)
        }, library: setup.engine.library)
        XCTAssertGreaterThanOrEqual(recording.samples.count, reference.count)
        let got = Array(recording.samples.prefix(reference.count))
        let firstDifference = zip(got, reference).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        XCTAssertNil(firstDifference, "the recording differs from the offline mix at sample \(firstDifference ?? -1)")
        XCTAssertTrue(recording.samples.dropFirst(reference.count).allSatisfy { $0 == 0 }, "silence after the mix")
        let lost = try setup.card.events().filter { if case .lost = $0.kind { true } else { false } }
        XCTAssertEqual(lost, [], "no frame was rewritten after the DAC had played it")
    }

    func testAPlayReachesTheDACAboutTheGuardAfterTheTrigger() throws {
        let setup = try Self.rewindingEngine()
        defer { setup.close() }
        XCTAssertTrue(eventually { setup.engine.metrics.rewind == .active })
        let click = try setup.engine.load(buffer: Self.sine(seconds: 0.01, frequency: 1000), sampleRate: 48_000, channels: 1)
        var triggers: [UInt64] = []
        for _ in 0..<5 {
            triggers.append(VirtualCard.monotonicNanoseconds())
            setup.engine.play(click)
            usleep(60_000)
        }
        XCTAssertTrue(setup.engine.waitUntilIdle())
        setup.engine.close()
        let onsets = try setup.card.events().compactMap { event -> UInt64? in
            if case .onset(_, let dac, _) = event.kind { dac } else { nil }
        }
        XCTAssertEqual(onsets.count, 5)
        // Far below the buffer's 21 ms: the guard (1 ms) and the wake-up; 10 ms allows a loaded machine.
        let delays = zip(triggers, onsets).map { Double($1 &- $0) / 1e6 }
        XCTAssertLessThan(delays.sorted()[2], 10, "median trigger → DAC in ms: \(delays)")
    }

    func testAThousandTriggersFromFourThreadsCompleteOnceEachInRewindMode() throws {
        let setup = try Self.rewindingEngine(maxVoices: 32)
        defer { setup.close() }
        XCTAssertTrue(eventually { setup.engine.metrics.rewind == .active })
        let click = try setup.engine.load(buffer: SoundEngineTests.tone(seconds: 0.02), sampleRate: 48_000, channels: 1)
        let completions = Completions()
        let ids = Mutex<[VoiceID]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for n in 0..<250 {
                let priority: VoicePriority = (n + thread) % 3 == 0 ? .high : .normal
                let voice = completions.play(click, on: setup.engine, volume: 0.1, priority: priority)
                ids.withLock { $0.append(voice) }
                if n % 10 == 0 { usleep(1_000) }
            }
        }
        XCTAssertTrue(setup.engine.waitUntilIdle(timeout: .seconds(20)))
        let all = completions.all
        XCTAssertEqual(Set(ids.withLock { $0 }).count, 1000)
        XCTAssertEqual(all.count, 1000, "no completion lost")
        XCTAssertTrue(all.values.allSatisfy { $0.count == 1 }, "none delivered twice")
        XCTAssertGreaterThan(setup.engine.metrics.rewinds, 10, "the plays were started by rewinding")
        XCTAssertEqual(setup.engine.metrics.rewind, .active)
        XCTAssertEqual(setup.engine.metrics.lostEvents, 0)
    }

    /// The daemon's load in rewind mode: bursts of plays from many threads, each burst followed
    /// by enough silence that the idle timeout closes the device, and the next burst reopens it
    /// (and probes it again). Every play completes exactly once, and the engine goes idle.
    func testBurstsAcrossIdleClosesCompleteOnceEachInRewindMode() throws {
        let setup = try EngineOnCard(period: 256, periods: 4, maxVoices: 32, idleTimeout: .milliseconds(30), rewind: true,
                                     card: VirtualCard(pointer: .frame))
        defer { setup.close() }
        let click = try setup.engine.load(buffer: SoundEngineTests.tone(seconds: 0.02), sampleRate: 48_000, channels: 1)
        let completions = Completions()
        let ids = Mutex<[VoiceID]>([])
        let bursts = 8, threads = 8, plays = 40
        XCTAssertTrue(eventually { setup.engine.metrics.deviceOpen == false }, "the device opened at the start closes when idle")
        for _ in 0..<bursts {
            DispatchQueue.concurrentPerform(iterations: threads) { _ in
                for n in 0..<plays {
                    let voice = completions.play(click, on: setup.engine, volume: 0.05)
                    ids.withLock { $0.append(voice) }
                    if n % 8 == 0 { usleep(500) }
                }
            }
            let sent = ids.withLock { $0.count }
            XCTAssertTrue(eventually(timeout: 10) { completions.all.count == sent }, "\(completions.all.count) of \(sent) completions")
            XCTAssertTrue(eventually(timeout: 10) { setup.engine.metrics.deviceOpen == false }, "the device closes when idle")
        }
        let expected = bursts * threads * plays
        XCTAssertEqual(setup.card.recordingURLs().count, 1 + bursts, "the device was closed and reopened for each burst")
        XCTAssertTrue(setup.engine.waitUntilIdle(timeout: .seconds(5)))
        XCTAssertEqual(Set(ids.withLock { $0 }).count, expected)
        XCTAssertTrue(completions.all.values.allSatisfy { $0.count == 1 }, "none delivered twice")
        XCTAssertGreaterThan(setup.engine.metrics.rewinds, bursts, "the plays were started by rewinding")
        XCTAssertEqual(setup.engine.metrics.lostEvents, 0)
    }

    /// Loud sustained tones through the limiter, a voice limit that steals, and a group fading,
    /// with plays started by rewinding all along: the output has no step larger than what its
    /// own content makes. Three 110 Hz sines of amplitude 1 (0.5 at volume 2) move at most
    /// 3 × 2π × 110 / 48,000 = 0.043 per frame; a start fade of 0.3 ms (14 frames) adds at most
    /// 1 / 14 = 0.071; the limiter only scales down. So 0.15 is never reached by the content,
    /// while a splice of two renders that differ by a voice jumps by up to that voice's amplitude.
    func testRewritesStayContinuousThroughStealingAGroupFadeAndTheLimiter() throws {
        let setup = try Self.rewindingEngine(maxVoices: 3)
        defer { setup.close() }
        XCTAssertTrue(eventually { setup.engine.metrics.rewind == .active })
        let tone = try setup.engine.load(buffer: Self.sine(seconds: 0.6, frequency: 110), sampleRate: 48_000, channels: 1)
        for n in 0..<12 {
            setup.engine.play(tone, volume: 2, group: n % 2 == 0 ? .effects : .ui)
            if n == 5 { try setup.engine.setGain(0.3, for: .ui) }
            if n == 9 { try setup.engine.setGain(1, for: .ui) }
            usleep(23_000)
        }
        XCTAssertTrue(setup.engine.waitUntilIdle(timeout: .seconds(5)))
        let metrics = setup.engine.metrics
        setup.engine.close()
        // 14 commands (12 plays, 2 gains): each rewinds, unless it came in the same turn as
        // another or at a moment when nothing could be rewound (a held-up thread), when the fill
        // takes it; most must have rewound for the splices to have been tested.
        XCTAssertGreaterThanOrEqual(setup.engine.metrics.rewinds, 7, "most commands started by rewinding")
        let samples = try setup.recording().samples
        XCTAssertGreaterThan(samples.map(abs).max() ?? 0, 0.85, "the limiter was engaged")
        var largest: Float = 0
        for i in 2..<samples.count { largest = max(largest, abs(samples[i] - samples[i - 2])) }
        XCTAssertLessThan(largest, 0.15, "largest step between frames; \(metrics)")
        let lost = try setup.card.events().filter { if case .lost = $0.kind { true } else { false } }
        XCTAssertEqual(lost, [])
    }

    func testADeviceThatIgnoresRewindsIsDetectedAndTheEngineFallsBack() throws {
        let setup = try Self.rewindingEngine(period: 128, periods: 3, rewind: .ignore)
        defer { setup.close() }
        XCTAssertTrue(eventually { setup.engine.metrics.rewind == .unsupported(.ignored) }, "\(setup.engine.metrics.rewind)")
        let tock = try setup.engine.systemSound(named: "tock")
        let done = Mutex<PlayOutcome?>(nil)
        setup.engine.play(tock) { outcome in done.withLock { $0 = outcome } }
        XCTAssertTrue(eventually { done.withLock { $0 } == .finished }, "plays on the classic path")
        XCTAssertTrue(setup.engine.metrics.description.contains("classic path"))
        XCTAssertEqual(setup.engine.metrics.parameters.bufferFrames, 384, "reopened with the classic request (128 × 3)")
    }

    func testRewindModeAsksForABufferOf20msOrMore() {
        let classic = PlaybackRequest()
        let deep = RewindMode.request(for: classic)
        XCTAssertEqual(deep.periodFrames * deep.periodCount, 1_536, "128 × 3 becomes 512 × 3")
        XCTAssertGreaterThanOrEqual(Double(deep.periodFrames * deep.periodCount) / 48_000, 0.020)
        let asked = PlaybackRequest(periodFrames: 960, periodCount: 4)
        XCTAssertEqual(RewindMode.request(for: asked).periodFrames, 960, "a deep enough request is kept")
        XCTAssertEqual(RewindMode.request(for: asked).periodCount, 4)
        let slow = RewindMode.request(for: PlaybackRequest(sampleRate: 8_000, periodFrames: 16, periodCount: 2))
        XCTAssertGreaterThanOrEqual(slow.periodFrames * slow.periodCount, 160, "20 ms at 8 kHz")
    }

    func testTheSwitchTurnsRewindModeOff() throws {
        let setup = try EngineOnCard(period: 128, periods: 3, rewind: false)
        defer { setup.close() }
        XCTAssertEqual(setup.engine.metrics.rewind, .off)
        XCTAssertEqual(setup.engine.metrics.parameters.bufferFrames, 384, "the request as given")
    }

    func testRewindModeOnTheNullDevice() throws {
        var configuration = SoundEngine.Configuration()
        configuration.output.device = "null"
        let engine = try SoundEngine(configuration: configuration)
        defer { engine.close() }
        let tock = try engine.systemSound(named: "tock")
        XCTAssertTrue(eventually { engine.metrics.rewind == .active })
        engine.play(tock)
        XCTAssertTrue(engine.waitUntilIdle())
        XCTAssertGreaterThanOrEqual(engine.metrics.rewinds, 2)
    }
}
