import Foundation
import XCTest

/// `sfx mute toggle` run by many processes at once: each toggle must see the one before it.
final class MuteToggleTests: XCTestCase {
    private var scratch: URL!

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: CommandLineTests.program.path) else {
            throw ProgramMissing(description: "\(CommandLineTests.program.path) is missing: build it first (swift build --build-tests, as script/test does)")
        }
        scratch = FileManager.default.temporaryDirectory.appending(path: "sfx-mute-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
    }

    /// Starts `sfx mute <action>` against this test's state directory.
    private func mute(_ action: String) throws -> Process {
        let process = Process()
        process.executableURL = CommandLineTests.program
        process.arguments = ["mute", action, "--device", "null"]
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = scratch.appending(path: "state").path
        environment["XDG_CONFIG_HOME"] = scratch.appending(path: "config").path
        environment["ALSA_CONFIG_PATH"] = nil
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
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
