import XCTest
import SFX
import SFXTesting

final class GameAudioTests: XCTestCase {
    func testTockReachesTheCard() throws {
        let card = try VirtualCard()                    // a private temporary directory; remove() deletes it
        defer { try? card.remove() }
        card.makeCurrent()                              // ALSA's "default" is now the card
        let engine = try SoundEngine()
        engine.play(try engine.systemSound(named: "tock"))
        XCTAssertTrue(engine.waitUntilIdle())
        engine.close()

        let onsets = try card.events().filter { if case .onset = $0.kind { true } else { false } }
        XCTAssertEqual(onsets.count, 1)                 // when it reached the card's "DAC"
        let recording = try WAVAudio(contentsOf: card.recordingURL)
        XCTAssertGreaterThan(recording.samples.map(abs).max() ?? 0, 0.1)
    }
}
