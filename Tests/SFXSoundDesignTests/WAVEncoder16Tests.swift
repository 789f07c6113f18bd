import XCTest
import SFXSoundDesign

final class WAVEncoder16Tests: XCTestCase {
    func littleEndian32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }

    func testHeaderIsTheCanonical44Bytes() {
        let wav = WAVEncoder16.encode(samples: [0, 0.5, -0.5], sampleRate: 44_100, seed: 1)
        XCTAssertEqual(wav.count, 44 + 6)
        XCTAssertEqual(Array(wav[0..<4]), Array("RIFF".utf8))
        XCTAssertEqual(littleEndian32(wav, at: 4), 36 + 6)
        XCTAssertEqual(Array(wav[8..<16]), Array("WAVEfmt ".utf8))
        XCTAssertEqual(littleEndian32(wav, at: 16), 16)
        XCTAssertEqual(Array(wav[20..<24]), [1, 0, 1, 0])
        XCTAssertEqual(littleEndian32(wav, at: 24), 44_100)
        XCTAssertEqual(littleEndian32(wav, at: 28), 88_200)
        XCTAssertEqual(Array(wav[32..<36]), [2, 0, 16, 0])
        XCTAssertEqual(Array(wav[36..<40]), Array("data".utf8))
        XCTAssertEqual(littleEndian32(wav, at: 40), 6)
    }

    func testSilenceStaysSilentAndFullScaleClips() {
        let pcm = pcm16(WAVEncoder16.encode(samples: [0, 0, 1.5, -1.5, 0], sampleRate: 48_000, seed: 7))
        XCTAssertEqual(pcm, [0, 0, 32767, -32768, 0])
    }

    func testSameSeedSameBytesOtherSeedOtherDither() {
        let samples = (0..<1000).map { Float($0 % 50) / 100 - 0.25 }
        let a = WAVEncoder16.encode(samples: samples, sampleRate: 48_000, seed: 5)
        XCTAssertEqual(a, WAVEncoder16.encode(samples: samples, sampleRate: 48_000, seed: 5))
        XCTAssertNotEqual(a, WAVEncoder16.encode(samples: samples, sampleRate: 48_000, seed: 6))
    }

    func testDitherIsTriangularWithinOneStepAndUnbiased() {
        let level: Float = 0.3
        let exact = Double(level) * 32767                       // 9830.1
        let pcm = pcm16(WAVEncoder16.encode(samples: Array(repeating: level, count: 20_000), sampleRate: 48_000, seed: 3))
        let values = Set(pcm)
        XCTAssertTrue(values.isSubset(of: [9829, 9830, 9831, 9832]), "\(values)")
        XCTAssertGreaterThanOrEqual(values.count, 3, "the dither spreads over neighbouring steps")
        let mean = pcm.reduce(0.0) { $0 + Double($1) } / Double(pcm.count)
        XCTAssertEqual(mean, exact, accuracy: 0.02, "TPDF dither keeps the average level")
    }
}
