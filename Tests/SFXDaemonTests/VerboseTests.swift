import Foundation
import Glibc
import SFXCardSupport
import XCTest

/// Did the daemon play it? `status` counts what it served; `play -v` says which way it played.
final class VerboseTests: DaemonTestCase {
    func testStatusCountsWhatWasServedAndVerboseSaysWhichWayItPlayed() throws {
        try startDaemon()
        let tone = try writeTone("counted.wav", seconds: 0.05)
        XCTAssertEqual(try run(["load", "--daemon", "--name", "counted", tone.path]).status, 0)
        for _ in 0..<3 { XCTAssertEqual(try run(["play", "tock", "--volume", "0.001"], program: Self.front).status, 0) }
        let verbose = try run(["play", "-v", "tock", "--volume", "0.001"])
        XCTAssertEqual(verbose.status, 0, verbose.stderr)
        XCTAssertTrue(verbose.stdout.contains("via the daemon at \(socketPath): played tock as voice"), verbose.stdout)
        XCTAssertTrue(verbose.stdout.contains("sfx: the daemon's \(card.pcmName): FLOAT_LE 48000 Hz 2 ch, period"), verbose.stdout)
        let status = try run(["status"])
        XCTAssertTrue(status.stdout.contains("served: 4 plays, 1 loads"), status.stdout)
        let json = try run(["status", "--json"])
        XCTAssertTrue(json.stdout.contains("\"playsServed\":4"), json.stdout)
        XCTAssertTrue(json.stdout.contains("\"loadsServed\":1"), json.stdout)
        // In-process, -v says why in one line.
        let local = try run(["play", "-v", "--no-daemon", "tock", "--volume", "0.001"])
        XCTAssertTrue(local.stdout.contains("sfx: in-process: --no-daemon"), local.stdout)
        XCTAssertEqual(stopDaemon(), 0)
        let gone = try run(["play", "-v", "tock", "--volume", "0.001"], program: Self.front)
        XCTAssertTrue(gone.stdout.contains("sfx: in-process: no daemon answers at \(socketPath)"), gone.stdout)
    }

    /// A daemon on sfx's own virtual card records into a card directory of its own: an
    /// in-process play, which starts the user's card afresh, leaves the daemon's recording.
    func testInProcessPlaysLeaveTheDaemonsRecording() throws {
        let tone = try writeTone("tone.wav", frequency: 880, seconds: 0.3)
        let own: [String: String?] = ["ALSA_CONFIG_PATH": nil, "SFX_VIRTUAL_CARD": "1"]
        try startDaemon(["--idle-timeout", "0"], onCard: false, environment: own)
        XCTAssertEqual(try run(["load", "--daemon", "--name", "tone", tone.path], environment: own).status, 0)
        let play = try run(["play", "--daemon", "tone"], program: Self.front, environment: own)
        XCTAssertEqual(play.status, 0, play.stderr)
        usleep(600_000)
        let local = try run(["play", "--no-daemon", "tock"], environment: own)
        XCTAssertEqual(local.status, 0, local.stderr)
        XCTAssertEqual(stopDaemon(), 0)
        let base = scratch.appending(path: "sfx")
        var peaks: [String: Float] = [:]
        for directory in (try? FileManager.default.contentsOfDirectory(atPath: base.path)) ?? [] {
            let dir = base.appending(path: directory)
            for name in (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [] where name.hasPrefix("playback") {
                peaks["\(directory)/\(name)"] = try WAVAudio(contentsOf: dir.appending(path: name)).samples.map(abs).max() ?? 0
            }
        }
        XCTAssertNotNil(peaks["daemon-card/playback.wav"], "recordings: \(peaks)")
        XCTAssertEqual(peaks["daemon-card/playback.wav"] ?? 0, 0.5, accuracy: 0.02, "the daemon's tone is still recorded: \(peaks)")
        XCTAssertNotNil(peaks["card/playback.wav"], "the in-process play has its own: \(peaks)")
    }

    /// The daemon's device closes after 100 ms of silence and opens again for the next sound: its
    /// card goes on with one recording rather than writing a new playback-N.wav for every sound
    /// (20 sparse plays made 20 files).
    func testSparsePlaysThroughTheDaemonMakeOneRecording() throws {
        let tone = try writeTone("sparse.wav", frequency: 660, seconds: 0.05)
        let own: [String: String?] = ["ALSA_CONFIG_PATH": nil, "SFX_VIRTUAL_CARD": "1"]
        try startDaemon(["--idle-timeout", "100"], onCard: false, environment: own)
        XCTAssertEqual(try run(["load", "--daemon", "--name", "sparse", tone.path], environment: own).status, 0)
        let plays = 6
        for _ in 0..<plays {
            let play = try run(["play", "--daemon", "sparse"], program: Self.front, environment: own)
            XCTAssertEqual(play.status, 0, play.stderr)
            usleep(400_000)   // past the 100 ms idle close
        }
        XCTAssertEqual(stopDaemon(), 0)
        let card = scratch.appending(path: "sfx/daemon-card")
        let recordings = try FileManager.default.contentsOfDirectory(atPath: card.path).filter { $0.hasPrefix("playback") }.sorted()
        XCTAssertEqual(recordings, ["playback.wav"])
        let log = try String(contentsOf: card.appending(path: "events.log"), encoding: .utf8)
        XCTAssertGreaterThanOrEqual(log.components(separatedBy: "continued=1").count - 1, plays - 1,
                                    "the device was opened again and the recording went on: \(log)")
        // Every play is in it: as many separate bursts of the tone as plays.
        let samples = try WAVAudio(contentsOf: card.appending(path: "playback.wav")).samples
        var bursts = 0, quiet = 48_000   // a burst follows 50 ms of silence at least (the idle close waits 100 ms)
        for frame in stride(from: 0, to: samples.count, by: 2) {
            if abs(samples[frame]) > 0.05 {
                if quiet > 2_400 { bursts += 1 }
                quiet = 0
            } else {
                quiet += 1
            }
        }
        XCTAssertEqual(bursts, plays, "one burst per play in the one recording")
    }
}
