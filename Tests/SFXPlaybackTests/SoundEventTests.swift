import Foundation
import Synchronization
import XCTest
import SFXCore
@testable import SFXPlayback

/// SoundEvent's draws against PCG32's published output and an independent implementation, the
/// shuffle's no-repeat rule, and cooldown and caps with eight threads triggering at once.
final class SoundEventTests: XCTestCase {
    private static let ids = (0..<6).map { SoundID(rawValue: 70_000 + $0) }

    /// pcg-c-basic's pcg32-demo prints these for pcg32_srandom_r(&rng, 42, 54).
    func testPCG32GivesTheReferenceOutput() {
        var rng = PCG32(seed: 42, sequence: 54)
        XCTAssertEqual((0..<6).map { _ in rng.next32() },
                       [0xa15c02b7, 0x7b47f409, 0xba1d3330, 0x83d2f293, 0xbfa4784b, 0xcbed606e])
    }

    /// The draws for a seed equal those of the Python script below, which implements PCG32 and
    /// the documented draw order on its own.
    func testDrawsMatchAnIndependentImplementation() throws {
        for choose in SoundEvent.Selection.allCases {
            let event = try SoundEvent(name: "step", sounds: Self.ids, choose: choose, pitch: -2...3, volume: -6...0, seed: 2026)
            let expected = try Self.python(choose: choose.rawValue, seed: 2026, count: 300, sounds: 6,
                                           pitch: (-2, 3), volume: (-6, 0))
            for (n, line) in expected.enumerated() {
                let draw = event.draw()
                XCTAssertEqual(draw.index, Int(line[0]), "\(choose) draw \(n)")
                XCTAssertEqual(draw.semitones, Float(line[1])!, accuracy: 1e-5, "\(choose) draw \(n)")
                XCTAssertEqual(draw.decibels, Float(line[2])!, accuracy: 1e-5, "\(choose) draw \(n)")
            }
        }
    }

    func testShuffleNeverRepeatsInTenThousandPlays() throws {
        for count in [2, 3, 6] {
            let event = try SoundEvent(name: "step", sounds: Array(Self.ids.prefix(count)), choose: .shuffle, seed: 7)
            var last = -1
            var round: [Int] = []
            for n in 0..<10_000 {
                let index = event.draw().index
                XCTAssertNotEqual(index, last, "\(count) sounds: play \(n) repeats the one before")
                last = index
                round.append(index)
                if round.count == count {
                    XCTAssertEqual(Set(round).count, count, "each round plays every sound once")
                    round = []
                }
            }
        }
    }

    func testRangesOutOfBoundsAreRefused() {
        XCTAssertThrowsError(try SoundEvent(name: "x", sounds: []))
        XCTAssertThrowsError(try SoundEvent(name: "x", sounds: Self.ids, pitch: -13...0))
        XCTAssertThrowsError(try SoundEvent(name: "x", sounds: Self.ids, volume: 0...30))
        XCTAssertThrowsError(try SoundEvent(name: "x", sounds: Self.ids, cooldown: .seconds(-1)))
    }

    /// 8 threads × 50 triggers at once, cooldown 60 s: exactly one play starts.
    func testCooldownHoldsUnderEightThreads() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let tone = try setup.engine.load(buffer: SoundEngineTests.tone(seconds: 0.05), sampleRate: 48_000, channels: 1)
        let event = try SoundEvent(name: "coin", sounds: [tone], cooldown: .seconds(60))
        let outcomes = Mutex<[PlayOutcome]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<50 {
                setup.engine.play(event) { outcome in outcomes.withLock { $0.append(outcome) } }
            }
        }
        XCTAssertTrue(eventually(timeout: 20) { outcomes.withLock { $0.count } == 400 })
        let all = outcomes.withLock { $0 }
        XCTAssertEqual(all.filter { $0 == .rejected(.cooldown) }.count, 399)
        XCTAssertEqual(all.filter { $0 == .finished }.count, 1)
    }

    /// 8 threads × 10 triggers of a long sound with a cap of 3: never more than 3 sound, 77 are
    /// stolen, and the card never mixes more than 3 voices of it.
    func testInstanceCapHoldsUnderEightThreads() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let tone = try setup.engine.load(buffer: SoundEngineTests.tone(seconds: 3), sampleRate: 48_000, channels: 1)
        let event = try SoundEvent(name: "step", sounds: [tone], maxInstances: 3)
        let outcomes = Mutex<[PlayOutcome]>([])
        let most = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<10 {
                setup.engine.play(event) { outcome in outcomes.withLock { $0.append(outcome) } }
                most.max(event.activeVoices, ordering: .relaxed)
                most.max(setup.engine.metrics.activeVoices - 3, ordering: .relaxed)   // fading victims aside
            }
        }
        XCTAssertTrue(eventually(timeout: 20) { outcomes.withLock { $0.count } >= 77 })
        XCTAssertLessThanOrEqual(event.activeVoices, 3)
        setup.engine.stopAll()
        XCTAssertTrue(eventually(timeout: 20) { outcomes.withLock { $0.count } == 80 })
        let all = outcomes.withLock { $0 }
        XCTAssertEqual(all.filter { $0 == .stolen }.count, 77)
        XCTAssertEqual(all.filter { $0 == .stopped }.count, 3)
        XCTAssertLessThanOrEqual(most.load(ordering: .relaxed), 3)
        XCTAssertEqual(event.activeVoices, 0)
    }

    /// Runs the reference script: one line per draw, "index semitones decibels".
    static func python(choose: String, seed: UInt64, count: Int, sounds: Int,
                       pitch: (Float, Float), volume: (Float, Float)) throws -> [[Substring]] {
        let script = """
        import sys
        M = (1 << 64) - 1
        class PCG32:
            def __init__(self, seed, seq=54):
                self.state = 0; self.inc = ((seq << 1) | 1) & M
                self.next(); self.state = (self.state + seed) & M; self.next()
            def next(self):
                old = self.state
                self.state = (old * 6364136223846793005 + self.inc) & M
                x = (((old >> 18) ^ old) >> 27) & 0xffffffff
                r = old >> 59
                return ((x >> r) | (x << ((-r) & 31))) & 0xffffffff
            def bounded(self, bound):
                threshold = (2**32 - bound) % bound
                while True:
                    r = self.next()
                    if r >= threshold: return r % bound
            def unit(self): return (self.next() >> 8) / 16777216
        choose, seed, count, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
        p0, p1, v0, v1 = map(float, sys.argv[5:9])
        g = PCG32(seed); bag = []; last = None; nxt = 0
        for _ in range(count):
            if choose == "random": i = g.bounded(n)
            elif choose == "roundRobin": i = nxt; nxt = (nxt + 1) % n
            else:
                if not bag:
                    b = list(range(n))
                    for k in range(n - 1, 0, -1):
                        j = g.bounded(k + 1); b[k], b[j] = b[j], b[k]
                    if n > 1 and b[0] == last:
                        j = 1 + g.bounded(n - 1); b[0], b[j] = b[j], b[0]
                    bag = b
                i = bag.pop(0)
            last = i
            p = g.unit(); v = g.unit()
            print(i, p0 + p * (p1 - p0), v0 + v * (v1 - v0))
        """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script, choose, "\(seed)", "\(count)", "\(sounds)",
                             "\(pitch.0)", "\(pitch.1)", "\(volume.0)", "\(volume.1)"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map { $0.split(separator: " ") }
    }
}
