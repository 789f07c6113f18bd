import Foundation
import Glibc
import XCTest

/// The daemon owns the vibrator: an alert or a vibration from any client goes through its
/// haptic backend, and an alert vibrates instead when muted.
final class DaemonAlertTests: DaemonTestCase {
    func testAlertFromAClientVibratesThroughTheDaemonWhenMuted() throws {
        let log = scratch.appending(path: "buzz.log")
        let buzz = scratch.appending(path: "buzz")
        try Data("#!/bin/sh\necho \"$SFX_VIBRATE_PATTERN\" >> '\(log.path)'\n".utf8).write(to: buzz)
        chmod(buzz.path, 0o755)
        let config = scratch.appending(path: "config/sfx")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try Data("[haptics]\nbackend = command\ncommand = \(buzz.path)\n".utf8).write(to: config.appending(path: "sfx.conf"))
        try startDaemon()
        // Not muted: it plays.
        let heard = try run(["alert", "--daemon", "bell"])
        XCTAssertEqual(heard.status, 0, heard.stderr)
        XCTAssertTrue(heard.stdout.hasPrefix("played"), heard.stdout)
        // Muted through the daemon: it vibrates instead, with the daemon's backend.
        XCTAssertEqual(try run(["mute", "on", "--daemon", "-q"]).status, 0)
        let muted = try run(["alert", "--daemon", "bell"])
        XCTAssertEqual(muted.status, 0, muted.stderr)
        XCTAssertTrue(muted.stdout.contains("not played") && muted.stdout.contains("vibrated"), muted.stdout)
        // The caption channel reaches the client: the alert's words and what reached the person.
        XCTAssertFalse(heard.stdout.contains("caption:"), "a heard alert needs no caption line: \(heard.stdout)")
        let caption = try XCTUnwrap(muted.stdout.split(separator: "\n").last.map(String.init), muted.stdout)
        XCTAssertTrue(caption.hasPrefix("caption: The generic alert [bell: "), "the theme's words for bell: \(muted.stdout)")
        XCTAssertTrue(caption.contains("felt"), "vibrated: \(caption)")
        let vibrate = try run(["vibrate", "--daemon", "--pattern", "30,20,30"])
        XCTAssertEqual(vibrate.status, 0, vibrate.stderr)
        for _ in 0..<100 where ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").count < 2 { usleep(50_000) }
        let buzzes = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(buzzes.count, 2, "\(buzzes)")
        XCTAssertEqual(buzzes.last, "30,20,30")
        let status = try run(["status", "--json", "--daemon"])
        XCTAssertTrue(status.stdout.contains("\"muteFlag\":true") && status.stdout.contains("\"hapticBackend\":\"command\""), status.stdout)
        XCTAssertEqual(stopDaemon(), 0)
    }

    /// `sfx mute status` asks the daemon when one answers, as `sfx alert` does, so the two say
    /// the same: here the card's Master switch off, in the alert's words.
    func testMuteStatusThroughTheDaemonSaysWhatItsAlertsDo() throws {
        try startDaemon()
        card.masterSwitch = false
        let alert = try run(["alert", "--daemon", "bell"])
        XCTAssertTrue(alert.stdout.hasPrefix("not played (muted: the output's Master switch is off)"), alert.stdout)
        let json = try run(["mute", "status", "--daemon", "--json"])
        XCTAssertEqual(json.status, 0, json.stderr)
        let fields = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], json.stdout)
        XCTAssertEqual(fields["muted"] as? Bool, true)
        XCTAssertEqual(fields["daemon"] as? Bool, true)
        XCTAssertEqual(fields["reasons"] as? [String], ["the output's Master switch is off"])
        XCTAssertEqual((fields["mixer"] as? [String: Any])?["switchOn"] as? Bool, false, json.stdout)
        let text = try run(["mute", "status", "--daemon"])
        XCTAssertTrue(text.stdout.hasSuffix("muted: the output's Master switch is off\n"), text.stdout)
        card.masterSwitch = true
        XCTAssertEqual(try run(["mute", "status", "--daemon", "-q"]).status, 1)
        XCTAssertEqual(stopDaemon(), 0)
    }
}
