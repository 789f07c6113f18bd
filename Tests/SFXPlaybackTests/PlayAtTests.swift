import Foundation
import Glibc
import XCTest
import SFXCore
import SFXCardSupport
@testable import SFXPlayback

/// Plays at a time on the engine's clock, against the virtual card's recording: the card logs
/// each sound after silence (an onset) with its stream frame and the CLOCK_MONOTONIC instant it
/// reached the DAC. A mixer frame is the device's stream frame plus `deviceStartFrame`.
final class PlayAtTests: XCTestCase {
    /// 10 ms of a DC level: its first frame is loud enough for the card's onset (-60 dBFS),
    /// whatever the 0.3 ms declick makes of it, and 10 ms of silence follows every one.
    static let blip = [Float](repeating: 0.5, count: 480)

    struct Onset { var frame: Int; var seconds: Double; var fileFrame: Int }

    /// The card's onsets, as mixer frames (read once the engine closed: the card logs at stop).
    static func onsets(_ setup: EngineOnCard) throws -> [Onset] {
        let origin = setup.engine.outputThread.deviceStartFrame.load(ordering: .acquiring)
        return try setup.card.events().compactMap { event in
            guard case .onset(let frame, let dac, let fileFrame) = event.kind else { return nil }
            return Onset(frame: frame + origin, seconds: Double(dac) * 1e-9, fileFrame: fileFrame)
        }
    }

    static func classicEngine(pointer: VirtualCard.PointerGranularity) throws -> EngineOnCard {
        try EngineOnCard(period: 960, periods: 4, card: VirtualCard(pointer: pointer))
    }

    /// Rewind mode with an 85 ms buffer (32 periods of 128 frames), so that a time 30 ms ahead
    /// lies inside what the device already holds.
    static func rewindEngine(pointer: VirtualCard.PointerGranularity) throws -> EngineOnCard {
        try RewindTests.rewindingEngine(period: 512, periods: 8, pointer: pointer)
    }

    // MARK: The classic path

    func testOnTheClassicPathAPlayAtLandsOnItsFrame() throws {
        for pointer in [VirtualCard.PointerGranularity.period, .frame] {
            try assertPlaysLandOnTheirFrames(try Self.classicEngine(pointer: pointer), "classic, pointer \(pointer)")
        }
    }

    func testInRewindModeAPlayAtInsideTheQueuedBufferIsPlacedByRewindingOnItsFrame() throws {
        for pointer in [VirtualCard.PointerGranularity.period, .frame] {
            let setup = try Self.rewindEngine(pointer: pointer)
            XCTAssertTrue(eventually { setup.engine.metrics.rewind == .active }, "\(setup.engine.metrics.rewind)")
            try assertPlaysLandOnTheirFrames(setup, "rewind, pointer \(pointer)", insideBuffer: true)
        }
    }

    /// Three plays at odd frames (not on any period), 50 ms apart; each lands on its frame in
    /// the recording, on time, and the clock's CLOCK_MONOTONIC instant of each frame is the
    /// card's within a period.
    func assertPlaysLandOnTheirFrames(_ setup: EngineOnCard, _ path: String, insideBuffer: Bool = false,
                                      file: StaticString = #filePath, line: UInt = #line) throws {
        defer { setup.close() }
        let engine = setup.engine
        let blip = try engine.load(buffer: Self.blip, sampleRate: 48_000, channels: 1)
        XCTAssertTrue(eventually { engine.clock.isAnchored }, "the device said where its DAC is", file: file, line: line)
        usleep(100_000)
        var targets: [EngineTime] = [], voices: [Voice] = [], expectedSeconds: [Double] = []
        let rewindsBefore = engine.metrics.rewinds
        for n in 0..<3 {
            let target: EngineTime
            if insideBuffer {
                // 30 ms ahead of the DAC: the device holds 42 ms or more beyond it.
                target = engine.clock.now.advanced(by: 1_440 + Int64(n * 17))
                let mixed = engine.outputThread.clockAnchor.mixedFrame.load(ordering: .relaxed)
                XCTAssertLessThan(Int(target.frame), mixed, "\(path): a frame the device already holds", file: file, line: line)
            } else {
                target = engine.clock.nextSchedulable.advanced(by: 4_800 + Int64(n * 2_400 + n * 37 + 1))
            }
            XCTAssertGreaterThanOrEqual(target, engine.clock.nextSchedulable, file: file, line: line)
            targets.append(target)
            voices.append(engine.play(blip, at: target))
            if insideBuffer { usleep(60_000) }
        }
        XCTAssertTrue(engine.waitUntilIdle(timeout: .seconds(5)), file: file, line: line)
        usleep(100_000)
        for target in targets { expectedSeconds.append(try XCTUnwrap(engine.clock.monotonicSeconds(of: target))) }
        let rewinds = engine.metrics.rewinds - rewindsBefore
        let period = Double(engine.metrics.parameters.periodFrames) / 48_000
        engine.close()
        if insideBuffer { XCTAssertGreaterThanOrEqual(rewinds, 3, "\(path): started by rewinding", file: file, line: line) }
        XCTAssertEqual(voices.map(\.lateFrames), [0, 0, 0], "\(path): on time", file: file, line: line)
        let onsets = try Self.onsets(setup)
        XCTAssertEqual(onsets.map(\.frame), targets.map { Int($0.frame) }, "\(path): on their frames", file: file, line: line)
        // The frame before each is silent in the recording, the frame itself is not.
        let recording = try setup.recording()
        for onset in onsets {
            XCTAssertEqual(recording.samples[(onset.fileFrame - 1) * 2], 0, file: file, line: line)
            XCTAssertNotEqual(recording.samples[onset.fileFrame * 2], 0, file: file, line: line)
        }
        for (onset, expected) in zip(onsets, expectedSeconds) {
            XCTAssertEqual(onset.seconds, expected, accuracy: period, "\(path): the clock's instant of the frame is the card's", file: file, line: line)
        }
    }

