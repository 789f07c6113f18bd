// Formats libsndfile cannot read, decoded through FFmpeg: files are encoded in the test with
// FFmpeg's own encoders (FFmpegEncoding). ALAC is lossless, so its decode must give back the
// 16-bit values written, frame for frame; AAC is lossy, so its decode is checked for its length,
// level and pitch.
import CFFmpeg
import Foundation
import XCTest
import SFXCore
@testable import SFXMedia

final class FFmpegDecodingTests: TemporaryDirectoryTestCase {
    /// Values a 16-bit ALAC file holds exactly.
    static func sixteenBit(_ frames: Int, channels: Int) -> [Float] {
        (0..<(frames * channels)).map { i in
            let frame = i / channels
            let value = 0.4 * sin(Double(frame) * 0.031 + Double(i % channels)) + 0.1 * sin(Double(frame) * 0.0007)
            return Float((value * 32_768).rounded()) / 32_768
        }
    }

    func testALACInM4ADecodesToTheSamplesWrittenAndSeeksToTheExactFrame() throws {
        let url = directory.file("lossless.m4a")
        let samples = Self.sixteenBit(44_100 * 2, channels: 2)
        try FFmpegEncoding.write(samples, sampleRate: 44_100, channels: 2, codec: AV_CODEC_ID_ALAC, to: url)
        XCTAssertThrowsError(try SoundFile(file: RawFilePath(url)), "libsndfile cannot read it")

        let cue = try AudioDecoder(format: AudioFormat(sampleRate: 44_100, channels: 2)).decode(contentsOf: url)
        XCTAssertEqual(cue.frameCount, 88_200)
        XCTAssertEqual(cue.sampleArray, samples)

        let source = try FFmpegSource(file: RawFilePath(url))
        XCTAssertEqual(source.frames, 88_200)
        for target in [0, 1, 4095, 4096, 50_001, 88_199] as [Int64] {
            try source.seek(toFrame: target)
            var two = [Float](repeating: 9, count: 4)
            let got = source.read(into: &two, frames: 2)
            let want = Array(samples[(Int(target) * 2)..<min(samples.count, Int(target) * 2 + 4)])
            XCTAssertEqual(Array(two.prefix(got * 2)), want, "seek to \(target)")
        }
    }

    func testAACInM4ADecodesAsACueAndInfoNamesIt() throws {
        let url = directory.file("tone.m4a")
        let frames = 48_000
        let tone = (0..<frames).flatMap { i -> [Float] in
            let v = Float(0.5 * sin(2 * Double.pi * 1000 * Double(i) / 48_000))
            return [v, v]
        }
        try FFmpegEncoding.write(tone, sampleRate: 48_000, channels: 2, codec: AV_CODEC_ID_AAC, to: url)
        let cue = try AudioDecoder(format: .standard).decode(contentsOf: url)
        XCTAssertEqual(cue.frameCount, frames, accuracy: 2048, "the length, give or take the encoder's padding")
        let left = stride(from: 0, to: cue.samples.count, by: 2).map { cue.samples[$0] }
        let middle = left[10_000..<40_000]
        let peak = middle.map(abs).max() ?? 0
        XCTAssertEqual(peak, 0.5, accuracy: 0.05)
        var crossings = 0
        for k in middle.indices.dropFirst() where (middle[k - 1] < 0) != (middle[k] < 0) { crossings += 1 }
        XCTAssertEqual(Double(crossings) / 2 / (30_000 / 48_000.0), 1000, accuracy: 10, "a 1 kHz tone")

        let info = try AudioFileInfo(contentsOf: url)
        XCTAssertEqual(info.mimeType, "audio/mp4")
        XCTAssertEqual(info.fileExtension, "m4a")
        XCTAssertEqual(info.sampleRate, 48_000)
        XCTAssertEqual(info.channels, 2)
        XCTAssertTrue(info.encoding.contains("AAC"), info.encoding)
        XCTAssertNotNil(try Loudness(contentsOf: url).lufs)
    }

    func testWMADecodesAndInfoNamesIt() throws {
        let url = directory.file("tone.wma")
        let tone = (0..<44_100).map { i in Float(0.5 * sin(2 * Double.pi * 440 * Double(i) / 44_100)) }
        try FFmpegEncoding.write(tone, sampleRate: 44_100, channels: 1, codec: AV_CODEC_ID_WMAV2, container: "asf", to: url)
        let cue = try AudioDecoder(format: .standard).decode(contentsOf: url)
        XCTAssertEqual(cue.frameCount, 48_000, accuracy: 4096)
        let peak = cue.sampleArray[20_000..<60_000].map(abs).max() ?? 0
        XCTAssertEqual(peak, 0.5, accuracy: 0.08)
        let info = try AudioFileInfo(contentsOf: url)
        XCTAssertEqual(info.mimeType, "audio/x-ms-wma")
        XCTAssertEqual(info.fileExtension, "wma")
    }

    func testAFileNeitherReadsFailsWithLibsndfilesReason() throws {
        let url = try directory.write("notes.txt", Data("not audio at all\n".utf8))
        XCTAssertThrowsError(try AudioDecoder().decode(contentsOf: url)) { error in
            guard case .notAudio(let looksLike) = (error as? MediaError)?.reason else { return XCTFail("\(error)") }
            XCTAssertEqual(looksLike, "it looks like text")
        }
    }
}
