import SFXHaptics
import XCTest

final class DetectionTests: XCTestCase {
    private var root: TemporaryDirectory!
    private var configuration = HapticConfiguration()

    override func setUpWithError() throws {
        root = try TemporaryDirectory(removedAfter: self)
        configuration.inputDirectory = "\(root.path)/dev/input"
        configuration.sysRoot = "\(root.path)/sys"
        configuration.syscalls = TracingSyscalls()
    }

    func testNothingPresentListsEveryBackendWithItsReason() {
        let report = configuration.detect()
        XCTAssertEqual(report.entries.map(\.kind), [.evdev, .gpio, .sysfs, .command, .callback])
        XCTAssertNil(report.firstAvailable)
        XCTAssertEqual(report.description, """
            evdev     no \(root.path)/dev/input/event* reports FF_RUMBLE — connect a game pad or vibrator with force feedback, or pick another backend
            gpio      not configured — give a chip and line, e.g. --gpio gpiochip0:17
            sysfs     no vibrator under \(root.path)/sys/class/leds (*vibrator*) or \(root.path)/sys/class/timed_output/vibrator — this machine has no sysfs vibrator; pick another backend
            command   not configured — give a program, e.g. --command /usr/local/bin/buzz
            callback  not configured — set a callback in the program
            """)
        XCTAssertThrowsError(try Vibrator(configuration: configuration)) { error in
            XCTAssertEqual((error as? HapticError)?.description,
                           "no vibration backend is available — run `sfx haptics` to see why each one is not")
        }
        XCTAssertThrowsError(try Vibrator(configuration: configuration, backend: .gpio)) { error in
            XCTAssertEqual((error as? HapticError)?.description,
                           "gpio vibration is not configured — give a chip and line, e.g. --gpio gpiochip0:17")
        }
    }

    func testDetectionOrderPrefersEvdevThenGPIOThenSysfs() throws {
        try root.file("sys/class/timed_output/vibrator/enable", "0")
        configuration.callback = { _ in }
        XCTAssertEqual(configuration.detect().firstAvailable, .sysfs)
        configuration.gpio = GPIOLineConfiguration(chip: "gpiochip0", offset: 5)
        XCTAssertEqual(configuration.detect().firstAvailable, .gpio)
        try root.file("dev/input/event2")
        let syscalls = TracingSyscalls()
        syscalls.rumbleDevices = ["\(root.path)/dev/input/event2"]
        configuration.syscalls = syscalls
        let report = configuration.detect()
        XCTAssertEqual(report.firstAvailable, .evdev)
        XCTAssertEqual(report.entries.filter { $0.availability.isAvailable }.map(\.kind), [.evdev, .gpio, .sysfs, .callback])
        XCTAssertEqual(try configuration.availableBackend().kind, .evdev)
        XCTAssertEqual(try configuration.availableBackend(.sysfs).kind, .sysfs)
    }
}
