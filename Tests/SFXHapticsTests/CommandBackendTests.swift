import Foundation
import SFXHaptics
import XCTest

/// The command backend with real programs: shell scripts in a temporary directory, run without a
/// shell of ours.
final class CommandBackendTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
    }

    private func script(_ name: String, _ body: String) throws -> String {
        let path = try directory.file(name, "#!/bin/sh\n\(body)\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        return path
    }

    func testPatternArrivesInTheEnvironmentAndArgumentsAsGiven() throws {
        let output = "\(directory.path)/out"
        let path = try script("buzz", #"echo "$1|$SFX_VIBRATE_MS|$SFX_VIBRATE_PATTERN|$SFX_VIBRATE_AMPLITUDE|$SFX_VIBRATE_REPEAT" > "$2""#)
        let vibrator = try Vibrator(backend: CommandBackend(arguments: [path, "two words", output]))
        vibrator.vibrate(try .waveform([200, 100, 200], amplitudes: [0.5, 0, 1]))
        vibrator.waitUntilIdle()
        XCTAssertNil(vibrator.lastError)
        XCTAssertEqual(directory.contents("out"), "two words|500|200,100,200|0.5,0,1|-1\n")
    }

    func testCancelTerminatesTheProgram() throws {
        let marker = "\(directory.path)/finished"
        let path = try script("slow", "sleep 30; touch \"\(marker)\"")
        let vibrator = try Vibrator(backend: CommandBackend(arguments: [path]))
        let started = Date()
        vibrator.vibrate()
        usleep(100_000)
        vibrator.cancel()
        vibrator.waitUntilIdle()
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker))
        XCTAssertNil(vibrator.lastError)
    }

    func testFailingProgramIsReported() throws {
        let path = try script("broken", "exit 3")
        let vibrator = try Vibrator(backend: CommandBackend(arguments: [path]))
        vibrator.vibrate(.click)
        vibrator.waitUntilIdle()
        XCTAssertEqual(vibrator.lastError?.description,
                       "vibration command \(path) failed (status 3) — run it by hand with SFX_VIBRATE_MS=400 to see why")
    }

    func testMissingProgramIsNamed() {
        let backend = CommandBackend(arguments: ["sfx-no-such-buzzer"], environment: ["PATH": directory.path])
        XCTAssertEqual(backend.availability(), .unavailable(reason:
            "vibration command 'sfx-no-such-buzzer' was not found or is not executable — give a full path or put it on PATH"))
    }

    func testProgramIsFoundOnPath() throws {
        let path = try script("buzz", "exit 0")
        XCTAssertEqual(CommandBackend(arguments: ["buzz"], environment: ["PATH": "/nonexistent:\(directory.path)"]).availability(),
                       .available(path))
    }
}
