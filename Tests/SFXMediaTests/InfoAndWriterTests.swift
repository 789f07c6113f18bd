import Foundation
import SFXTestSupport
import SFXCore
import XCTest
@testable import SFXMedia

final class InfoAndWriterTests: TemporaryDirectoryTestCase {
    let sine = Signal.sine(frequency: 440, sampleRate: 48_000, frames: 4_800, channels: 2)

    func testInfoMatchesContentNotName() throws {
        let expected: [(AudioFileEncoding, container: String, mime: String, ext: String)] = [
            (.wavPCM16, "WAV", "audio/wav", "wav"), (.wavFloat32, "WAV", "audio/wav", "wav"),
            (.aiffPCM16, "AIFF", "audio/aiff", "aiff"), (.flac16, "FLAC", "audio/flac", "flac"),
            (.oggVorbis, "Ogg", "audio/ogg", "ogg"), (.oggOpus, "Ogg", "audio/ogg", "opus"),
            (.mp3, "MP3", "audio/mpeg", "mp3"), (.cafFloat32, "CAF", "audio/x-caf", "caf"),
        ]
        for (encoding, container, mime, ext) in expected {
            let url = directory.file("upload-\(encoding).bin")
            try writeFixture(sine, rate: 48_000, channels: 2, to: url, as: encoding)
            let info = try AudioFileInfo(contentsOf: url)
            XCTAssertEqual(info.container, container, "\(encoding)")
            XCTAssertEqual(info.mimeType, mime, "\(encoding)")
            XCTAssertEqual(info.fileExtension, ext, "\(encoding)")
            XCTAssertEqual(info.sampleRate, 48_000, "\(encoding)")
            XCTAssertEqual(info.channels, 2, "\(encoding)")
            XCTAssertEqual(Double(info.frames ?? 0), 4_800, accuracy: encoding == .mp3 || encoding == .oggOpus ? 1_200 : 0, "\(encoding)")
            XCTAssertEqual(info.duration ?? 0, 0.1, accuracy: 0.025, "\(encoding)")
        }
    }

    func testInfoForAIFCAndAUMadeBySox() throws {
        let aifc = directory.file("tone.aifc")
        let au = directory.file("tone.au")
        guard try runProgram("/usr/bin/sox", ["-n", "-r", "8000", "-c", "1", "-e", "signed", "-b", "16", aifc.path, "synth", "0.1", "sine", "440"]),
              try runProgram("/usr/bin/sox", ["-n", "-r", "8000", "-c", "1", au.path, "synth", "0.1", "sine", "440"]) else {
            throw MissingDependency(description: "sox could not write AIFC and AU; script/test installs sox")
        }
        let aifcInfo = try AudioFileInfo(contentsOf: aifc)
        XCTAssertEqual([aifcInfo.container, aifcInfo.mimeType, aifcInfo.fileExtension], ["AIFC", "audio/aiff", "aifc"])
        let auInfo = try AudioFileInfo(contentsOf: au)
        XCTAssertEqual([auInfo.container, auInfo.mimeType, auInfo.fileExtension], ["AU", "audio/basic", "au"])
    }

    func testInfoIsCodable() throws {
        let url = directory.file("tone.flac")
        try AudioFileWriter.write(sine, sampleRate: 48_000, channels: 2, to: url, as: .flac24)
        let info = try AudioFileInfo(contentsOf: url)
        XCTAssertEqual(info.encoding, "Signed 24 bit PCM")
        let json = try JSONEncoder().encode(info)
        XCTAssertEqual(try JSONDecoder().decode(AudioFileInfo.self, from: json), info)
        XCTAssertTrue(String(decoding: json, as: UTF8.self).contains("\"mimeType\":\"audio\\/flac\""))
    }

    func testWriterIsDeterministic() throws {
        for encoding in [AudioFileEncoding.wavFloat32, .wavPCM16, .wavPCM24, .flac16, .flac24] {
            let first = directory.file("a-\(encoding)")
            let second = directory.file("b-\(encoding)")
            try AudioFileWriter.write(sine, sampleRate: 48_000, channels: 2, to: first, as: encoding)
            try AudioFileWriter.write(sine, sampleRate: 48_000, channels: 2, to: second, as: encoding)
            let bytes = try Data(contentsOf: first)
            XCTAssertEqual(bytes, try Data(contentsOf: second), "\(encoding)")
            XCTAssertNil(bytes.range(of: Data("PEAK".utf8)), "\(encoding) has a PEAK chunk")
        }
    }

