import Foundation
import XCTest
import SFXCore
import SFX
@testable import SFXPlayback

/// Loading with `normalize:`, and the system sounds' loudness classes.
final class SoundLibraryLoudnessTests: XCTestCase {
    var scratch: URL!

    override func setUpWithError() throws {
        scratch = FileManager.default.temporaryDirectory.appending(path: "sfx-library-loudness-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: scratch)
    }

    func makeLibrary() throws -> SoundLibrary {
        var configuration = SoundLibrary.Configuration()
        configuration.environment = ["XDG_DATA_DIRS": "/usr/share", "XDG_DATA_HOME": scratch.path, "LANG": "C"]
        return try SoundLibrary(configuration: configuration)
    }

    /// A mono 997 Hz sine of `amplitude` at 44.1 kHz (it reads 20·log10(amplitude) LUFS).
    func writeTone(seconds: Double, amplitude: Double) throws -> URL {
        let url = scratch.appending(path: "tone-\(amplitude).wav")
        let samples = (0..<Int(seconds * 44_100)).map { Float(amplitude * sin(2 * .pi * 997 * Double($0) / 44_100)) }
        try AudioFileWriter.write(samples, sampleRate: 44_100, channels: 1, to: url, as: .wavFloat32)
        return url
    }

    func level(_ id: SoundID, in library: SoundLibrary) throws -> Loudness {
        let cue = try XCTUnwrap(library.cue(for: id))
        return try Loudness(interleaved: Array(cue.samples), sampleRate: cue.format.sampleRate, channels: cue.format.channels)
    }

    func testLoadingKeepsTheFilesLevelUnlessAskedToNormalise() throws {
        let library = try makeLibrary()
        let tone = try writeTone(seconds: 1, amplitude: 0.02)          // −34 LUFS
        XCTAssertEqual(try XCTUnwrap(level(try library.load(contentsOf: tone), in: library).lufs), -34, accuracy: 0.1)
        let normalized = try library.load(contentsOf: tone, normalize: .standard)
        XCTAssertEqual(try XCTUnwrap(level(normalized, in: library).lufs), -23, accuracy: 0.1)
        let quieter = try library.load(contentsOf: tone, normalize: LoudnessNormalization(target: -40))
        XCTAssertEqual(try XCTUnwrap(level(quieter, in: library).lufs), -40, accuracy: 0.1)
    }

    func testNormalisingNeverPassesTheTruePeakCeiling() throws {
        let library = try makeLibrary()
        let loud = try writeTone(seconds: 1, amplitude: 0.7)           // −3.1 LUFS, −3.1 dBTP
        let id = try library.load(contentsOf: loud, normalize: LoudnessNormalization(target: 0))
        let measured = try level(id, in: library)
        XCTAssertEqual(try XCTUnwrap(measured.truePeak), -1, accuracy: 0.02)
        XCTAssertEqual(try XCTUnwrap(measured.lufs), -1, accuracy: 0.15, "a sine's loudness is its peak here: held at −1")
    }

    func testNormalisingSilenceIsAnError() throws {
        let library = try makeLibrary()
        let url = scratch.appending(path: "silence.wav")
        try AudioFileWriter.write([Float](repeating: 0, count: 22_050), sampleRate: 44_100, channels: 1, to: url, as: .wavPCM16)
        XCTAssertNoThrow(try library.load(contentsOf: url), "silence loads as it is")
        XCTAssertThrowsError(try library.load(contentsOf: url, normalize: .standard)) { error in
            guard case .media(let media) = error as? SoundError else { return XCTFail("\(error)") }
            XCTAssertEqual(media.reason, .silent)
            XCTAssertEqual(media.subject, url.path)
        }
    }

    func testSystemSoundsHaveTheirLoudnessClass() throws {
        let library = try makeLibrary()
        XCTAssertEqual(library.loudnessClass(ofSystemSound: "tock"), "input-feedback")
        XCTAssertEqual(library.loudnessClass(ofSystemSound: "message-new-email"), "notification")
        XCTAssertEqual(library.loudnessClass(ofSystemSound: "dialog-question"), "dialog")
        XCTAssertEqual(library.loudnessClass(ofSystemSound: "suspend-error"), "alarm")
        XCTAssertEqual(library.loudnessClass(ofSystemSound: "phone-incoming-call"), "alarm", "an inherited event")
        XCTAssertNil(library.loudnessClass(ofSystemSound: "audio-test-signal"))
    }
}
