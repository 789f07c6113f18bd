import Foundation
import SFXCore
import XCTest
@testable import SFXMedia

final class LoudnessNormalizationTests: XCTestCase {
    let format = AudioFormat(sampleRate: 48_000, channels: 2)

    /// A stereo cue of a 997 Hz sine of `amplitude` (it reads 20·log10(amplitude) LUFS).
    func sineCue(seconds: Double, amplitude: Double) -> Cue {
        let frames = Int(seconds * 48_000)
        let samples = (0..<frames).flatMap { i in
            Array(repeating: Float(amplitude * sin(2 * .pi * 997 * Double(i) / 48_000)), count: 2)
        }
        return Cue(name: "tone", format: format, interleaved: samples)
    }

    func testAQuietSoundIsRaisedToTheTarget() throws {
        let cue = sineCue(seconds: 1, amplitude: 0.01)                     // −40 LUFS
        let normalized = try LoudnessNormalization(target: -23).apply(to: cue)
        let samples = normalized.sampleArray
        // Every sample is the original times one gain: 17 dB.
        let gain = pow(10, 17.0 / 20)
        for (a, b) in zip(cue.sampleArray, samples).prefix(2000) {
            XCTAssertEqual(Double(b), Double(a) * gain, accuracy: 2e-3 * 0.01 * gain)
        }
        let measured = try Loudness(interleaved: samples, sampleRate: 48_000, channels: 2)
        XCTAssertEqual(try XCTUnwrap(measured.lufs), -23, accuracy: 0.1)
        XCTAssertEqual(normalized.name, cue.name)
        XCTAssertEqual(normalized.format, cue.format)
        XCTAssertEqual(normalized.frameCount, cue.frameCount)
    }

    func testALoudSoundIsLowered() throws {
        let normalized = try LoudnessNormalization.standard.apply(to: sineCue(seconds: 1, amplitude: 0.5))   // −6 LUFS
        let measured = try Loudness(interleaved: normalized.sampleArray, sampleRate: 48_000, channels: 2)
        XCTAssertEqual(try XCTUnwrap(measured.lufs), LoudnessNormalization.standardTarget, accuracy: 0.1)
    }

    func testTheGainStopsAtTheTruePeakCeiling() throws {
        // A spiky sound: one full click every 100 ms. At −10 LUFS its peaks would pass −1 dBTP,
        // so it stays quieter than asked, with its true peak at the ceiling.
        var samples = [Float](repeating: 0, count: 48_000 * 2)
        for i in stride(from: 2400, to: 48_000, by: 4800) { samples[2 * i] = 0.2; samples[2 * i + 1] = 0.2 }
        let cue = Cue(name: "clicks", format: format, interleaved: samples)
        let before = try Loudness(interleaved: samples, sampleRate: 48_000, channels: 2)
        let normalization = LoudnessNormalization(target: -10)
        let gain = try normalization.gain(for: before, subject: "clicks")
        XCTAssertEqual(gain, -1 - before.truePeak!, accuracy: 1e-9, "limited by the peak, not the target")
        XCTAssertLessThan(gain, -10 - before.lufs!)
        let after = try Loudness(interleaved: try normalization.apply(to: cue).sampleArray, sampleRate: 48_000, channels: 2)
        XCTAssertEqual(try XCTUnwrap(after.truePeak), -1, accuracy: 0.01)
        XCTAssertLessThan(try XCTUnwrap(after.lufs), -10.5)
    }

    func testSilenceCannotBeNormalisedAndSaysSoInOneLine() {
        let cue = Cue(name: "hush.wav", format: format, interleaved: [Float](repeating: 0, count: 9600))
        XCTAssertThrowsError(try LoudnessNormalization.standard.apply(to: cue)) { error in
            let media = error as? MediaError
            XCTAssertEqual(media?.reason, .silent)
            XCTAssertEqual(media?.subject, "hush.wav")
            let line = String(describing: error)
            XCTAssertTrue(line.hasPrefix("hush.wav: is silent"), line)
            XCTAssertTrue(line.contains("without normalising"), line)
            XCTAssertFalse(line.contains("\n"))
        }
    }
}
