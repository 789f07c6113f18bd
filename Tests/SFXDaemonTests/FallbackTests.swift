import Foundation
import Glibc
import XCTest

/// Without a daemon, or with one killed mid-run, commands play in-process.
final class FallbackTests: DaemonTestCase {
    func testDaemonKilledMidRunClientsFallBackInProcess() throws {
        let daemon = try startDaemon()
        var statuses: [Int32] = []
        for round in 0..<12 {
            if round == 4 {
                kill(daemon.processIdentifier, SIGKILL)
                daemon.waitUntilExit()
            }
            // The front, and the Swift program with an option the front leaves to it.
            let program = round % 2 == 0 ? Self.front : Self.program
            let arguments = round % 2 == 0 ? ["play", "tock"] : ["play", "tock", "--volume", "0.5"]
            let run = try self.run(arguments, program: program)
            XCTAssertEqual(run.status, 0, "round \(round): \(run.stderr)")
            statuses.append(run.status)
            if round >= 4 {
                // In-process: it opened the card itself and waited for the sound to end.
                XCTAssertTrue(run.stderr.isEmpty || !run.stderr.contains("daemon"), "round \(round): \(run.stderr)")
            }
        }
        XCTAssertEqual(statuses.count, 12)
        // The stale socket is left behind by the killed daemon; --daemon says no daemon answers.
        let forced = try run(["play", "--daemon", "tock"])
        XCTAssertEqual(forced.status, 1)
        XCTAssertTrue(forced.stderr.contains("no daemon answers"), forced.stderr)
        // A new daemon replaces the stale socket.
        try startDaemon()
        XCTAssertEqual(try run(["play", "--daemon", "tock"]).status, 0)
        XCTAssertEqual(stopDaemon(), 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: socketPath), "SIGTERM leaves no socket")
    }

    func testNoRuntimeDirectoryMeansNoDaemon() throws {
        let run = try self.run(["status", "--daemon"], environment: ["XDG_RUNTIME_DIR": nil])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.contains("XDG_RUNTIME_DIR is not set"), run.stderr)
        let serve = try self.run(["serve", "-q"], environment: ["XDG_RUNTIME_DIR": nil])
        XCTAssertEqual(serve.status, 1)
        XCTAssertTrue(serve.stderr.contains("XDG_RUNTIME_DIR is not set"), serve.stderr)
    }

    func testSocketDirectoryOfWrongModeIsRefused() throws {
        let directory = scratch.appending(path: "sfx")
        XCTAssertEqual(mkdir(directory.path, 0o755), 0)
        chmod(directory.path, 0o755)
        let serve = try run(["serve", "-q", "--device", card.pcmName])
        XCTAssertEqual(serve.status, 1)
        XCTAssertTrue(serve.stderr.contains("has mode 755, not 700"), serve.stderr)
    }
}
