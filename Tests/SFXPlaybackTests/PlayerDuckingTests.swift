// Ducking through the engine: a player in .music at a constant level, an alert in .alerts; what
// reaches the card is the music lowered by the configured amount while the alert plays, and
// restored after. Expected levels come from the decibels given, not from the mixer.
import Foundation
import Synchronization
import XCTest
import SFXCore
import SFXCardSupport
import SFX
@testable import SFXPlayback

final class PlayerDuckingTests: XCTestCase {
    func level(_ db: Double) -> Float { Float(pow(10, db / 20)) }

    func duckedLevels(_ adjust: (SoundEngine) throws -> Void) throws -> (before: Float, during: Float, after: Float) {
        let setup = try EngineOnCard()
        defer { setup.close() }
        try adjust(setup.engine)
        let url = setup.card.directory.appending(path: "bed.wav")
        try WAVAudio(sampleRate: 48_000, channels: 2, samples: [Float](repeating: 0.4, count: 48_000 * 4 * 2)).write(to: url)
        let music = try setup.engine.makePlayer(contentsOf: url)
        // A quiet alert: it must play (ducking follows playing voices) but add almost nothing.
        let alert = try setup.engine.load(buffer: [Float](repeating: 0.001, count: 48_000), sampleRate: 48_000, channels: 1)
        try music.play()
        usleep(1_000_000)
        let outcome = Mutex<PlayOutcome?>(nil)
        setup.engine.play(alert, pan: -1, group: .alerts) { result in outcome.withLock { $0 = result } }
        XCTAssertTrue(eventually { outcome.withLock { $0 } == .finished })
        usleep(1_200_000)
        music.stop()
        setup.engine.close()
        let left = try setup.recording().channel(0)
        let onset = try XCTUnwrap(left.firstIndex { $0 != 0 })
        let sound = Array(left[onset...])
        // Ducking starts on the alert's first frame: the first frame, past the player's start
        // fade, below the music's level. Then half a second into the 1 s alert, and 1.4 s after
        // its start (past the 300 ms release).
        let start = try XCTUnwrap((1000..<sound.count).first { sound[$0] < 0.399 })
        return (sound[start - 24_000], sound[start + 24_000], sound[start + 67_200])
    }

    func testAlertsDuckMusicByTwelveDecibelsByDefaultAndGiveItBack() throws {
        let levels = try duckedLevels { _ in }
        XCTAssertEqual(levels.before, 0.4, accuracy: 1e-6)
        XCTAssertEqual(levels.during, 0.4 * level(-12) + 0.001, accuracy: 1e-5)
        XCTAssertEqual(levels.after, 0.4, accuracy: 1e-6)
    }

    func testAConfiguredDepth() throws {
        let levels = try duckedLevels { engine in try engine.setDucking(.alerts, ducks: .music, by: -20, release: .milliseconds(50)) }
        XCTAssertEqual(levels.during, 0.4 * level(-20) + 0.001, accuracy: 1e-5)
        XCTAssertEqual(levels.after, 0.4, accuracy: 1e-6)
        let setup = try EngineOnCard()
        defer { setup.close() }
        XCTAssertThrowsError(try setup.engine.setDucking(.alerts, ducks: .music, by: 6), "only down")
    }

    /// A bank's "ducking" list sets the engine's rules when it loads (docs/banks.md).
    func testABanksDuckingRule() throws {
        let levels = try duckedLevels { engine in
            let directory = FileManager.default.temporaryDirectory.appending(path: "sfx-duck-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            try WAVAudio(sampleRate: 48_000, channels: 1, samples: [Float](repeating: 0.1, count: 480)).write(to: directory.appending(path: "tick.wav"))
            let url = directory.appending(path: "duck.json")
            try Data("""
            {"ducking": [{"trigger": "alerts", "target": "music", "by": -20, "attack": 20, "release": 50}],
             "events": {"tick": {"sounds": ["tick.wav"]}}}
            """.utf8).write(to: url)
            let bank = try engine.loadBank(url, watch: false)
            XCTAssertEqual(bank.ducking.map(\.decibels), [-20])
        }
        XCTAssertEqual(levels.during, 0.4 * level(-20) + 0.001, accuracy: 1e-5)
        XCTAssertEqual(levels.after, 0.4, accuracy: 1e-6)
    }
}
