import Glibc
import SFXHaptics
import XCTest

/// The sysfs backends against a temporary directory laid out like /sys, through the real file
/// system; a tracing pass-through records which file got what, and when.
final class SysfsVibratorTests: XCTestCase {
    private var sys: TemporaryDirectory!
    private let syscalls = TracingSyscalls()

    override func setUpWithError() throws {
        sys = try TemporaryDirectory(removedAfter: self)
        syscalls.passThroughFiles = true
    }

    /// (file name relative to the sys root, text written, seconds since the trace began)
    private var writes: [(file: String, text: String, seconds: Double)] {
        syscalls.writtenFiles.map { (String($0.path.dropFirst(sys.path.count + 1)), $0.text, $0.seconds) }
    }

    private func makeLED(triggers: String = "[none] timer transient heartbeat") throws {
        try sys.file("class/leds/vibrator/trigger", triggers)
        for name in ["activate", "duration", "state"] { try sys.file("class/leds/vibrator/\(name)") }
    }

    func testLEDTransientTriggerSequenceAndTiming() throws {
        try makeLED()
        let backend = SysfsVibratorBackend(sysRoot: sys.path, syscalls: syscalls)
        XCTAssertEqual(backend.availability(), .available("\(sys.path)/class/leds/vibrator"))
        let vibrator = try Vibrator(backend: backend)
        vibrator.vibrate(try .waveform([100, 200, 150]))
        vibrator.waitUntilIdle()

        let led = "class/leds/vibrator/"
        XCTAssertEqual(writes.map { "\($0.file.dropFirst(led.count))=\($0.text)" }, [
            "trigger=transient", "activate=0",
            "duration=100", "state=1", "activate=1", "activate=0",
            "duration=150", "state=1", "activate=1", "activate=0",
        ])
        let times = writes.map(\.seconds)
        let firstOn = times[4], firstOff = times[5], secondOn = times[8], lastOff = times[9]
        XCTAssertGreaterThanOrEqual(firstOff - firstOn, 0.09)
        XCTAssertGreaterThanOrEqual(secondOn - firstOff, 0.18)
        XCTAssertGreaterThanOrEqual(lastOff - secondOn, 0.135)
        XCTAssertLessThan(lastOff - firstOn, 0.45 + 1.0)
        XCTAssertEqual(sys.contents("\(led)activate"), "0")
        XCTAssertEqual(sys.contents("\(led)duration"), "150")
        XCTAssertEqual(sys.contents("\(led)trigger"), "transient")
    }

    func testTimedOutputWritesMillisecondsThenZero() throws {
        try sys.file("class/timed_output/vibrator/enable", "0")
        let vibrator = try Vibrator(backend: SysfsVibratorBackend(sysRoot: sys.path, syscalls: syscalls))
        vibrator.vibrate(try .waveform([60, 40, 80]))
        vibrator.waitUntilIdle()
        XCTAssertEqual(Set(writes.map(\.file)), ["class/timed_output/vibrator/enable"])
        XCTAssertEqual(writes.map(\.text), ["0", "60", "0", "80", "0"])
        XCTAssertEqual(sys.contents("class/timed_output/vibrator/enable"), "0")
    }

    func testLEDWithoutTransientTriggerSaysWhichModuleToLoad() throws {
        try makeLED(triggers: "[none] timer heartbeat")
        XCTAssertEqual(SysfsVibratorBackend(sysRoot: sys.path).availability(), .unavailable(reason:
            "\(sys.path)/class/leds/vibrator/trigger does not offer 'transient' — load it with: modprobe ledtrig-transient"))
    }

    func testMissingAttributeIsReportedByName() throws {
        try sys.file("class/leds/vibrator/trigger", "none transient")
        XCTAssertThrowsError(try Vibrator(backend: SysfsVibratorBackend(sysRoot: sys.path, syscalls: syscalls))) { error in
            XCTAssertEqual((error as? HapticError)?.description,
                           "\(sys.path)/class/leds/vibrator/activate: not found (ENOENT) — check the name; `sfx haptics` lists what is present")
        }
    }
}