    // MARK: Late plays

    func testATimeAlreadyPastPlaysAtOnceAndSaysHowLateOnBothPaths() async throws {
        for rewind in [false, true] {
            let setup = rewind ? try Self.rewindEngine(pointer: .frame) : try Self.classicEngine(pointer: .period)
            defer { setup.close() }
            let engine = setup.engine
            if rewind { XCTAssertTrue(eventually { engine.metrics.rewind == .active }) }
            let blip = try engine.load(buffer: Self.blip, sampleRate: 48_000, channels: 1)
            XCTAssertTrue(eventually { engine.clock.isAnchored })
            usleep(100_000)
            let target = engine.clock.now.advanced(by: -2_400)   // 50 ms ago
            let voice = engine.play(blip, at: target)
            let outcome = await voice.outcome
            XCTAssertEqual(outcome, .finished)
            XCTAssertGreaterThan(voice.lateFrames, 2_400, "rewind \(rewind): later than 50 ms")
            XCTAssertLessThan(voice.lateFrames, 48_000, "rewind \(rewind): and not by a second")
            XCTAssertEqual(voice.lateBy, .nanoseconds(Int64(voice.lateFrames) * 1_000_000_000 / 48_000))
            engine.close()
            let onsets = try Self.onsets(setup)
            XCTAssertEqual(onsets.map(\.frame), [Int(target.frame) + voice.lateFrames],
                           "rewind \(rewind): it started exactly as late as it says")
        }
    }

    // MARK: Quantised plays

    func testQuantisedPlaysLandOnTheGrid() throws {
        let setup = try Self.classicEngine(pointer: .frame)
        defer { setup.close() }
        let engine = setup.engine
        let blip = try engine.load(buffer: Self.blip, sampleRate: 48_000, channels: 1)
        XCTAssertTrue(eventually { engine.clock.isAnchored })
        // 250 BPM: a beat is 11,520 frames, a sixteenth 2,880, a bar of 3 beats 34,560.
        let grid = BeatGrid(tempo: 250, start: engine.clock.now.advanced(by: 7), beatsPerBar: 3, subdivision: 4)
        let expected = [engine.nextPoint(of: grid, unit: .subdivision)]
        engine.play(blip, quantizedTo: grid, unit: .subdivision)
        usleep(100_000)
        let bar = engine.nextPoint(of: grid, unit: .bar)
        engine.play(blip, quantizedTo: grid, unit: .bar)
        XCTAssertTrue(engine.waitUntilIdle(timeout: .seconds(5)))
        engine.close()
        let onsets = try Self.onsets(setup).map(\.frame)
        XCTAssertEqual(onsets.count, 2, "\(onsets)")
        XCTAssertTrue(onsets.first.map { abs($0 - Int(expected[0].frame)) <= 2_880 } ?? false)
        for (onset, unit) in zip(onsets, [2_880.0, 34_560.0]) {
            let offset = Double(onset - Int(grid.start.frame))
            XCTAssertEqual(offset / unit, (offset / unit).rounded(), accuracy: 1e-9, "frame \(onset) is on the \(unit)-frame grid")
        }
        XCTAssertEqual(onsets.last, Int(bar.frame))
    }

