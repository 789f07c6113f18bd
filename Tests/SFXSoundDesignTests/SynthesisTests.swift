import Foundation
import XCTest
@testable import SFXSoundDesign

final class SynthesisTests: XCTestCase {
    func testExactMathAgreesWithTheCLibrary() {
        for k in -2000...2000 {
            let turns = Double(k) * 0.0123
            XCTAssertEqual(ExactMath.sine(turns: turns), sin(2 * Double.pi * turns), accuracy: 1e-11, "sine \(turns)")
            XCTAssertEqual(ExactMath.cosine(turns: turns), cos(2 * Double.pi * turns), accuracy: 1e-11, "cosine \(turns)")
            let x = Double(k) * 0.01
            XCTAssertEqual(ExactMath.exp(x), Foundation.exp(x), accuracy: Foundation.exp(x) * 1e-13, "exp \(x)")
        }
        XCTAssertEqual(ExactMath.hertz(note: 69), 440, accuracy: 1e-9)
        XCTAssertEqual(ExactMath.hertz(note: 81), 880, accuracy: 1e-9)
        XCTAssertEqual(ExactMath.gain(dB: -20), 0.1, accuracy: 1e-12)
    }

    func testBiquadsPassAndStopWhereDesigned() {
        func gain(_ filter: Biquad, at hertz: Double) -> Double {
            let input = (0..<9600).map { ExactMath.sine(turns: hertz * Double($0) / Signal.sampleRate) }
            let output = filter.process(input).suffix(4800)      // past the settling
            return output.reduce(0) { max($0, abs($1)) }
        }
        XCTAssertEqual(gain(.lowpass(cutoff: 2_000), at: 200), 1, accuracy: 0.01)
        XCTAssertLessThan(gain(.lowpass(cutoff: 2_000), at: 16_000), 0.02)
        XCTAssertEqual(gain(.highpass(cutoff: 20), at: 1_000), 1, accuracy: 0.01)
        XCTAssertLessThan(gain(.highpass(cutoff: 500), at: 50), 0.02)
        XCTAssertEqual(gain(.bandpass(center: 3_000, q: 2), at: 3_000), 1, accuracy: 0.01)
        XCTAssertLessThan(gain(.bandpass(center: 3_000, q: 2), at: 300), 0.1)
    }

    func testStruckEnvelopeFallsSixtyDecibelsInT60() {
        let envelope = Envelope.struck(attack: 0.002, t60: 0.5)
        XCTAssertEqual(envelope.level(at: 0), 0)
        XCTAssertEqual(envelope.level(at: 0.5), 0.001, accuracy: 1e-9)
        XCTAssertEqual(Envelope.gate(attack: 0.01, hold: 0.1, release: 0.05).level(at: 0.16), 0, accuracy: 1e-9)
        XCTAssertEqual(Envelope.gate(attack: 0.01, hold: 0.1, release: 0.05).level(at: 0.2), 0)
        XCTAssertEqual(Envelope.gate(attack: 0.01, hold: 0.1, release: 0.05).level(at: 0.05), 1)
    }

    func testPartialsAboveSixteenKilohertzAreLeftOut() {
        // A glass bar on C8 (4186 Hz): its 2.756 partial (11.5 kHz) stays, its 5.404 partial (22.6 kHz) would alias.
        let power = powerSpectrum(Signal.tone(.glass, note: 108, seconds: 0.2).samples.map(Float.init))
        let binHertz = Signal.sampleRate / 2 / Double(power.count - 1)
        let total = power.reduce(0, +)
        let above = power[Int(16_000 / binHertz)...].reduce(0, +)
        let around11k = power[Int(11_000 / binHertz)..<Int(12_000 / binHertz)].reduce(0, +)
        XCTAssertLessThan(above / total, 1e-5, "only leakage: the partial itself would carry ~5e-4")
        XCTAssertGreaterThan(around11k / total, 1e-3)
    }

    func testMasteringPutsThePeakAtTheGivenLevelAndFadesToExactZero() {
        var loud = Signal.noise(seconds: 0.1, seed: 9)
        loud.mix(Signal(Array(repeating: 0.5, count: 4800)))     // a DC offset to remove
        for level in [-1.0, -17.3] {
            let samples = loud.mastered(peak: level)
            XCTAssertEqual(samples.first, 0)
            XCTAssertEqual(samples.last, 0)
            XCTAssertEqual(Double(samples.map(abs).max()!), amplitude(dBFS: level), accuracy: 1e-6, "\(level) dBFS")
            XCTAssertLessThan(abs(samples.reduce(0) { $0 + Double($1) }) / Double(samples.count), 1e-6)
        }
    }
}
