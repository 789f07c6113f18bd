import Foundation
import XCTest
import SFXCardSupport

/// `sfx bank check`: exit 0 and the events for a good bank, one line per problem and 65 for a bad one.
final class BankCommandTests: CommandTestCase {
    func testAGoodBankPasses() throws {
        try WAVAudio(sampleRate: 48_000, channels: 1, samples: [Float](repeating: 0.1, count: 480))
            .write(to: scratch.appending(path: "a.wav"))
        try Data("{\"events\": {\"step\": {\"sounds\": [\"a.wav\", \"a.wav\"], \"choose\": \"shuffle\"}}}".utf8)
            .write(to: scratch.appending(path: "good.json"))
        let run = try sfx("bank", "check", "good.json")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stdout, "step: 2 sounds, shuffle\n")
    }

    func testProblemsAreOneLineEach() throws {
        try Data("{\n \"events\": {\n  \"step\": {\"sounds\": [\"a.wav\"],\n   \"pich\": 2,\n   \"cooldown\": -1}\n }\n}\n".utf8)
            .write(to: scratch.appending(path: "bad.json"))
        let run = try sfx("bank", "check", "bad.json")
        XCTAssertEqual(run.status, 65)
        XCTAssertEqual(run.stderr, """
        bad.json:4: event "step": unknown key "pich": use one of choose, cooldown, group, maxInstances, normalize, pitch, position, priority, seed, sounds, volume
        bad.json:5: event "step": "cooldown" must be milliseconds from 0 to 3600000, such as 80

        """)
        try Data("{\"events\": {\"step\": {\n\"sounds\": [\n\"gone.wav\"]}}}".utf8).write(to: scratch.appending(path: "missing.json"))
        let missing = try sfx("bank", "check", "missing.json")
        XCTAssertEqual(missing.status, 65)
        XCTAssertTrue(missing.stderr.hasPrefix("missing.json:3: event \"step\": sound \"gone.wav\" cannot be read"), missing.stderr)
    }

    /// `sfx play --bank FILE EVENT` plays the event in process: the card records its sound.
    func testPlayingAnEventOfABankInProcess() throws {
        try WAVAudio(sampleRate: 48_000, channels: 1, samples: [Float](repeating: 0.5, count: 4800))
            .write(to: scratch.appending(path: "loud.wav"))
        try Data("{\"events\": {\"hit\": {\"sounds\": [\"loud.wav\"], \"volume\": -6}}}".utf8)
            .write(to: scratch.appending(path: "game.json"))
        let play = try sfx("play", "--bank", "game.json", "hit")
        XCTAssertEqual(play.status, 0, play.stderr)
        let recording = try XCTUnwrap(play.recording, play.stdout)
        let peak = try WAVAudio(contentsOf: URL(filePath: recording)).samples.map(abs).max() ?? 0
        XCTAssertEqual(peak, 0.5 * 0.5012, accuracy: 0.01, "-6 dB of 0.5")
        let unknown = try sfx("play", "--bank", "game.json", "miss")
        XCTAssertEqual(unknown.status, 1)
        XCTAssertTrue(unknown.stderr.contains("no event \"miss\"; its events are hit"), unknown.stderr)
    }
}