    func testTheGridIsExactAndNamesABadSetting() throws {
        let grid = BeatGrid(tempo: 120, start: EngineTime(frame: 1_000), beatsPerBar: 4, subdivision: 3)
        XCTAssertEqual(grid.next(.beat, atOrAfter: EngineTime(frame: 1_000), sampleRate: 48_000), EngineTime(frame: 1_000))
        XCTAssertEqual(grid.next(.beat, atOrAfter: EngineTime(frame: 1_001), sampleRate: 48_000), EngineTime(frame: 25_000))
        XCTAssertEqual(grid.next(.bar, atOrAfter: EngineTime(frame: 25_000), sampleRate: 48_000), EngineTime(frame: 97_000))
        XCTAssertEqual(grid.next(.subdivision, atOrAfter: EngineTime(frame: 0), sampleRate: 48_000), EngineTime(frame: 1_000))
        XCTAssertEqual(grid.next(.subdivision, atOrAfter: EngineTime(frame: 1_000 + 8_001), sampleRate: 48_000), EngineTime(frame: 17_000))
        XCTAssertEqual(grid.next(.beat, atOrAfter: EngineTime(frame: -30_000), sampleRate: 48_000), EngineTime(frame: -23_000), "the grid runs back too")
        // 7 points a beat at 100 BPM: 28,800 / 7 frames each, rounded from the start, never drifting.
        let odd = BeatGrid(tempo: 100, start: EngineTime(frame: 0), subdivision: 7)
        XCTAssertEqual(odd.point(7_000, of: .subdivision, sampleRate: 48_000), EngineTime(frame: 28_800_000))
        XCTAssertThrowsError(try BeatGrid(tempo: 0, start: EngineTime(frame: 0)).validate()) {
            XCTAssertTrue("\($0)".hasPrefix("tempo 0.0 is out of range"), "\($0)")
        }
    }

    // MARK: Music on the grid

    /// A player started on a bar of a grid begins on that frame, with a blip on the next beat
    /// of the same grid, on both output paths.
    func testAPlayerStartedOnTheGridSharesItWithEffects() throws {
        for rewind in [false, true] {
            let setup = rewind ? try Self.rewindEngine(pointer: .period) : try Self.classicEngine(pointer: .period)
            defer { setup.close() }
            let engine = setup.engine
            if rewind { XCTAssertTrue(eventually { engine.metrics.rewind == .active }) }
            let url = setup.card.directory.appending(path: "music.wav")
            try WAVAudio(sampleRate: 48_000, channels: 1, samples: [Float](repeating: 0.2, count: 4_800)).write(to: url)
            let player = try engine.makePlayer(contentsOf: url)
            let blip = try engine.load(buffer: Self.blip, sampleRate: 48_000, channels: 1)
            XCTAssertTrue(eventually { engine.clock.isAnchored })
            usleep(50_000)
            let grid = BeatGrid(tempo: 200, start: engine.clock.now.advanced(by: 4_801), beatsPerBar: 4)   // 14,400-frame beats
            let bar = engine.nextPoint(of: grid, unit: .bar)
            try player.play(at: bar)
            let beat = grid.point(1, of: .beat, sampleRate: 48_000)
            XCTAssertEqual(bar, grid.start)
            engine.play(blip, at: beat)
            XCTAssertTrue(eventually { engine.clock.now > beat.advanced(by: 4_800) })
            XCTAssertTrue(engine.waitUntilIdle(timeout: .seconds(5)))
            engine.close()
            XCTAssertEqual(try Self.onsets(setup).map(\.frame), [Int(bar.frame), Int(beat.frame)], "rewind \(rewind)")
        }
    }

    // MARK: The schedule's limit

    func testPlaysFarAheadDoNotHoldTheQueueAndOneTooManyIsRejected() async throws {
        let setup = try Self.classicEngine(pointer: .frame)
        defer { setup.close() }
        let engine = setup.engine
        let blip = try engine.load(buffer: Self.blip, sampleRate: 48_000, channels: 1)
        let far = engine.clock.now.advanced(by: 48_000 * 3_600)
        let waiting = (0..<Mixer.scheduleCapacity).map { _ in engine.play(blip, at: far) }
        let refused = engine.play(blip, at: far)
        let outcome = await refused.outcome
        XCTAssertEqual(outcome, .rejected(.scheduleFull))
        XCTAssertTrue("\(outcome)".contains("64 plays at future times wait already"), "\(outcome)")
        // A plain play is not held behind them.
        let now = await engine.play(blip).outcome
        XCTAssertEqual(now, .finished)
        engine.stopAll()
        for voice in waiting {
            let ended = await voice.outcome
            XCTAssertEqual(ended, .stopped, "a stop cancels a play still waiting")
        }
    }
}
