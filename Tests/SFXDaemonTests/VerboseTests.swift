import Foundation
import Glibc
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
}
