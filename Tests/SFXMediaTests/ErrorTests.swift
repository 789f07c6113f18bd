import Foundation
import SFXCore
import XCTest
@testable import SFXMedia

final class ErrorTests: TemporaryDirectoryTestCase {
    let decoder = AudioDecoder(format: .standard)

    private func decodeError(_ url: URL, _ matches: (MediaError.Reason) -> Bool, file: StaticString = #filePath, line: UInt = #line) -> String {
        let error = assertMediaError({ try self.decoder.decode(contentsOf: url) }, file: file, line: line, matches)
        XCTAssertTrue(error?.description.hasPrefix(url.path + ": ") ?? false, "does not name the file: \(String(describing: error))", file: file, line: line)
        return error?.description ?? ""
    }

    private func wav(_ name: String, seconds: Double = 0.1, rate: Int = 8_000) throws -> URL {
        let url = directory.file(name)
        try AudioFileWriter.write(Signal.sine(frequency: 440, sampleRate: rate, frames: Int(seconds * Double(rate))),
                                  sampleRate: rate, channels: 1, to: url, as: .wavPCM16)
        return url
    }

    func testMissingFileAndDirectory() throws {
        let missing = decodeError(directory.file("nope.wav")) { $0 == .missingFile }
        XCTAssertTrue(missing.contains("check the path"))
        XCTAssertEqual(decodeError(directory.file("nope/inside.wav")) { $0 == .missingFile }.isEmpty, false)
        let folder = decodeError(directory.url) { $0 == .isDirectory }
        XCTAssertTrue(folder.contains("is a directory"))
    }

    func testUnreadableNamesChmodAndGroup() throws {
        let url = try wav("secret.wav")
        XCTAssertEqual(chmod(url.path, 0o600), 0)
        let message = withoutRootPrivileges { decodeError(url) { if case .unreadable = $0 { return true } else { return false } } }
        XCTAssertTrue(message.contains("chmod"), message)
        XCTAssertTrue(message.contains("group"), message)
    }

