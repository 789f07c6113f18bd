import Foundation
import SFXCore
import XCTest
@testable import SFXMedia

final class DecoderTests: TemporaryDirectoryTestCase {

    private func write(_ samples: [Float], rate: Int, channels: Int, _ encoding: AudioFileEncoding, _ name: String) throws -> URL {
        let url = directory.file(name)
        try writeFixture(samples, rate: rate, channels: channels, to: url, as: encoding)
        return url
    }

    /// libsndfile writes floats to 16-bit as lrintf(x · 32767), ties to even, and reads 16-bit as n / 32768.
    private func sixteenBitRoundTrip(_ x: Float) -> Float { (x * 32_767).rounded(.toNearestOrEven) / 32_768 }

    func testLosslessFormatsDecodeSampleExact() throws {
        let samples = Signal.sixteenBitRamp(frames: 4_800, channels: 2)
        let decoder = AudioDecoder(format: AudioFormat(sampleRate: 48_000, channels: 2))
        for encoding in [AudioFileEncoding.wavFloat32, .cafFloat32] {
            let cue = try decoder.decode(contentsOf: try write(samples, rate: 48_000, channels: 2, encoding, "ramp-\(encoding)"))
            XCTAssertEqual(cue.sampleArray, samples, "\(encoding) is not sample-exact")
        }
        for encoding in [AudioFileEncoding.wavPCM16, .flac16, .aiffPCM16] {
            let cue = try decoder.decode(contentsOf: try write(samples, rate: 48_000, channels: 2, encoding, "ramp-\(encoding)"))
            XCTAssertEqual(cue.frameCount, 4_800, "\(encoding)")
            XCTAssertEqual(cue.sampleArray, samples.map(sixteenBitRoundTrip), "\(encoding) is not sample-exact")
        }
        for encoding in [AudioFileEncoding.wavPCM24, .flac24] {
            let cue = try decoder.decode(contentsOf: try write(samples, rate: 48_000, channels: 2, encoding, "ramp-\(encoding)"))
            XCTAssertEqual(cue.frameCount, 4_800, "\(encoding)")
            let worst = zip(cue.sampleArray, samples).map { abs($0 - $1) }.max() ?? 1
            XCTAssertLessThanOrEqual(worst, 1.0 / 8_388_608 + 1e-9, "\(encoding) is off by more than one 24-bit step")
        }
    }

    func testLossyFormatsDecodeWithinTolerance() throws {
        let sine = Signal.sine(frequency: 440, sampleRate: 48_000, frames: 48_000)
        let decoder = AudioDecoder(format: AudioFormat(sampleRate: 48_000, channels: 1))
        for encoding in [AudioFileEncoding.oggVorbis, .oggOpus, .mp3] {
            let cue = try decoder.decode(contentsOf: try write(sine, rate: 48_000, channels: 1, encoding, "sine-\(encoding)"))
            XCTAssertEqual(Double(cue.frameCount), 48_000, accuracy: 2_400, "\(encoding) length")
            XCTAssertEqual(Signal.frequency(of: cue.sampleArray, sampleRate: 48_000), 440, accuracy: 1, "\(encoding) pitch")
            XCTAssertEqual(Signal.rms(cue.sampleArray), 0.5 / 2.0.squareRoot(), accuracy: 0.05, "\(encoding) level")
        }
    }

    func testResampling44100To48000KeepsFrequencyAndLength() throws {
        let frames = 44_100 / 2 + 7
        let url = try write(Signal.sine(frequency: 1_000, sampleRate: 44_100, frames: frames), rate: 44_100, channels: 1, .wavFloat32, "sine.wav")
        let cue = try AudioDecoder(format: AudioFormat(sampleRate: 48_000, channels: 1)).decode(contentsOf: url)
        XCTAssertEqual(cue.frameCount, Int((Double(frames) * 48_000 / 44_100).rounded()))
        XCTAssertEqual(Signal.frequency(of: cue.sampleArray, sampleRate: 48_000), 1_000, accuracy: 0.5)
        // The tail is flushed: the last 10 ms still carry the sine at full level.
        let tail = cue.sampleArray.suffix(480)
        XCTAssertEqual(Signal.rms(tail), 0.5 / 2.0.squareRoot(), accuracy: 0.05)
    }

    func testResamplerGivesTheIdealLengthForManyRatios() throws {
        for (input, output, frames) in [(44_100, 48_000, 1), (8_000, 48_000, 333), (96_000, 48_000, 12_345), (22_050, 44_100, 99), (48_000, 44_100, 4_801)] {
            let result = try Resampler.resample(Signal.sine(frequency: 200, sampleRate: input, frames: frames, channels: 2),
                                                channels: 2, from: input, to: output)
            XCTAssertEqual(result.count, 2 * Resampler.idealLength(frames: frames, from: input, to: output), "\(input)→\(output) × \(frames)")
        }
    }

