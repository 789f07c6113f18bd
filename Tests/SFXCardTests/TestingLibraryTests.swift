import Foundation
import SFXCardSupport
import XCTest

/// The `SFXTesting` product's library, libSFXTesting.so, holds the card's plugin too: a game's
/// test binary finds it beside itself when there is no libsfxcard.so, and ALSA plays through it.
final class TestingLibraryTests: XCTestCase {
    var scratch: URL!

    override func setUpWithError() throws {
        scratch = FileManager.default.temporaryDirectory.appending(path: "sfxcard-testing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
    }

    func touch(_ relative: String) throws -> URL {
        let url = scratch.appending(path: relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data().write(to: url)
        return url
    }

    func testATestBinaryBesideLibSFXTestingOnlyLoadsTheCardFromIt() throws {
        let program = try touch("game/.build/debug/GamePackageTests.xctest").path
        let library = try touch("game/.build/debug/libSFXTesting.so")
        XCTAssertEqual(try VirtualCard.locatePlugin(executablePath: program, environment: [:]).path, library.path)
        // The plugin alone, where both were built (sfx's own .build), comes first.
        let plugin = try touch("game/.build/debug/libsfxcard.so")
        XCTAssertEqual(try VirtualCard.locatePlugin(executablePath: program, environment: [:]).path, plugin.path)
        try FileManager.default.removeItem(at: plugin)
        // The same trust as for libsfxcard.so.
        XCTAssertEqual(chmod(library.path, 0o666), 0)
        XCTAssertThrowsError(try VirtualCard.locatePlugin(executablePath: program, environment: [:])) { error in
            XCTAssertTrue("\(error)".contains("\(library.path) is writable by every user"), "\(error)")
        }
    }

    func testAplayPlaysOnACardWhosePluginIsLibSFXTesting() throws {
        let built = try XCTUnwrap(VirtualCard.currentExecutable()).split(separator: "/").dropLast().joined(separator: "/")
        let library = URL(filePath: "/" + built).appending(path: "libSFXTesting.so")
        XCTAssertTrue(FileManager.default.fileExists(atPath: library.path), "swift build makes \(library.path)")
        let card = try VirtualCard(directory: scratch.appending(path: "card"), plugin: library)
        let file = scratch.appending(path: "tone.wav")
        let tone = (0..<9_600).map { Float(0.5 * sin(2 * Double.pi * 440 * Double($0) / 48_000)) }
        let audio = WAVAudio(sampleRate: 48_000, channels: 1, samples: tone)
        try audio.write(to: file)
        let result = try runTool("/usr/bin/aplay", ["-q", "-D", card.hardwarePCMName, file.path], environment: card.environment)
        XCTAssertEqual(result.status, 0, result.output)
        let recording = try WAVAudio(contentsOf: card.recordingURL)
        XCTAssertEqual(Array(recording.samples.prefix(tone.count)), tone)
        XCTAssertEqual(try card.events().filter { if case .onset = $0.kind { true } else { false } }.count, 1)
    }
}
