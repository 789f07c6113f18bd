import Foundation
import XCTest

/// `sfx mute toggle` run by many processes at once: each toggle must see the one before it.
final class MuteToggleTests: CommandTestCase {
    private func mute(_ action: String) throws -> Process {
        try start(["mute", action, "--device", "null"])
    }

    private var flag: String? {
        try? String(contentsOf: scratch.appending(path: "state/sfx/muted"), encoding: .utf8)
    }

    func testFiftyParallelTogglesEndWhereTheyStarted() throws {
        for round in 1...4 {
            // Rounds start from off and on in turn.
            let first = try mute(round.isMultiple(of: 2) ? "on" : "off")
            first.waitUntilExit()
            let before = flag
            XCTAssertEqual(before, round.isMultiple(of: 2) ? "1\n" : "0\n")
            let toggles = try (0..<50).map { _ in try mute("toggle") }
            for toggle in toggles {
                toggle.waitUntilExit()
                XCTAssertEqual(toggle.terminationStatus, 0)
            }
            XCTAssertEqual(flag, before, "round \(round): 50 toggles, an even number, must leave the flag as it was")
        }
    }
}

/// `sfx mute status` reads the output `sfx alert` plays to, by the rule the alert follows, so a
/// kiosk script's `if sfx mute status -q` is not misled. On a machine with no sound card both go
/// to sfx's virtual card; `mute status` had read `default`'s mixer instead (none: "only sfx's
/// flag counts", exit 1) while the alert said "muted: the output's Master switch is off".
final class MuteStatusAgreesWithAlertTests: CommandTestCase {
    /// The card's mixer, as a user sets it: amixer with the card's configuration.
    func amixer(_ arguments: String...) throws {
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/amixer")
        process.arguments = ["-q", "-D", "sfxcard"] + arguments
        process.environment = environment(["ALSA_CONFIG_PATH": scratch.appending(path: "sfx/card/asound.conf").path])
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "amixer \(arguments)")
    }

    func agree(_ condition: String, muted: Bool, file: StaticString = #filePath, line: UInt = #line) throws {
        let alert = try sfx("alert", "bell", "--backend", "command", "--command", "/bin/true")
        XCTAssertEqual(alert.status, 0, "\(condition): \(alert.stderr)", file: file, line: line)
        let quiet = try sfx("mute", "status", "-q")
        XCTAssertEqual(quiet.status, muted ? 0 : 1, "\(condition): `sfx mute status -q` exits 0 when muted, 1 when not", file: file, line: line)
        let text = try sfx("mute", "status")
        let json = try sfx("mute", "status", "--json")
        let fields = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], json.stdout, file: file, line: line)
        XCTAssertEqual(fields["muted"] as? Bool, muted, "\(condition): \(json.stdout)", file: file, line: line)
        XCTAssertEqual(fields["device"] as? String, "sfxcard", "\(condition): the alert's output", file: file, line: line)
        let reasons = fields["reasons"] as? [String] ?? []
        // What it did: the line after where the card recorded (an unheard alert adds its caption after it).
        let lines = alert.stdout.split(separator: "\n").map(String.init)
        let said = lines.last { !$0.hasPrefix("caption: ") } ?? ""
        XCTAssertEqual(lines.last?.hasPrefix("caption: "), muted, "\(condition): a caption line exactly when unheard: \(alert.stdout)", file: file, line: line)
        if muted {
            XCTAssertTrue(said.hasPrefix("not played (muted: \(reasons.joined(separator: "; ")))"),
                          "\(condition): the alert said \(alert.stdout), the status \(reasons)", file: file, line: line)
            XCTAssertTrue(text.stdout.hasSuffix("muted: \(reasons.joined(separator: "; "))\n"), text.stdout, file: file, line: line)
        } else {
            XCTAssertTrue(said.hasPrefix("played"), "\(condition): \(alert.stdout)", file: file, line: line)
            XCTAssertEqual(reasons, [], condition, file: file, line: line)
            XCTAssertTrue(text.stdout.hasSuffix("\nnot muted\n"), text.stdout, file: file, line: line)
        }
    }

    func testMuteStatusAndAlertAgreeOnTheVirtualCard() throws {
        try agree("nothing muted", muted: false)   // the first alert also makes the card
        try amixer("set", "Master", "off")
        try agree("the Master switch off", muted: true)
        let text = try sfx("mute", "status")
        XCTAssertTrue(text.stdout.contains("output mixer (sfxcard): Master off, 100 % — muted"), text.stdout)
        XCTAssertFalse(text.stdout.contains("none"), text.stdout)
        try amixer("set", "Master", "on")
        try amixer("set", "Master", "0%")
        try agree("the Master volume at zero", muted: true)
        try amixer("set", "Master", "100%")
        try agree("nothing muted again", muted: false)
        XCTAssertEqual(try sfx("mute", "on").status, 0)
        try agree("sfx's flag on", muted: true)
        try amixer("set", "Master", "off")
        try agree("the flag on and the switch off", muted: true)
        XCTAssertEqual(try sfx("mute", "off").status, 0)
    }

    func testMuteStatusKeepsTheCardsLastRecording() throws {
        let alert = try sfx("alert", "bell", "--backend", "command", "--command", "/bin/true")
        let recording = try XCTUnwrap(alert.recording, alert.stdout)
        XCTAssertEqual(try sfx("mute", "status", "-q").status, 1)
        XCTAssertTrue(FileManager.default.fileExists(atPath: recording), "`sfx mute status` plays nothing and clears nothing")
    }
}