    func testNotAudio() throws {
        let text = try directory.write("notes.wav", Data("just some words\n".utf8))
        XCTAssertTrue(decodeError(text) { $0 == .notAudio(looksLike: "it looks like text") }.contains("not a sound file"))
        let png = try directory.write("picture.ogg", Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0, count: 64)))
        XCTAssertTrue(decodeError(png) { $0 == .notAudio(looksLike: "it looks like a PNG image") }.contains("PNG"))
        let empty = try directory.write("empty.wav", Data())
        _ = decodeError(empty) { $0 == .emptyFile }
    }

    func testTruncatedWAVAndFLAC() throws {
        let url = try wav("whole.wav", seconds: 1)
        let data = try Data(contentsOf: url)
        let cut = try directory.write("cut.wav", data.prefix(data.count / 2))
        let message = decodeError(cut) { if case .truncated(8_000, let found) = $0 { return found < 4_000 } else { return false } }
        XCTAssertTrue(message.contains("promises 8000 frames"), message)

        let flac = directory.file("whole.flac")
        try AudioFileWriter.write(Signal.sine(frequency: 440, sampleRate: 48_000, frames: 48_000), sampleRate: 48_000, channels: 1, to: flac, as: .flac16)
        let flacData = try Data(contentsOf: flac)
        let cutFLAC = try directory.write("cut.flac", flacData.prefix(flacData.count / 2))
        _ = decodeError(cutFLAC) { if case .truncated(48_000, _) = $0 { return true } else { return false } }
    }

    /// A 44-byte canonical WAV header for 16-bit PCM with the given fields, then `dataBytes` zero bytes.
    private func handMadeWAV(rate: UInt32, channels: UInt16, formatTag: UInt16 = 1, dataBytes: Int = 64) -> Data {
        func le32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
        func le16(_ v: UInt16) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
        let blockAlign = channels &* 2
        var bytes = Array("RIFF".utf8) + le32(UInt32(36 + dataBytes)) + Array("WAVE".utf8)
        bytes += Array("fmt ".utf8) + le32(16) + le16(formatTag) + le16(channels) + le32(rate)
        bytes += le32(rate &* UInt32(blockAlign)) + le16(blockAlign) + le16(16)
        bytes += Array("data".utf8) + le32(UInt32(dataBytes)) + Array(repeating: 0, count: dataBytes)
        return Data(bytes)
    }

    /// A WAV written to a pipe carries a placeholder length (sox 0x7FFFF000, arecord 0x7FFFFFFF,
    /// FFmpeg 0xFFFFFFFF, in the data and RIFF sizes): it is read to its end, as aplay and sox
    /// read it, and only a real length that the file falls short of is "truncated".
    func testAPlaceholderLengthFromAPipeIsReadToTheEnd() throws {
        for placeholder: UInt32 in [0x7FFF_F000, 0x7FFF_FFFF, 0xFFFF_FFFF] {
            var bytes = [UInt8](handMadeWAV(rate: 8_000, channels: 1, dataBytes: 1_600))
            for offset in [4, 40] { withUnsafeBytes(of: placeholder.littleEndian) { bytes.replaceSubrange(offset..<(offset + 4), with: $0) } }
            for index in stride(from: 44, to: bytes.count, by: 2) { bytes[index + 1] = 0x20 }   // 0x2000: 0.25
            let url = try directory.write("piped-\(String(placeholder, radix: 16)).wav", Data(bytes))
            let cue = try AudioDecoder(format: AudioFormat(sampleRate: 8_000, channels: 1)).decode(contentsOf: url)
            XCTAssertEqual(cue.frameCount, 800, String(placeholder, radix: 16))
            XCTAssertEqual(cue.samples.first ?? 0, 0.25, String(placeholder, radix: 16))
        }
        // A size that is no placeholder, over what the file holds, is still a truncation.
        var bytes = [UInt8](handMadeWAV(rate: 8_000, channels: 1, dataBytes: 1_600))
        withUnsafeBytes(of: UInt32(0x0100_0000).littleEndian) { bytes.replaceSubrange(40..<44, with: $0) }
        let cut = try directory.write("cut-header.wav", Data(bytes))
        _ = decodeError(cut) { if case .truncated = $0 { return true } else { return false } }
    }

    /// Headerless PCM decodes as the given layout says, sample for sample.
    func testRawPCMDecodesInTheLayoutGiven() throws {
        let samples: [Int16] = [0, 8_192, -16_384, 32_767, -32_768, 4_096]
        var little = Data(), big = Data()
        for sample in samples {
            withUnsafeBytes(of: sample.littleEndian) { little.append(contentsOf: $0) }
            withUnsafeBytes(of: sample.bigEndian) { big.append(contentsOf: $0) }
        }
        let decoder = AudioDecoder(format: AudioFormat(sampleRate: 8_000, channels: 2))
        let stereo = try decoder.decode(file: RawFilePath(try directory.write("le.raw", little).path),
                                        raw: try RawPCMFormat(name: "s16_le", sampleRate: 8_000, channels: 2))
        XCTAssertEqual(Array(stereo.samples), samples.map { Float($0) / 32_768 })
        let mono = try decoder.decode(file: RawFilePath(try directory.write("be.raw", big).path),
                                      raw: try RawPCMFormat(name: "S16_BE", sampleRate: 8_000, channels: 1))
        XCTAssertEqual(mono.frameCount, 6)
        XCTAssertEqual(Array(mono.samples).enumerated().filter { $0.offset % 2 == 0 }.map(\.element), samples.map { Float($0) / 32_768 })
        XCTAssertEqual(try RawPCMFormat(name: "cd"), try RawPCMFormat(sample: .s16le, sampleRate: 44_100, channels: 2))
        XCTAssertThrowsError(try RawPCMFormat(name: "S17_LE")) { XCTAssertTrue("\($0)".contains("use one of S8, U8, S16_LE"), "\($0)") }
        XCTAssertThrowsError(try RawPCMFormat(name: "S24_LE")) { XCTAssertTrue("\($0)".contains("S24_3LE"), "\($0)") }
        XCTAssertThrowsError(try RawPCMFormat(name: "S16_LE", sampleRate: 0)) { XCTAssertTrue("\($0)".contains("0 Hz"), "\($0)") }
    }

    func testAbsurdHeaders() throws {
        let valid = try directory.write("valid.wav", handMadeWAV(rate: 8_000, channels: 1))
        XCTAssertEqual(try decoder.decode(contentsOf: valid).frameCount, 32 * 6)
        for (name, rate, channels) in [("rate0.wav", UInt32(0), UInt16(1)), ("rate-huge.wav", 3_000_000, 1), ("channels0.wav", 8_000, 0), ("channels-many.wav", 8_000, 200)] {
            let url = try directory.write(name, handMadeWAV(rate: rate, channels: channels))
            do {
                _ = try decoder.decode(contentsOf: url)
                XCTFail("\(name) decoded")
            } catch let error as MediaError {
                switch error.reason {
                case .absurdHeader, .corrupt: XCTAssertTrue(error.description.hasPrefix(url.path), "\(error)")
                default: XCTFail("\(name): \(error)")
                }
            }
        }
        let message = decodeError(try directory.write("rate-big.wav", handMadeWAV(rate: 1_000_000, channels: 1))) {
            if case .absurdHeader = $0 { return true } else { return false }
        }
        XCTAssertTrue(message.contains("1000000 Hz"), message)
    }

    func testZeroFrames() throws {
        let url = try directory.write("silent.wav", handMadeWAV(rate: 8_000, channels: 1, dataBytes: 0))
        XCTAssertTrue(decodeError(url) { $0 == .noFrames }.contains("no audio frames"))
    }

    func testUnsupportedEncoding() throws {
        let url = try directory.write("odd.wav", handMadeWAV(rate: 8_000, channels: 1, formatTag: 0x1234))
        let message = decodeError(url) { $0 == .unsupportedEncoding(detail: "Format : 0x1234 => Unknown format") }
        XCTAssertTrue(message.contains("convert it"), message)
    }

    func testLongerThanTheCueLimit() throws {
        let url = try wav("long.wav", seconds: 2)
        let limited = AudioDecoder(format: .standard, limits: CueLimits(maximumDuration: 1.5))
        let error = assertMediaError({ try limited.decode(contentsOf: url) }) { $0 == .tooLong(seconds: 2, limit: 1.5) }
        XCTAssertEqual(error?.description, "\(url.path): is 2.0 s long, over the 1.5 s cue limit; "
            + "cues are short sounds held in memory: play it with a Player (streamed), or raise CueLimits.maximumDuration to load it anyway")
        XCTAssertEqual(try AudioDecoder(format: .standard, limits: CueLimits(maximumDuration: 2)).decode(contentsOf: url).frameCount, 96_000)
        // Figures that differ are never printed alike ("30.0 s long, over the 30.0 s cue limit").
        XCTAssertTrue(MediaError(.tooLong(seconds: 30.02, limit: 30), subject: "a.wav").description.hasPrefix("a.wav: is 30.02 s long, over the 30 s cue limit"))
        XCTAssertEqual(MediaError.distinct(30.0004, 30).value, "30.0004")
        XCTAssertEqual(MediaError.distinct(45, 30).value, "45.0")
    }

    func testNaNSamplesAreCorrupt() throws {
        let url = directory.file("nan.wav")
        try AudioFileWriter.write([0.1, .nan, 0.2], sampleRate: 8_000, channels: 1, to: url, as: .wavFloat32)
        _ = decodeError(url) { $0 == .corrupt(detail: "NaN or infinite samples") }
    }
}
