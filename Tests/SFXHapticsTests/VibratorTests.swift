import SFXHaptics
import XCTest

/// The Vibrator's timing, replacement and cancellation, through a callback backend that records
/// each event and when it came. Margins are generous: these machines wake late now and then.
final class VibratorTests: XCTestCase {
    private let recorder = EventRecorder()

    private func makeVibrator() throws -> Vibrator {
        let recorder = self.recorder
        return try Vibrator(backend: CallbackBackend { recorder.record($0) })
    }

    func testPatternPlaysInOrderForItsDurationsAndEndsOff() throws {
        let vibrator = try makeVibrator()
        vibrator.vibrate(try .waveform([100, 150, 100], amplitudes: [0.5, 0, 1]))
        vibrator.waitUntilIdle()
        let timed = recorder.timed
        XCTAssertEqual(timed.map(\.event), [
            .off, .on(amplitude: 0.5, milliseconds: 100), .off, .on(amplitude: 1, milliseconds: 100), .off,
        ])
        let gaps = zip(timed.dropFirst(2), timed.dropFirst()).map { $0.seconds - $1.seconds }
        for (gap, nominal) in zip(gaps, [0.100, 0.150, 0.100]) {
            XCTAssertGreaterThanOrEqual(gap, nominal * 0.9)
            XCTAssertLessThan(gap, nominal + 0.5)
        }
    }

    func testNewVibrationReplacesTheRunningOne() throws {
        let vibrator = try makeVibrator()
        vibrator.vibrate(try .waveform([5000]))
        usleep(50_000)
        vibrator.vibrate(.click)
        vibrator.waitUntilIdle()
        let timed = recorder.timed
        XCTAssertEqual(timed.map(\.event), [
            .off, .on(amplitude: 1, milliseconds: 5000), .off, .on(amplitude: 1, milliseconds: 20), .off,
        ])
        XCTAssertLessThan(timed[2].seconds - timed[1].seconds, 2.0, "the long buzz was cut short")
    }

    func testCancelLeavesARepeatingPatternOff() throws {
        let vibrator = try makeVibrator()
        vibrator.vibrate(try .waveform([20, 20], repeatIndex: 0))
        usleep(150_000)
        vibrator.cancel()
        vibrator.waitUntilIdle()
        let events = recorder.events
        XCTAssertGreaterThanOrEqual(events.filter { $0 != .off }.count, 2, "it repeated")
        XCTAssertEqual(events.last, .off)
        let settled = events.count
        usleep(100_000)
        XCTAssertEqual(recorder.events.count, settled, "nothing plays after cancel")
    }

    func testCloseAllSwitchesOffAndRefusesLaterVibrations() throws {
        let vibrator = try makeVibrator()
        vibrator.vibrate(try .waveform([5000]))
        usleep(50_000)
        Vibrator.closeAll()
        XCTAssertEqual(recorder.events.suffix(2), [.off, .off], "stopped, then closed")
        vibrator.vibrate()
        XCTAssertEqual(vibrator.lastError?.description, "the vibrator is closed — create a new one to vibrate")
    }

    func testDeinitSwitchesOff() throws {
        var vibrator: Vibrator? = try makeVibrator()
        vibrator?.vibrate(try .waveform([5000]))
        usleep(50_000)
        vibrator = nil
        XCTAssertEqual(recorder.events.last, .off)
        XCTAssertEqual(recorder.events.filter { $0 != .off }.count, 1)
    }
}
