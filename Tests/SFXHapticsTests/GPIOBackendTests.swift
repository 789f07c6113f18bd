import Glibc
import SFXHaptics
import XCTest

final class GPIOBackendTests: XCTestCase {
    private let syscalls = TracingSyscalls()
    private let line = GPIOLineConfiguration(chip: "gpiochip0", offset: 17, activeLow: true)

    func testLineIsOffWhenOpenedFollowsThePatternAndIsOffWhenClosed() throws {
        let vibrator = try Vibrator(backend: GPIOBackend(line: line, syscalls: syscalls))
        XCTAssertEqual(syscalls.trace, [.gpioRequest(chip: "gpiochip0", offset: 17, activeLow: true, value: 0)])
        vibrator.vibrate(try .waveform([30, 30, 30], amplitudes: [0.2, 0, 1]))
        vibrator.waitUntilIdle()
        vibrator.close()
        XCTAssertEqual(syscalls.trace.dropFirst(), [
            .gpioSet(value: 1), .gpioSet(value: 0), .gpioSet(value: 1), .gpioSet(value: 0),
            .gpioSet(value: 0), .gpioRelease,
        ])
    }

    func testAvailabilityProbesWithTheLineOffAndReleasesIt() {
        XCTAssertEqual(GPIOBackend(line: line, syscalls: syscalls).availability(), .available("gpiochip0 line 17 (active low)"))
        XCTAssertEqual(syscalls.trace, [.gpioRequest(chip: "gpiochip0", offset: 17, activeLow: true, value: 0), .gpioRelease])
    }

    func testBusyAndPermissionErrorsNameTheLineAndTheFix() {
        syscalls.failures[.gpioRequest] = EBUSY
        XCTAssertEqual(GPIOBackend(line: line, syscalls: syscalls).availability(), .unavailable(reason:
            "gpiochip0 line 17: busy (EBUSY) — another program holds the line; stop it (gpioinfo shows the consumer)"))
        syscalls.failures[.gpioRequest] = EACCES
        XCTAssertThrowsError(try Vibrator(backend: GPIOBackend(line: line, syscalls: syscalls))) { error in
            XCTAssertEqual((error as? HapticError)?.description,
                           "gpiochip0 line 17: permission denied (EACCES) — add the user to the 'gpio' group or add a udev rule for /dev/gpiochip*")
        }
    }

    func testRealLibgpiodReportsAMissingChip() {
        let missing = GPIOLineConfiguration(chip: "gpiochip-sfx-missing", offset: 0)
        guard case .unavailable(let reason) = GPIOBackend(line: missing).availability() else {
            return XCTFail("a chip that does not exist was reported available")
        }
        XCTAssertTrue(reason.hasPrefix("gpiochip-sfx-missing: "), reason)
        XCTAssertTrue(reason.contains("`sfx haptics` lists what is present") || reason.contains("failed"), reason)
    }

    func testLineParsing() throws {
        XCTAssertEqual(try GPIOLineConfiguration(parsing: "gpiochip0:17"), GPIOLineConfiguration(chip: "gpiochip0", offset: 17))
        XCTAssertEqual(try GPIOLineConfiguration(parsing: "/dev/gpiochip1:4:active-low"),
                       GPIOLineConfiguration(chip: "/dev/gpiochip1", offset: 4, activeLow: true))
        for bad in ["gpiochip0", "gpiochip0:x", ":3", "gpiochip0:3:low"] {
            XCTAssertThrowsError(try GPIOLineConfiguration(parsing: bad)) { error in
                XCTAssertEqual((error as? HapticError)?.description,
                               "GPIO line '\(bad)' is not chip:offset — write e.g. gpiochip0:17 or gpiochip0:17:active-low")
            }
        }
    }
}
