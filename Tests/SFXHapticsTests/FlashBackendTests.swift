import Foundation
import SFXHaptics
import XCTest

/// The LED flash backend against a temporary directory laid out like /sys.
final class FlashBackendTests: XCTestCase {
    func testLEDFlashWritesMaximumThenZeroPerFlashAndRestores() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("sfx-led-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let led = "\(root)/class/leds/input3::capslock"
        try FileManager.default.createDirectory(atPath: led, withIntermediateDirectories: true)
        try "255\n".write(toFile: "\(led)/max_brightness", atomically: false, encoding: .utf8)
        try "1\n".write(toFile: "\(led)/brightness", atomically: false, encoding: .utf8)
        let trace = TracingSyscalls()
        trace.passThroughFiles = true
        let backend = LEDFlashBackend(name: "input3::capslock", sysRoot: root, syscalls: trace)
        XCTAssertTrue(backend.availability().isAvailable)
        let flasher = Flasher(backend: backend)
        flasher.flash(FlashPattern(count: 2, onMilliseconds: 1, offMilliseconds: 1), caption: "Bell")
        flasher.waitUntilIdle()
        XCTAssertEqual(trace.writtenFiles.map(\.text), ["255\n", "0\n", "255\n", "0\n", "1\n"])
        XCTAssertEqual(Set(trace.writtenFiles.map(\.path)), ["\(led)/brightness"])
        XCTAssertEqual(try String(contentsOfFile: "\(led)/brightness", encoding: .utf8), "1\n")
    }

    func testLEDWithoutMaxBrightnessIsUnavailable() {
        let backend = LEDFlashBackend(name: "nothing", sysRoot: "/nonexistent-sys")
        XCTAssertFalse(backend.availability().isAvailable)
    }

    func testCommandFlashGetsCaption() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("sfx-flash-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let backend = CommandFlashBackend(arguments: ["/bin/sh", "-c", "printf '%s' \"$SFX_ALERT_CAPTION\" > \"$1\"", "sh", out])
        try backend.flash(.default, caption: "Message new instant")
        XCTAssertEqual(try String(contentsOfFile: out, encoding: .utf8), "Message new instant")
    }

    /// A command that never exits is stopped once the pattern's length and the allowance have
    /// passed, and the flash fails with a line saying so; its process group is gone.
    func testAFlashCommandThatNeverExitsIsStopped() throws {
        let pidFile = FileManager.default.temporaryDirectory.appendingPathComponent("sfx-flash-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: pidFile) }
        let backend = CommandFlashBackend(arguments: ["/bin/sh", "-c", "echo $$ > \"$1\"; exec sleep 600", "sh", pidFile],
                                          allowance: .milliseconds(300))
        let started = ContinuousClock.now
        XCTAssertThrowsError(try backend.flash(FlashPattern(count: 1, onMilliseconds: 100, offMilliseconds: 100), caption: "x")) { error in
            XCTAssertTrue("\(error)".contains("was still running after 0.5 s and was stopped"), "\(error)")
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(30), "it did not wait for the sleep")
        let pid = try XCTUnwrap(Int32(String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        XCTAssertEqual(kill(pid, 0), -1, "the command is gone")
    }
}
