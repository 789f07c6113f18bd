import Glibc

/// A GPIO output line, as a kiosk's buzzer or a vibration motor's driver transistor uses.
///
/// Written as `chip:offset` on the command line (`gpiochip0:17`, or `gpiochip0:17:active-low`);
/// `chip` is anything libgpiod's lookup accepts: a name (`gpiochip0`), a number, a path
/// (`/dev/gpiochip0`) or a label.
public struct GPIOLineConfiguration: Sendable, Equatable, CustomStringConvertible {
    public var chip: String
    public var offset: UInt32
    /// The actuator is on when the line is driven low.
    public var activeLow: Bool

    public init(chip: String, offset: UInt32, activeLow: Bool = false) {
        self.chip = chip
        self.offset = offset
        self.activeLow = activeLow
    }

    /// Parses `chip:offset[:active-low]`.
    public init(parsing text: String) throws(HapticError) {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard (2...3).contains(fields.count), !fields[0].isEmpty, let offset = UInt32(fields[1]),
              fields.count == 2 || fields[2] == "active-low"
        else {
            throw HapticError("GPIO line '\(text)' is not chip:offset — write e.g. gpiochip0:17 or gpiochip0:17:active-low")
        }
        self.init(chip: fields[0], offset: offset, activeLow: fields.count == 3)
    }

    public var description: String { "\(chip) line \(offset)\(activeLow ? " (active low)" : "")" }
}

/// Vibration on a GPIO line through libgpiod: the line is requested as an output, driven off at
/// once, then on (any amplitude above 0) and off as the pattern says.
///
/// A GPIO line has no kernel timer, so this backend is careful to leave it off: when opened (a
/// line left on by a crashed program is switched off), at the end of every pattern, on cancel and
/// on close — and `Vibrator.installSignalCleanup()` extends that to SIGINT and SIGTERM. Every
/// libgpiod call goes through `HapticSyscalls`.
///
/// The user needs access to `/dev/gpiochip*`: membership of the `gpio` group or a udev rule.
public final class GPIOBackend: SwitchedHapticBackend, @unchecked Sendable {
    public let kind = HapticBackendKind.gpio
    public let line: GPIOLineConfiguration
    private let syscalls: any HapticSyscalls
    // Touched only from open/play/close, which the Vibrator serialises.
    private var handle: GPIOLineHandle?

    static let consumer = "sfx-vibrate"

    public init(line: GPIOLineConfiguration, syscalls: any HapticSyscalls = LiveHapticSyscalls()) {
        self.line = line
        self.syscalls = syscalls
    }

    /// Requests the line driven off and releases it again: that proves access and leaves it off.
    public func availability() -> HapticAvailability {
        switch request() {
        case .success(let probe):
            syscalls.gpioRelease(probe)
            return .available(line.description)
        case .failure(let error):
            return .unavailable(reason: error.description)
        }
    }

    public func open() throws(HapticError) {
        close()
        handle = try request().get()
    }

    public func switchOn(amplitude: Double, milliseconds: Int) throws(HapticError) {
        try set(1)
    }

    public func switchOff() throws(HapticError) {
        try set(0)
    }

    public func close() {
        guard let handle else { return }
        try? set(0)
        syscalls.gpioRelease(handle)
        self.handle = nil
    }

    private func set(_ value: Int32) throws(HapticError) {
        guard let handle else { throw HapticError("\(line): not requested — open the backend first") }
        let result = syscalls.gpioSetValue(handle, value)
        guard result >= 0 else { throw HapticError.system(-result, device: line.description, operation: "set the line", kind: .gpioLine) }
    }

    private func request() -> Result<GPIOLineHandle, HapticError> {
        syscalls.gpioRequestOutput(chip: line.chip, offset: line.offset, activeLow: line.activeLow, consumer: Self.consumer, value: 0)
            .mapError(describe)
    }

    private func describe(_ failure: GPIOFailure) -> HapticError {
        let lineName = "\(line.chip) line \(line.offset)"
        switch (failure.step, failure.errno) {
        case (.getLine, EINVAL):
            return HapticError("\(lineName): no such line (EINVAL) — give an offset below the chip's line count (gpioinfo \(line.chip) lists them)", errno: EINVAL)
        case (.openChip, _):
            return HapticError.system(failure.errno, device: line.chip, operation: "open the GPIO chip", kind: .gpioLine)
        default:
            return HapticError.system(failure.errno, device: lineName, operation: "request the line", kind: .gpioLine)
        }
    }
}
