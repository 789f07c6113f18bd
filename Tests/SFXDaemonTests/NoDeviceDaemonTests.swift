import Foundation
import XCTest

/// A kiosk's daemon started before its device (its card unplugged here): it serves all the same,
/// logs why once, plays on the clock, and plays on the card once it is back.
final class NoDeviceDaemonTests: DaemonTestCase {
    func testTheDaemonServesBeforeItsDeviceAndPlaysOnceItComes() throws {
        card.disconnect()
        let log = scratch.appending(path: "serve.log")
        try startDaemon(log: log)
        let logged = { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        let played = try run(["play", "tock"])
        XCTAssertEqual(played.status, 0, played.stderr)
        let status = try run(["status"])
        XCTAssertEqual(status.status, 0, status.stderr)
        XCTAssertTrue(status.stdout.contains("device: \(card.pcmName) — not open: audio device '\(card.pcmName)'"), status.stdout)

        card.reconnect()
        var heard = false
        for _ in 0..<30 where !heard {
            usleep(200_000)
            XCTAssertEqual(try run(["play", "tock"]).status, 0)
            usleep(300_000)   // the daemon closes its device 100 ms after the sound: its log is then complete
            heard = try !onsets().isEmpty
        }
        XCTAssertTrue(heard, "the daemon played on the card once it came back: \(logged())")
        XCTAssertEqual(stopDaemon(), 0)
        let text = logged()
        XCTAssertEqual(text.components(separatedBy: "no output device yet").count - 1, 1, text)
        XCTAssertTrue(text.contains("device restored"), text)
    }
}
