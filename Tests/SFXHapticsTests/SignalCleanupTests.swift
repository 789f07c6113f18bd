import Foundation
import SFXTestSupport
import Glibc
import SFXHaptics
import XCTest

/// `Vibrator.installSignalCleanup()` in a process of its own: this test bundle run again with
/// only this test selected and `SFX_HAPTICS_SIGNAL_HELPER` naming a log file, in which the helper
/// vibrates through a callback backend that logs each event.
final class SignalCleanupTests: XCTestCase {
    static let helperVariable = "SFX_HAPTICS_SIGNAL_HELPER"

    func testSIGTERMSwitchesOffThenEndsTheProcessByTheSignal() throws {
        if let log = ProcessInfo.processInfo.environment[Self.helperVariable] { Self.runHelper(log: log) }
        try checkHelper(endedBy: SIGTERM)
    }

    func testSIGINTSwitchesOffThenEndsTheProcessByTheSignal() throws {
        if let log = ProcessInfo.processInfo.environment[Self.helperVariable] { Self.runHelper(log: log) }
        try checkHelper(endedBy: SIGINT)
    }

    private func checkHelper(endedBy number: Int32) throws {
        let directory = try TemporaryDirectory(removedAfter: self)
        let log = "\(directory.path)/log"
        let process = Process()
        process.executableURL = BuildProducts.testExecutable
        process.arguments = ["SFXHapticsTests.SignalCleanupTests/\(name.split(separator: ".").last ?? "")"]
        process.environment = ProcessInfo.processInfo.environment.merging([Self.helperVariable: log]) { _, new in new }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        var started = false
        for _ in 0..<1000 where !started {
            started = directory.contents("log")?.hasPrefix("off\non") == true
            if !started { usleep(10_000) }
        }
        XCTAssertTrue(started, "the helper started vibrating")
        kill(process.processIdentifier, number)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .uncaughtSignal, "ended by the signal, as without the cleanup")
        XCTAssertEqual(process.terminationStatus, number)
        XCTAssertEqual(directory.contents("log"), "off\non\noff\noff\n", "opened, on, stopped, closed")
    }

    /// In the helper process: vibrate for 10 s, logging each event; never returns.
    private static func runHelper(log: String) -> Never {
        let file = FileHandle(forWritingAtPath: log) ?? {
            FileManager.default.createFile(atPath: log, contents: nil)
            return FileHandle(forWritingAtPath: log)!
        }()
        let vibrator = try! Vibrator(backend: CallbackBackend { event in
            file.write(Data((event == .off ? "off\n" : "on\n").utf8))
        })
        Vibrator.installSignalCleanup()
        vibrator.vibrate(try! .waveform([10_000]))
        vibrator.waitUntilIdle()
        // Reached only when the signal did not end the process.
        usleep(500_000)
        file.write(Data("still running\n".utf8))
        exit(0)
    }
}