    /// 32-bit integer WAV: a plain PCM fmt chunk (tag 1, 32 bits) that sox reads without a
    /// warning, every float in -1…1 read back within 2^-31 of itself (exactly from 2^-8 up),
    /// full scale kept (not wrapped to -1), and samples beyond it clipped.
    func testWAVPCM32KeepsEveryFloatAndIsPlainPCM() throws {
        let url = directory.file("pcm32.wav")
        var samples = sine
        samples += [1, -1, 0.5, -0.25, 1e-6, 3, -3]
        try AudioFileWriter.write(samples, sampleRate: 48_000, channels: 1, to: url, as: .wavPCM32)
        let bytes = [UInt8](try Data(contentsOf: url))
        XCTAssertEqual(Array(bytes[12..<16]), Array("fmt ".utf8))
        XCTAssertEqual(Int(bytes[20]) | Int(bytes[21]) << 8, 1, "WAVE_FORMAT_PCM")
        XCTAssertEqual(Int(bytes[34]) | Int(bytes[35]) << 8, 32, "bits per sample")
        let decoded = try AudioDecoder(format: AudioFormat(sampleRate: 48_000, channels: 1)).decode(contentsOf: url).sampleArray
        var expected = samples
        expected[expected.count - 2] = 1
        expected[expected.count - 1] = -1
        XCTAssertEqual(decoded.count, expected.count)
        let far = zip(decoded, expected).enumerated().filter { abs($0.element.0 - $0.element.1) > 0x1p-31 }
        XCTAssertTrue(far.isEmpty, "\(far.count) samples differ by more than 2^-31, first: \(far.prefix(3))")
        let large = zip(decoded, expected).filter { abs($0.1) >= 0x1p-8 }
        XCTAssertTrue(large.allSatisfy { $0.0 == $0.1 }, "a sample from 2^-8 up changed")
        do {
            // sox is in script/test's packages: a missing one fails here rather than passing.
            let sox = try runToEnd(URL(filePath: "/usr/bin/sox"), [url.path, "-n"], output: .inherited, errors: .captured)
            let text = sox.errors
            XCTAssertEqual(sox.status, 0)
            XCTAssertFalse(text.contains("WARN"), text)
        }
    }

    func testWriterAppendsInPieces() throws {
        let url = directory.file("pieces.wav")
        let writer = try AudioFileWriter(url: url, encoding: .wavFloat32, sampleRate: 48_000, channels: 2)
        try sine.withUnsafeBufferPointer { all in
            try writer.append(UnsafeBufferPointer(rebasing: all[0..<1_000]))
            try writer.append(UnsafeBufferPointer(rebasing: all[1_000...]))
        }
        try writer.close()
        XCTAssertEqual(try AudioDecoder(format: .standard).decode(contentsOf: url).sampleArray, sine)
    }

    func testWriterErrors() throws {
        let missing = assertMediaError({
            try AudioFileWriter.write(self.sine, sampleRate: 48_000, channels: 2, to: self.directory.file("no/such/dir/x.wav"), as: .wavPCM16)
        }) { if case .directoryMissing = $0 { return true } else { return false } }
        XCTAssertTrue(missing?.description.contains("mkdir -p") ?? false)

        let locked = directory.file("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(locked.path, 0o555), 0)
        let denied = withoutRootPrivileges {
            assertMediaError({ try AudioFileWriter.write(self.sine, sampleRate: 48_000, channels: 2, to: locked.appending(path: "x.wav"), as: .wavPCM16) }) {
                $0 == .notWritable
            }
        }
        XCTAssertTrue(denied?.description.contains("permission denied") ?? false)

        let full = assertMediaError({
            try AudioFileWriter.write(self.sine, sampleRate: 48_000, channels: 2, to: URL(filePath: "/dev/full"), as: .wavPCM16)
        }) { $0 == .diskFull }
        XCTAssertEqual(full?.description, "/dev/full: cannot be written: no space left on the device; free some space and try again")

        assertMediaError({
            try AudioFileWriter.write(self.sine, sampleRate: 44_100, channels: 2, to: self.directory.file("x.opus"), as: .oggOpus)
        }) { if case .unsupportedOutput = $0 { return true } else { return false } }
    }
}
