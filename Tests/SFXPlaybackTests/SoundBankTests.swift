import Foundation
import Synchronization
import XCTest
import SFXCore
import SFXCardSupport
@testable import SFXPlayback

/// Bank files: errors with their lines, loading and playing on the virtual card, and reloading
/// an edited bank under a running engine.
final class SoundBankTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appending(path: "sfx-bank-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Two sounds told apart by level: 0.25 and 0.5, 0.1 s each.
        try WAVAudio(sampleRate: 48_000, channels: 1, samples: [Float](repeating: 0.25, count: 4800))
            .write(to: directory.appending(path: "quiet.wav"))
        try WAVAudio(sampleRate: 48_000, channels: 1, samples: [Float](repeating: 0.5, count: 4800))
            .write(to: directory.appending(path: "loud.wav"))
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    private func write(_ text: String, _ name: String = "game.json") throws -> URL {
        let url = directory.appending(path: name)
        // As an editor saves: a new file renamed over the old one.
        let temporary = directory.appending(path: ".\(name).tmp")
        try Data(text.utf8).write(to: temporary)
        guard rename(temporary.path, url.path) == 0 else { throw POSIXError(.EIO) }
        return url
    }

    private func errors(_ text: String) throws -> [String] {
        let url = try write(text)
        do {
            _ = try BankFile(contentsOf: url)
            return []
        } catch {
            return error.errors.map(\.description)
        }
    }

    func testAGoodBankReadsEveryKey() throws {
        let url = try write("""
        {
          "normalize": -20,
          "ducking": [{"trigger": "ui", "target": "music", "by": -9, "release": 150},
                      {"trigger": 5, "target": "effects", "by": -3.5, "attack": 0}],
          "events": {
            "step": {"sounds": ["quiet.wav", "loud.wav"], "choose": "roundRobin", "pitch": [-1, 2], "volume": -3,
                     "cooldown": 80, "maxInstances": 4, "priority": "high", "group": "ui", "position": [1, 0, -2],
                     "seed": 9},
            "door": {"sounds": ["loud.wav"], "normalize": null}
          }
        }
        """)
        let file = try BankFile(contentsOf: url)
        XCTAssertEqual(file.events.map(\.name), ["door", "step"])
        let step = file.events[1]
        XCTAssertEqual(step.sounds.map(\.lastPathComponent), ["quiet.wav", "loud.wav"])
        XCTAssertEqual(step.choose, .roundRobin)
        XCTAssertEqual(step.pitch, -1...2)
        XCTAssertEqual(step.volume, -3...(-3))
        XCTAssertEqual(step.cooldown, .milliseconds(80))
        XCTAssertEqual(step.maxInstances, 4)
        XCTAssertEqual(step.priority, .high)
        XCTAssertEqual(step.group, .ui)
        XCTAssertEqual(step.position, Vector3(1, 0, -2))
        XCTAssertEqual(step.normalize?.target, -20)
        XCTAssertEqual(step.seed, 9)
        XCTAssertNil(file.events[0].normalize)
        XCTAssertEqual(file.ducking, [
            BankFile.DuckingRule(trigger: .ui, target: .music, decibels: -9, attack: .milliseconds(20), release: .milliseconds(150)),
            BankFile.DuckingRule(trigger: SoundGroup(rawValue: 5)!, target: .effects, decibels: -3.5, attack: .zero, release: .milliseconds(300)),
        ])
    }

    func testDuckingErrorsNameTheRuleAndItsLine() throws {
        XCTAssertEqual(try errors("""
        {
          "ducking": [
            {"trigger": "ui", "target": "music", "by": 3},
            {"trigger": "ui", "target": "ui", "by": -6},
            {"trigger": "alerts", "target": "music", "by": -6, "releas": 10},
            {"trigger": "alerts", "target": "effects", "by": -6}
          ],
          "events": {"step": {"sounds": ["quiet.wav"]}}
        }
        """), [
            "game.json:3: ducking rule 1: \"by\" must be decibels from -96 to 0, such as -9 (0 removes the trigger's rule)",
            "game.json:4: ducking rule 2: a group cannot duck itself: give another \"target\"",
            "game.json:5: ducking rule 3: unknown key \"releas\": use one of attack, by, release, target, trigger",
            "game.json:6: ducking rule 4: a second rule for trigger group alerts: the mixer keeps one per trigger, merge them",
        ])
        XCTAssertEqual(try errors("{\"ducking\": {\"trigger\": \"ui\"}, \"events\": {\"a\": {\"sounds\": [\"quiet.wav\"]}}}"),
                       ["game.json:1: \"ducking\" must be a list of rules, such as [{\"trigger\": \"ui\", \"target\": \"music\", \"by\": -9}]"])
    }

    func testErrorsNameTheFileLineAndKey() throws {
        XCTAssertEqual(try errors("""
        {
          "events": {
            "step": {
              "sounds": ["quiet.wav"],
              "pitch": [3, -3],
              "volum": 2
            },
            "door": {"sounds": []}
          },
          "normalise": -23
        }
        """), [
            "game.json:5: event \"step\": \"pitch\" must be a number or [low, high] in semitones from -12 to 12, low ≤ high",
            "game.json:6: event \"step\": unknown key \"volum\": use one of choose, cooldown, group, maxInstances, normalize, pitch, position, priority, seed, sounds, volume",
            "game.json:8: event \"door\": \"sounds\" must be a list of one or more file paths (relative to the bank), such as [\"step1.wav\"]",
            "game.json:10: unknown key \"normalise\": use \"events\", \"normalize\" or \"ducking\"",
        ])
    }

    func testASyntaxErrorNamesItsLine() throws {
        let found = try errors("{\n  \"events\": {\n    \"step\": {\"sounds\" [\"quiet.wav\"]}\n  }\n}\n")
        XCTAssertEqual(found.count, 1)
        guard found.count == 1 else { return }
        XCTAssertTrue(found[0].hasPrefix("game.json:3: is not valid JSON"), found[0])
    }

    func testAMissingSoundNamesItsLine() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let url = try write("{\n\"events\": {\n \"step\": {\"sounds\": [\n  \"quiet.wav\",\n  \"gone.wav\"]}}}")
        XCTAssertThrowsError(try setup.engine.loadBank(url, watch: false)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.hasPrefix("game.json:5: event \"step\": sound \"gone.wav\""), text)
        }
    }

    /// A bank edited under a running engine: the next trigger plays the new sound (the card's
    /// recording has the loud level after the quiet one), a broken edit keeps it and reports
    /// the line, an unknown event is refused.
    func testAnEditedBankIsHeardOnTheNextTrigger() throws {
        let events = Mutex<[EngineEvent]>([])
        let setup = try EngineOnCard { $0.onEvent = { event in events.withLock { $0.append(event) } } }
        let url = try write("{\"events\": {\"hit\": {\"sounds\": [\"quiet.wav\"]}}}")
        let bank = try setup.engine.loadBank(url)
        XCTAssertEqual(bank.eventNames, ["hit"])
        XCTAssertEqual(awaitOutcome { setup.engine.play(event: "hit", in: bank, completion: $0) }, .finished)
        XCTAssertEqual(awaitOutcome { setup.engine.play(event: "miss", in: bank, completion: $0) }, .rejected(.unknownEvent("miss")))

        let edited = Date()
        _ = try write("{\"events\": {\"hit\": {\"sounds\": [\"loud.wav\"]}}}")
        XCTAssertTrue(eventually(timeout: 10) { events.withLock { $0.contains(.bankReloaded("game")) } })
        let reloaded = Date()
        XCTAssertEqual(awaitOutcome { setup.engine.play(event: "hit", in: bank, completion: $0) }, .finished)
        let heard = Date()
        print("bank reload: edit → reloaded \(Int(reloaded.timeIntervalSince(edited) * 1000)) ms, → new sound played out \(Int(heard.timeIntervalSince(edited) * 1000)) ms")
        XCTAssertEqual(bank.reloads, 1)

        _ = try write("{\"events\": {\n\"hit\": {\"sounds\": [\"loud.wav\"],\n \"cooldown\": \"soon\"}}}")
        XCTAssertTrue(eventually(timeout: 10) { events.withLock { $0.contains { if case .bankRejected = $0 { true } else { false } } } })
        let rejected = events.withLock { $0.compactMap { if case .bankRejected(let f, let l, let r) = $0 { (f, l, r) } else { nil } } }
        XCTAssertEqual(rejected.first?.0, "game.json")
        XCTAssertEqual(rejected.first?.1, 3)
        XCTAssertTrue(rejected.first?.2.contains("\"cooldown\"") == true)
        XCTAssertEqual(bank.lastRejection?.line, 3, "kept for a caller that does not follow events (the C API's sfx_bank_status)")
        XCTAssertEqual(bank.reloads, 1)
        XCTAssertEqual(awaitOutcome { setup.engine.play(event: "hit", in: bank, completion: $0) }, .finished)
        bank.stopWatching()

        setup.engine.close()
        let samples = try setup.recording().samples.map(abs)
        setup.close()
        let quiet = try XCTUnwrap(samples.firstIndex { $0 > 0.15 && $0 < 0.2 }, "the first sound")
        let loud = try XCTUnwrap(samples.firstIndex { $0 > 0.3 }, "the edited sound")
        XCTAssertLessThan(quiet, loud)
        XCTAssertGreaterThan(samples.filter { $0 > 0.3 }.count, 2 * 2 * 4000, "the loud sound twice, both channels")
    }

    /// An edit to a sound file (same name) is heard too, and voices already playing finish.
    func testAnEditedSoundIsReloaded() throws {
        let events = Mutex<[EngineEvent]>([])
        let setup = try EngineOnCard { $0.onEvent = { event in events.withLock { $0.append(event) } } }
        defer { setup.close() }
        let url = try write("{\"events\": {\"hit\": {\"sounds\": [\"quiet.wav\"]}}}")
        let bank = try setup.engine.loadBank(url)
        let first = bank.event(named: "hit")
        let playing = Mutex<PlayOutcome?>(nil)
        setup.engine.play(event: "hit", in: bank) { outcome in playing.withLock { $0 = outcome } }
        let replacement = directory.appending(path: ".quiet.tmp.wav")
        try WAVAudio(sampleRate: 48_000, channels: 1, samples: [Float](repeating: 0.5, count: 4800)).write(to: replacement)
        XCTAssertEqual(rename(replacement.path, directory.appending(path: "quiet.wav").path), 0)
        XCTAssertTrue(eventually(timeout: 10) { events.withLock { $0.contains(.bankReloaded("game")) } })
        XCTAssertTrue(eventually(timeout: 10) { playing.withLock { $0 } != nil })
        XCTAssertEqual(playing.withLock { $0 }, .finished, "the voice playing the old sound finishes")
        XCTAssertFalse(bank.event(named: "hit") === first)
        XCTAssertNotEqual(bank.event(named: "hit")?.settings.sounds, first?.settings.sounds)
    }

    private func awaitOutcome(_ play: (@escaping @Sendable (PlayOutcome) -> Void) -> Voice) -> PlayOutcome? {
        let box = Mutex<PlayOutcome?>(nil)
        _ = play { outcome in box.withLock { $0 = outcome } }
        _ = eventually(timeout: 10) { box.withLock { $0 } != nil }
        return box.withLock { $0 }
    }
}
