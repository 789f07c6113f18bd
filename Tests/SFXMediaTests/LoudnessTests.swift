import Foundation
import SFXCore
import XCTest
@testable import SFXMedia

/// `Loudness` against figures computed from BS.1770's own definition: a 997 Hz sine passes the
/// K-weighting at 0 dB, so a sine of amplitude A in both channels (mean square A²/2 each, summed)
/// reads 20·log10(A) LUFS, as EBU Tech 3341's test signals do.
final class LoudnessTests: TemporaryDirectoryTestCase {
    func sine(seconds: Double, amplitude: Double, channels: Int, frequency: Double = 997, phase: Double = 0) -> [Float] {
        let frames = Int(seconds * 48_000)
        return (0..<frames).flatMap { frame in
            Array(repeating: Float(amplitude * sin(2 * .pi * frequency * Double(frame) / 48_000 + phase)), count: channels)
        }
    }

    func testASineInBothChannelsReadsItsAmplitudeInLUFS() throws {
        for amplitude in [0.5, 0.1, 0.0224] {     // −6.02, −20, −33.0
            let loudness = try Loudness(interleaved: sine(seconds: 2, amplitude: amplitude, channels: 2), sampleRate: 48_000, channels: 2)
            let expected = 20 * log10(amplitude)
            XCTAssertEqual(try XCTUnwrap(loudness.integrated), expected, accuracy: 0.1, "amplitude \(amplitude)")
            XCTAssertEqual(loudness.lufs, loudness.integrated)
            XCTAssertEqual(loudness.method, "integrated")
            XCTAssertEqual(try XCTUnwrap(loudness.momentaryMax), expected, accuracy: 0.1)
            XCTAssertEqual(loudness.duration, 2, accuracy: 1e-9)
        }
    }

    func testMonoCountsOnBothSpeakersAsSfxPlaysIt() throws {
        let mono = try Loudness(interleaved: sine(seconds: 1, amplitude: 0.1, channels: 1), sampleRate: 48_000, channels: 1)
        XCTAssertEqual(try XCTUnwrap(mono.lufs), -20, accuracy: 0.1, "not −23: one speaker would be 3 dB quieter")
    }

    func testASoundUnder400msIsItsEnergyOver400ms() throws {
        // 100 ms at −20 LUFS, alone in a 400 ms window: a quarter of the energy, −6.02 LU.
        let click = try Loudness(interleaved: sine(seconds: 0.1, amplitude: 0.1, channels: 2), sampleRate: 48_000, channels: 2)
        XCTAssertNil(click.integrated, "no whole 400 ms block")
        XCTAssertEqual(click.method, "momentary max")
        XCTAssertEqual(try XCTUnwrap(click.lufs), -20 + 10 * log10(0.25), accuracy: 0.15)
        XCTAssertEqual(click.lufs, click.momentaryMax)
    }

    func testIntegratedLoudnessGatesOutTheQuietPart() throws {
        // 2 s at −20 then 2 s at −60: ungated, the mean would be −23.0; the relative gate drops the
        // quiet blocks, leaving the loud ones and the three that straddle the change (−20.3).
        let samples = sine(seconds: 2, amplitude: 0.1, channels: 2) + sine(seconds: 2, amplitude: 0.001, channels: 2)
        let loudness = try Loudness(interleaved: samples, sampleRate: 48_000, channels: 2)
        XCTAssertEqual(try XCTUnwrap(loudness.lufs), -20.34, accuracy: 0.15)
    }

    func testTruePeakSeesThePeakBetweenSamples() throws {
        // A quarter-rate sine at 45°: every sample is ±0.354 (−9.0 dBFS), its peak 0.5 (−6.0).
        let samples = sine(seconds: 0.5, amplitude: 0.5, channels: 2, frequency: 12_000, phase: .pi / 4)
        XCTAssertEqual(Double(samples.map(abs).max()!), 0.5 / 2.0.squareRoot(), accuracy: 1e-6)
        let loudness = try Loudness(interleaved: samples, sampleRate: 48_000, channels: 2)
        XCTAssertEqual(try XCTUnwrap(loudness.truePeak), 20 * log10(0.5), accuracy: 0.5)
    }

