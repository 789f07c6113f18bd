import Foundation
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
