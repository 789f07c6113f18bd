import Foundation
import Glibc
import XCTest

/// `sfx vibrate` and `sfx alert` with the command backend, as processes: SIGINT and SIGTERM stop
/// the vibration (the command's TERM handler runs) and exit 130 and 143; SIGKILL of `sfx` still
/// ends the command and what it started.
final class VibrateSignalTests: CommandTestCase {
    private var log: URL { scratch.appending(path: "log") }
    private var pids: URL { scratch.appending(path: "pids") }

    /// A vibration program, in bash (which, unlike dash, keeps the signal mask it is given): it
    /// writes its pid and its `sleep`'s, logs "on", and on SIGTERM logs "off" and exits.
    private func buzzer() throws -> String {
        let path = scratch.appending(path: "buzz").path
        try """
            #!/bin/bash
            trap 'echo off >> "\(log.path)"; exit 0' TERM
            sleep 30 &
            echo "$$ $!" > "\(pids.path)"
            echo on >> "\(log.path)"
            wait
            echo finished >> "\(log.path)"

            """.write(toFile: path, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        return path
    }

    /// Waits up to 10 s for the buzzer to have started; returns its pid and its sleep's.
    private func waitForBuzzer() throws -> (script: pid_t, sleep: pid_t) {
        for _ in 0..<1000 {
            if (try? String(contentsOf: log, encoding: .utf8)) == "on\n",
               let text = try? String(contentsOf: pids, encoding: .utf8) {
                let numbers = text.split(whereSeparator: \.isWhitespace).compactMap { pid_t($0) }
                if numbers.count == 2 { return (numbers[0], numbers[1]) }
            }
            usleep(10_000)
        }
        throw ProgramMissing(description: "the vibration command did not start within 10 s")
    }

    private func vibrate() throws -> Process {
        try start(["vibrate", "--backend", "command", "--command", try buzzer(), "--pattern", "10000"])
    }

    private func checkInterrupted(_ process: Process, by number: Int32, exits status: Int32) throws {
        let buzzer = try waitForBuzzer()
        kill(process.processIdentifier, number)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .exit)
        XCTAssertEqual(process.terminationStatus, status)
        XCTAssertEqual(try String(contentsOf: log, encoding: .utf8), "on\noff\n", "the command's TERM handler ran")
        XCTAssertTrue(isGone(buzzer.script, within: 2))
        XCTAssertTrue(isGone(buzzer.sleep, within: 2))
    }

    func testVibrateInterruptedBySIGINTExits130AfterTheCommandsHandlerRan() throws {
        try checkInterrupted(try vibrate(), by: SIGINT, exits: 130)
    }

    func testVibrateInterruptedBySIGTERMExits143AfterTheCommandsHandlerRan() throws {
        try checkInterrupted(try vibrate(), by: SIGTERM, exits: 143)
    }

    func testAlertInterruptedBySIGTERMExits143AfterTheCommandsHandlerRan() throws {
        let alert = try start(["alert", "tock", "--vibrate", "always", "--backend", "command", "--command", try buzzer()])
        try checkInterrupted(alert, by: SIGTERM, exits: 143)
    }

    func testCommandEndsWhenSfxIsKilled() throws {
        let process = try vibrate()
        let buzzer = try waitForBuzzer()
        let killed = Date()
        kill(process.processIdentifier, SIGKILL)
        XCTAssertTrue(isGone(buzzer.script, within: 3), "the command \(buzzer.script) outlived sfx")
        XCTAssertTrue(isGone(buzzer.sleep, within: 3), "the command's child \(buzzer.sleep) outlived sfx")
        let elapsed = Date().timeIntervalSince(killed)
        process.waitUntilExit()
        print("SIGKILL of sfx → command gone: \(String(format: "%.1f", elapsed * 1000)) ms")
        XCTAssertLessThan(elapsed, 3, "within the watchdog's 1 s grace, with margin")
        XCTAssertEqual(try String(contentsOf: log, encoding: .utf8), "on\noff\n", "the command's TERM handler ran")
    }

    /// Gone from /proc, or a zombie (ended, waiting for whoever inherited it to reap it).
    private func isGone(_ pid: pid_t, within seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        repeat {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
            // The state follows the command name in parentheses: "123 (sleep) Z …".
            if let close = stat.lastIndex(of: ")"), stat[close...].dropFirst(2).first == "Z" { return true }
            usleep(1000)
        } while Date() < deadline
        kill(pid, SIGKILL)  // leave nothing running after a failure
        return false
    }
}
