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