    func testTruePeakAtTheVeryEndOfASoundIsFound() throws {
        // The sound ends on a few cycles of the quarter-rate sine (true peak −6.0 dBTP, samples
        // −9.0 dBFS), right before the oversampling filter's delay would run out of samples.
        let burst = sine(seconds: 16.0 / 48_000, amplitude: 0.5, channels: 1, frequency: 12_000, phase: .pi / 4)
        let samples = [Float](repeating: 0, count: 464) + burst
        let loudness = try Loudness(interleaved: samples, sampleRate: 48_000, channels: 1)
        XCTAssertEqual(try XCTUnwrap(loudness.truePeak), 20 * log10(0.5), accuracy: 0.5)
    }

    func testSilenceHasNoLoudnessAndNoPeak() throws {
        let loudness = try Loudness(interleaved: [Float](repeating: 0, count: 96_000), sampleRate: 48_000, channels: 2)
        XCTAssertNil(loudness.lufs)
        XCTAssertNil(loudness.truePeak)
        let quiet = try Loudness(interleaved: sine(seconds: 1, amplitude: 0.0001, channels: 2), sampleRate: 48_000, channels: 2)
        XCTAssertNil(quiet.lufs, "−80 LUFS is under the −70 LUFS gate")
        XCTAssertNotNil(quiet.truePeak)
    }

    func testAFileMeasuresAsItsSamples() throws {
        // 2.5 s, read a second at a time, measures as the same samples in one buffer.
        let samples = sine(seconds: 2.5, amplitude: 0.2, channels: 2)
        let url = directory.file("tone.wav")
        try AudioFileWriter.write(samples, sampleRate: 48_000, channels: 2, to: url, as: .wavFloat32)
        let fromFile = try Loudness(contentsOf: url)
        let fromBuffer = try Loudness(interleaved: samples, sampleRate: 48_000, channels: 2)
        XCTAssertEqual(fromFile, fromBuffer)
        XCTAssertEqual(try XCTUnwrap(fromFile.lufs), 20 * log10(0.2), accuracy: 0.2)
    }

    func testHowTheSamplesArriveDoesNotChangeTheResult() throws {
        // A crescendo that stops between two 10 ms steps, then silence. Fed in two pieces split
        // right at the stop, it must measure as one buffer does: windows end every 10 ms from
        // the start, not wherever a piece happens to end.
        let stop = 48_245
        let crescendo = sine(seconds: Double(stop) / 48_000, amplitude: 0.5, channels: 2).enumerated().map { i, s in
            s * Float(Double(i / 2) / Double(stop))
        }
        let samples = crescendo + [Float](repeating: 0, count: 96_000)
        let meter = try LoudnessMeter(sampleRate: 48_000, channels: 2, subject: "crescendo")
        samples[..<(2 * stop)].withUnsafeBufferPointer { meter.add($0) }
        samples[(2 * stop)...].withUnsafeBufferPointer { meter.add($0) }
        XCTAssertEqual(meter.finish(), try Loudness(interleaved: samples, sampleRate: 48_000, channels: 2))
    }

    func testMeasuringAFileFailsAsDecodingDoes() throws {
        XCTAssertThrowsError(try Loudness(contentsOf: directory.file("missing.wav"))) { error in
            XCTAssertEqual((error as? MediaError)?.reason, .missingFile)
        }
        let text = try directory.write("notes.wav", Data("just some text\n".utf8))
        XCTAssertThrowsError(try Loudness(contentsOf: text)) { error in
            guard case .notAudio = (error as? MediaError)?.reason else { return XCTFail("\(error)") }
        }
    }

    func testABufferOfPartFramesIsRefusedInOneLine() {
        XCTAssertThrowsError(try Loudness(interleaved: [0.1, 0.2, 0.3], sampleRate: 48_000, channels: 2, subject: "beep")) { error in
            XCTAssertTrue(String(describing: error).hasPrefix("beep: "), "\(error)")
            XCTAssertFalse(String(describing: error).contains("\n"))
        }
    }
}
