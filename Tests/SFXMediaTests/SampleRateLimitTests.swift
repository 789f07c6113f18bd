import Foundation
import SFXCore
import XCTest
@testable import SFXMedia

/// Sample rates at and past the limits (`SoundFile.sampleRates`, 1,000 to 768,000 Hz), and
/// conversions whose memory does not grow with the ratio of the rates: a 20-frame WAV at 1 Hz
/// took 1.6 GB to load, because the resampler's scratch buffer was one block's output (4,096
/// frames × 48,000).
final class SampleRateLimitTests: TemporaryDirectoryTestCase {
    /// A 16-bit PCM WAV of `frames` frames at `rate`, written byte by byte (libsndfile would
    /// write the rate too, but the point is a file as an attacker makes it).
    func wav(rate: UInt32, channels: UInt16 = 1, frames: Int) throws -> URL {
        var data = Data()
        func le<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        let bytes = frames * Int(channels) * 2
        data.append(contentsOf: Array("RIFF".utf8)); le(UInt32(36 + bytes)); data.append(contentsOf: Array("WAVEfmt ".utf8))
        le(UInt32(16)); le(UInt16(1)); le(channels); le(rate); le(rate &* UInt32(channels) &* 2); le(channels * 2); le(UInt16(16))
        data.append(contentsOf: Array("data".utf8)); le(UInt32(bytes))
        for i in 0..<(frames * Int(channels)) { le(Int16(truncatingIfNeeded: (i * 997) % 20_000 - 10_000)) }
        let url = directory.file("rate-\(rate)-\(channels)ch.wav")
        try data.write(to: url)
        return url
    }

    func testRatesBelowOneKilohertzAreRefusedWithOneLineThatSaysWhatToDo() throws {
        for rate: UInt32 in [1, 2, 999] {
            let url = try wav(rate: rate, frames: 20)
            let error = assertMediaError({ try AudioDecoder(format: .standard).decode(contentsOf: url) }) {
                $0 == .unsupportedSampleRate(Int(rate), accepted: 1_000...768_000)
            }
            XCTAssertEqual(error?.description,
                           "\(url.path): has a sample rate of \(rate) Hz, outside the 1000 to 768000 Hz sfx plays; "
                           + "resample it, e.g. `sox \(url.path) -r 48000 out.wav`")
            assertMediaError({ try AudioFileInfo(contentsOf: url) }) { $0 == .unsupportedSampleRate(Int(rate), accepted: 1_000...768_000) }
            assertMediaError({ try StreamReader(file: RawFilePath(url.path), format: .standard) }) { $0 == .unsupportedSampleRate(Int(rate), accepted: 1_000...768_000) }
        }
    }

    func testABufferBelowOneKilohertzIsRefused() {
        assertMediaError({ try AudioDecoder(format: .standard).cue(interleaved: [Float](repeating: 0.1, count: 20), sampleRate: 1, channels: 1, name: "pcm") }) {
            if case .invalidBuffer(let detail) = $0 { return detail.contains("1 Hz is outside the 1000 to 768000 Hz") }
            return false
        }
    }

    func testTheLowestAndHighestRatesLoadAtTheirIdealLength() throws {
        for (rate, frames) in [(UInt32(1_000), 1_000), (UInt32(768_000), 76_800)] {
            let cue = try AudioDecoder(format: .standard).decode(contentsOf: try wav(rate: rate, frames: frames))
            XCTAssertEqual(cue.frameCount, Resampler.idealLength(frames: frames, from: Int(rate), to: 48_000), "\(rate) Hz")
        }
    }

    /// The conversion's own buffers are a fixed block whatever the ratio: 1,000 Hz into a
    /// 384,000 Hz mixer (the widest ratio the limits allow) needs the same scratch as 44.1 into 48.
    func testConversionBuffersDoNotGrowWithTheRatio() throws {
        for (from, to) in [(44_100, 48_000), (1_000, 48_000), (1_000, 384_000)] {
            let cue = try StreamingResampler(channels: 2, from: from, to: to, blockFrames: AudioDecoder.blockFrames)
            XCTAssertEqual(cue.scratchSamples, StreamingResampler.scratchFrames * 2, "\(from) → \(to)")
            let stream = try BlockResampler(channels: 2, from: from, to: to, blockFrames: StreamReader.blockFrames)
            XCTAssertLessThanOrEqual(stream.maximumOutput, BlockResampler.outputBlockFrames, "\(from) → \(to)")
        }
    }
}
