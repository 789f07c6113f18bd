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
            + "cues are short sounds held in memory: raise CueLimits.maximumDuration to load it anyway (sfx has no streaming player yet)")
        XCTAssertEqual(try AudioDecoder(format: .standard, limits: CueLimits(maximumDuration: 2)).decode(contentsOf: url).frameCount, 96_000)
    }

    func testNaNSamplesAreCorrupt() throws {
        let url = directory.file("nan.wav")
        try AudioFileWriter.write([0.1, .nan, 0.2], sampleRate: 8_000, channels: 1, to: url, as: .wavFloat32)
        _ = decodeError(url) { $0 == .corrupt(detail: "NaN or infinite samples") }
    }
}