    func testMonoToStereoDuplicatesAndStereoToMonoAverages() throws {
        let mono = Signal.sixteenBitRamp(frames: 100, channels: 1)
        let stereoCue = try AudioDecoder(format: .standard)
            .decode(contentsOf: try write(mono, rate: 48_000, channels: 1, .wavPCM16, "mono.wav"))
        XCTAssertEqual(Signal.channel(0, of: stereoCue.sampleArray, channels: 2), mono.map(sixteenBitRoundTrip))
        XCTAssertEqual(Signal.channel(1, of: stereoCue.sampleArray, channels: 2), mono.map(sixteenBitRoundTrip))

        let stereo: [Float] = (0..<100).flatMap { [Float($0) / 128, -0.25] }
        let monoCue = try AudioDecoder(format: AudioFormat(sampleRate: 48_000, channels: 1))
            .decode(contentsOf: try write(stereo, rate: 48_000, channels: 2, .wavFloat32, "stereo.wav"))
        XCTAssertEqual(monoCue.sampleArray, (0..<100).map { (Float($0) / 128 - 0.25) / 2 })
    }

    func testFivePointOneDownmixUsesITUWeights() throws {
        // One frame per channel lit alone: FL FR FC LFE BL BR.
        let frames = (0..<6).flatMap { lit in (0..<6).map { $0 == lit ? Float(0.5) : 0 } }
        let cue = try AudioDecoder(format: .standard)
            .decode(contentsOf: try write(frames, rate: 48_000, channels: 6, .wavFloat32, "surround.wav"))
        let half: Float = 0.707_106_77
        let sum: Float = 1 + 2 * half
        let full: Float = 1 / sum
        let side: Float = half / sum
        let expected: [(Float, Float)] = [(full, 0), (0, full), (side, side), (0, 0), (side, 0), (0, side)]
        for (frame, (left, right)) in expected.enumerated() {
            XCTAssertEqual(cue.sampleArray[2 * frame], 0.5 * left, accuracy: 1e-6, "frame \(frame) left")
            XCTAssertEqual(cue.sampleArray[2 * frame + 1], 0.5 * right, accuracy: 1e-6, "frame \(frame) right")
        }
    }

    func testUnlabelledChannelsAverageWithEqualWeight() throws {
        let matrix = ChannelMatrix(sourceChannels: 3, map: nil, targetChannels: 2)
        let third: Float = 1 / 3
        XCTAssertEqual(matrix.rows, [[third, third, third], [third, third, third]])
        let unknown = ChannelMatrix(sourceChannels: 2, map: [.invalid, .left], targetChannels: 1)
        XCTAssertEqual(unknown.rows, [[0.5, 0.5]])
    }

    func testBufferPathSharesTheConversion() throws {
        let decoder = AudioDecoder(format: .standard)
        let buffer: [Float] = (0..<300).flatMap { [Float($0) / 512, 0.125, -0.125] }
        let cue = try decoder.cue(interleaved: buffer, sampleRate: 48_000, channels: 3,
                                  channelMap: [.frontLeft, .frontRight, .lfe], name: "three")
        XCTAssertEqual(cue.name, "three")
        XCTAssertEqual(cue.frameCount, 300)
        XCTAssertEqual(Signal.channel(0, of: cue.sampleArray, channels: 2), (0..<300).map { Float($0) / 512 })
        XCTAssertEqual(Signal.channel(1, of: cue.sampleArray, channels: 2), Array(repeating: 0.125, count: 300))

        let resampled = try decoder.cue(interleaved: Signal.sine(frequency: 500, sampleRate: 16_000, frames: 8_000),
                                        sampleRate: 16_000, channels: 1, name: "beep")
        XCTAssertEqual(resampled.frameCount, 24_000)
        XCTAssertEqual(Signal.frequency(of: Signal.channel(1, of: resampled.sampleArray, channels: 2), sampleRate: 48_000), 500, accuracy: 0.5)
    }

    func testBufferErrors() {
        let decoder = AudioDecoder(format: .standard, limits: CueLimits(maximumDuration: 1))
        assertMediaError({ try decoder.cue(interleaved: [0, 0, 0], sampleRate: 48_000, channels: 2, name: "odd") }) {
            if case .invalidBuffer = $0 { return true } else { return false }
        }
        assertMediaError({ try decoder.cue(interleaved: [], sampleRate: 48_000, channels: 1, name: "empty") }) {
            if case .invalidBuffer = $0 { return true } else { return false }
        }
        assertMediaError({ try decoder.cue(interleaved: [0], sampleRate: 0, channels: 1, name: "norate") }) {
            if case .invalidBuffer = $0 { return true } else { return false }
        }
        assertMediaError({ try decoder.cue(interleaved: [.nan], sampleRate: 8_000, channels: 1, name: "nan") }) {
            if case .invalidBuffer = $0 { return true } else { return false }
        }
        assertMediaError({ try decoder.cue(interleaved: [0, 0], sampleRate: 8_000, channels: 2, channelMap: [.left], name: "map") }) {
            if case .invalidBuffer = $0 { return true } else { return false }
        }
        let long = [Float](repeating: 0, count: 8_001)
        let error = assertMediaError({ try decoder.cue(interleaved: long, sampleRate: 8_000, channels: 1, name: "long") }) {
            $0 == .tooLong(seconds: 8_001 / 8_000, limit: 1)
        }
        XCTAssertTrue(error?.description.contains("CueLimits.maximumDuration") ?? false)
    }
}
