import Foundation
import SFXCardSupport
import XCTest

/// Unmodified ALSA clients: aplay and arecord play and record in real time.
final class ClientTests: CardTestCase {
    func testAplayPlaysTwoSecondsInTwoSeconds() throws {
        let file = card.directory.appending(path: "two-seconds.wav")
        let audio = WAVAudio(sampleRate: 48_000, channels: 2, samples: Signal.tone(frames: 96_000, channels: 2))
        try audio.write(to: file)
        var result: (status: Int32, output: String) = (0, "")
        let seconds = try elapsed {
            result = try runTool("/usr/bin/aplay", ["-D", card.pcmName, file.path], environment: card.environment)
        }
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertGreaterThan(seconds, 1.9)
        XCTAssertLessThan(seconds, 2.6)
        let recording = try WAVAudio(contentsOf: card.recordingURL)
        XCTAssertEqual(Array(recording.samples.prefix(audio.samples.count)), audio.samples)
        XCTAssertEqual(recording.samples.dropFirst(audio.samples.count).max() ?? 0, 0, "aplay pads its last period with silence")
    }

    func testArecordRecordsTwoSecondsInTwoSeconds() throws {
        let file = card.directory.appending(path: "recorded.wav")
        var result: (status: Int32, output: String) = (0, "")
        let seconds = try elapsed {
            result = try runTool("/usr/bin/arecord", ["-D", card.pcmName, "-d", "2", file.path], environment: card.environment)
        }
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertGreaterThan(seconds, 1.9)
        XCTAssertLessThan(seconds, 2.6)
        // arecord's default is 8000 Hz unsigned 8-bit mono: 16000 bytes of data after a 44-byte header.
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int)
        XCTAssertEqual(size, 44 + 16_000)
        XCTAssertTrue(try card.events().contains { $0.kind == .start(.capture) })
    }
}
