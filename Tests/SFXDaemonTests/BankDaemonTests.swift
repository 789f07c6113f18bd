import Foundation
import Glibc
import XCTest
import SFXCardSupport

/// `sfx serve --bank`: `sfx play EVENT` plays a bank's event through the daemon, an edit to the
/// bank is heard on the next trigger, and a broken edit keeps the old bank with a log line.
final class BankDaemonTests: DaemonTestCase {
    func testAnEditedBankIsHeardThroughTheDaemon() throws {
        try WAVAudio(sampleRate: 48_000, channels: 1, samples: [Float](repeating: 0.25, count: 4800))
            .write(to: scratch.appending(path: "quiet.wav"))
        try WAVAudio(sampleRate: 48_000, channels: 1, samples: [Float](repeating: 0.5, count: 4800))
            .write(to: scratch.appending(path: "loud.wav"))
        let bank = scratch.appending(path: "game.json")
        func save(_ text: String) throws {
            let temporary = scratch.appending(path: ".game.json.tmp")
            try Data(text.utf8).write(to: temporary)
            XCTAssertEqual(rename(temporary.path, bank.path), 0)
        }
        try save("{\"events\": {\"hit\": {\"sounds\": [\"quiet.wav\"]}}}")
        let log = scratch.appending(path: "daemon.log")
        try startDaemon(["--bank", bank.path, "--idle-timeout", "0"], log: log)
        func logged() -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

        let first = try run(["play", "hit"], program: Self.front)
        XCTAssertEqual(first.status, 0, first.stderr)
        usleep(300_000)
        try save("{\"events\": {\"hit\": {\"sounds\": [\"loud.wav\"]}}}")
        var waited = 0
        while !logged().contains("bank game reloaded"), waited < 200 { usleep(50_000); waited += 1 }
        XCTAssertTrue(logged().contains("bank game reloaded"), logged())
        XCTAssertEqual(try run(["play", "hit"], program: Self.front).status, 0)
        usleep(300_000)

        try save("{\"events\": {\n\"hit\": {\"sounds\": [\"loud.wav\"],\n \"pitch\": [5, 1]}}}")
        waited = 0
        while !logged().contains("game.json:3:"), waited < 200 { usleep(50_000); waited += 1 }
        XCTAssertTrue(logged().contains("bank game.json:3: event \"hit\": \"pitch\" must be"), logged())
        XCTAssertEqual(try run(["play", "hit"], program: Self.front).status, 0, "the last good bank still plays")
        usleep(300_000)
        let unknown = try run(["play", "--daemon", "miss"], program: Self.front)
        XCTAssertNotEqual(unknown.status, 0)
        XCTAssertEqual(stopDaemon(), 0)

        let samples = try WAVAudio(contentsOf: XCTUnwrap(card.recordingURLs().last)).samples.map(abs)
        let quiet = try XCTUnwrap(samples.firstIndex { $0 > 0.15 && $0 < 0.2 }, "the first sound")
        let loud = try XCTUnwrap(samples.firstIndex { $0 > 0.3 }, "the edited sound")
        XCTAssertLessThan(quiet, loud)
        XCTAssertGreaterThan(samples.filter { $0 > 0.3 }.count, 2 * 2 * 4000, "the loud sound twice")
    }

    func testABrokenBankStopsTheDaemonFromStarting() throws {
        let bank = scratch.appending(path: "bad.json")
        try Data("{\"events\": {\"hit\": {\"sounds\": [\"gone.wav\"]}}}".utf8).write(to: bank)
        let run = try run(["serve", "--device", card.pcmName, "--bank", bank.path])
        XCTAssertEqual(run.status, 65)
        XCTAssertTrue(run.stderr.contains("bad.json:1: event \"hit\": sound \"gone.wav\""), run.stderr)
    }
}
