// Sound in a game's world through the engine, heard on the virtual card: positional plays and
// the listener, the HRTF from libmysofa's default set, an effect bus's reverb, and the one-line
// refusals of values out of range.
import Foundation
import XCTest
import SFXCore
import SFXCardSupport
@testable import SFXPlayback

final class WorldTests: XCTestCase {
    func rms(_ x: [Float]) -> Double { (x.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(x.count, 1))).squareRoot() }
    func decibels(_ a: Double, over b: Double) -> Double { 20 * log10(a / b) }

    /// Plays `tone` once as `play` says, on a fresh engine, and returns the card's left and right channels.
    func heard(adjust: (inout SoundEngine.Configuration) -> Void = { _ in }, tail: Double = 0,
               _ play: (SoundEngine, SoundID) throws -> Void) throws -> (left: [Float], right: [Float]) {
        let setup = try EngineOnCard(adjust: adjust)
        defer { setup.close() }
        let tone = try setup.engine.load(buffer: SoundEngineTests.tone(seconds: 0.3), sampleRate: 48_000, channels: 1)
        try play(setup.engine, tone)
        XCTAssertTrue(setup.engine.waitUntilIdle(timeout: .seconds(10)))
        if tail > 0 { usleep(UInt32(tail * 1e6)) }
        setup.engine.close()
        let recording = try setup.recording()
        return (recording.channel(0), recording.channel(1))
    }

    func testAPositionalPlayIsHeardFromWhereItIs() throws {
        let toneLevel = rms(SoundEngineTests.tone(seconds: 0.3))
        // 4 to the right, inverse clamped from 1: a quarter of the level, all of it on the right.
        let right = try heard { engine, tone in engine.play(tone, at: [4, 0, 0]) }
        // (The recording is longer than the tone: its RMS over all of it is diluted by √(tone / all).)
        XCTAssertEqual(rms(right.right) / toneLevel * (Double(right.right.count) / (0.3 * 48_000)).squareRoot(), 0.25, accuracy: 0.005)
        XCTAssertLessThan(rms(right.left), 1e-4)
        // The listener turned to face +x: the same source is ahead, equal on both sides.
        let ahead = try heard { engine, tone in
            engine.listener = Listener(forward: [1, 0, 0])
            engine.play(tone, at: [4, 0, 0])
        }
        XCTAssertEqual(decibels(rms(ahead.left), over: rms(ahead.right)), 0, accuracy: 0.01)
        XCTAssertGreaterThan(rms(ahead.left), 0.01)
    }

    func testTheDefaultHRTFGivesTheNearEarMore() throws {
        var status = ""
        let side = try heard(adjust: { $0.hrtf = .default }) { engine, tone in
            status = engine.metrics.hrtf
            engine.play(tone, from: Source(position: [3, 0, 0], distanceModel: .none))
        }
        XCTAssertTrue(status.hasPrefix("default.sofa, 48 taps at 48000 Hz"), status)   // SOFAFile.irLength(sampleRate:)
        let ild = decibels(rms(side.right), over: rms(side.left))
        // A tone of 440 and 1250 Hz: the head shadows less at low frequencies than over the band.
        XCTAssertGreaterThan(ild, 3, "a source at 90° right is louder in the right ear (\(ild) dB)")
        let front = try heard(adjust: { $0.hrtf = .default }) { engine, tone in
            engine.play(tone, from: Source(position: [0, 0, -3], distanceModel: .none))
        }
        XCTAssertEqual(decibels(rms(front.right), over: rms(front.left)), 0, accuracy: 1, "ahead, the ears hear alike")
        // Asked for on mono output, it says why it is off.
        let setup = try EngineOnCard(adjust: { $0.hrtf = .default; $0.output.channels = 1 })
        defer { setup.close() }
        XCTAssertEqual(setup.engine.metrics.hrtf, "off: HRTF needs stereo output, the output has 1 channel")
    }

    func testAReverbBusRingsOnAfterTheSoundEnds() throws {
        let soundEnds = Int(0.3 * 48_000)
        let dry = try heard { engine, tone in engine.play(tone, from: Source(position: [0, 0, -1])) }
        let wet = try heard(tail: 0.8) { engine, tone in
            XCTAssertTrue(try engine.setEffect(.reverb(.hall), bus: 2))
            engine.play(tone, from: Source(position: [0, 0, -1]), sends: [0, 0, 0.8, 0])
        }
        let start = { (x: [Float]) in x.firstIndex { $0 != 0 } ?? 0 }
        let after = { (x: [Float]) in Array(x.dropFirst(start(x) + soundEnds + 4_800).prefix(24_000)) }
        XCTAssertLessThan(rms(after(dry.left)), 1e-6, "without the bus, silence after the sound")
        XCTAssertGreaterThan(rms(after(wet.left)), 1e-3, "with it, the hall's tail 0.1 s to 0.6 s after the sound")
        XCTAssertGreaterThan(rms(after(wet.right)), 1e-3)
    }

    func testOutOfRangeValuesAreRefusedInOneLine() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let tone = try setup.engine.load(buffer: SoundEngineTests.tone(seconds: 0.05), sampleRate: 48_000, channels: 1)
        let voice = setup.engine.play(tone, at: [1, 0, 0], loops: -1)
        func line(_ body: () throws -> Void) -> String {
            do { try body(); return "" } catch { return "\(error)" }
        }
        XCTAssertEqual(line { try voice.setCone(inner: 90, outer: 45, outerGain: 0.5, direction: [0, 0, 1]) },
                       "cone.outerAngle 45.0 is out of range: use a number from 90.0 to 360.0")
        XCTAssertEqual(line { try voice.setSend(0.5, bus: 7) }, "bus 7 is out of range: use 0…3")
        XCTAssertEqual(line { try voice.setFilter(.lowPass(cutoff: 5)) }, "filter.cutoff 5.0 is out of range: use a number from 10.0 to 96000.0")
        XCTAssertEqual(line { try setup.engine.setWorld(SpatialWorld(speedOfSound: 0)) },
                       "world.speedOfSound 0.0 is out of range: use a number from 0.001 to 3.4028235e+38")
        let refused = setup.engine.play(tone, from: Source(position: [.nan, 0, 0]))
        let outcome = try XCTUnwrap(waitForOutcome(refused))
        XCTAssertTrue("\(outcome)".contains("source.position"), "\(outcome)")
        voice.stop()
    }

    func waitForOutcome(_ voice: Voice) -> PlayOutcome? {
        let box = OutcomeBox()
        Task { box.set(await voice.outcome) }
        _ = eventually { box.value != nil }
        return box.value
    }
}

final class OutcomeBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: PlayOutcome?
    var value: PlayOutcome? { lock.lock(); defer { lock.unlock() }; return stored }
    func set(_ outcome: PlayOutcome) { lock.lock(); stored = outcome; lock.unlock() }
}
