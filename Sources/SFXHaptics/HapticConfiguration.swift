import FoundationEssentials
import SFXSystem
import Glibc

/// Where to look for vibration hardware, and which optional backends to offer.
///
/// Detection tries the backends in this order and takes the first that is available:
/// evdev rumble, GPIO (only when `gpio` is set), sysfs, command (only when `command` is set),
/// callback (only when `callback` is set).
///
/// ```swift
/// var configuration = HapticConfiguration()
/// configuration.gpio = try GPIOLineConfiguration(parsing: "gpiochip0:17")
/// print(configuration.detect())                          // what `sfx haptics` shows
/// let vibrator = try Vibrator(configuration: configuration)            // first available
/// let buzzer = try Vibrator(configuration: configuration, backend: .gpio)   // this one only
/// ```
public struct HapticConfiguration: Sendable {
    /// The evdev node directory to scan.
    public var inputDirectory = "/dev/input"
    /// One evdev node to use instead of scanning.
    public var inputDevice: String?
    /// The GPIO line of a buzzer or motor; the GPIO backend is offered only when set.
    public var gpio: GPIOLineConfiguration?
    /// The sysfs mount point.
    public var sysRoot = "/sys"
    /// The LED class vibrator to use instead of the first named "*vibrator*".
    public var ledName: String?
    /// A program and its arguments; the command backend is offered only when set.
    public var command: [String]?
    /// A handler; the callback backend is offered only when set.
    public var callback: (@Sendable (HapticEvent) -> Void)?
    /// The system calls the evdev and GPIO backends make.
    public var syscalls: any HapticSyscalls = LiveHapticSyscalls()

    public init() {}

    /// The backend of `kind`, or why it is not configured.
    public func backend(_ kind: HapticBackendKind) -> Result<any HapticBackend, HapticError> {
        switch kind {
        case .evdev:
            return .success(EvdevRumbleBackend(inputDirectory: inputDirectory, device: inputDevice, syscalls: syscalls))
        case .gpio:
            guard let gpio else { return .failure(HapticError("not configured — give a chip and line, e.g. --gpio gpiochip0:17")) }
            return .success(GPIOBackend(line: gpio, syscalls: syscalls))
        case .sysfs:
            return .success(SysfsVibratorBackend(sysRoot: sysRoot, ledName: ledName, syscalls: syscalls))
        case .command:
            guard let command else { return .failure(HapticError("not configured — give a program, e.g. --command /usr/local/bin/buzz")) }
            return .success(CommandBackend(arguments: command))
        case .callback:
            guard let callback else { return .failure(HapticError("not configured — set a callback in the program")) }
            return .success(CallbackBackend(callback))
        }
    }

    /// Every backend, in detection order, with "available" or the reason it is not.
    public func detect() -> HapticDetectionReport {
        HapticDetectionReport(entries: HapticBackendKind.allCases.map { kind in
            switch backend(kind) {
            case .success(let backend): (kind, backend.availability())
            case .failure(let error): (kind, .unavailable(reason: error.description))
            }
        })
    }

    /// The backend of `kind` if it is available, or with `kind` nil the first available one in
    /// detection order.
    public func availableBackend(_ kind: HapticBackendKind? = nil) throws(HapticError) -> any HapticBackend {
        guard let kind else {
            for kind in HapticBackendKind.allCases {
                if let backend = try? backend(kind).get(), backend.availability().isAvailable { return backend }
            }
            throw HapticError("no vibration backend is available — run `sfx haptics` to see why each one is not")
        }
        let backend = try backend(kind).mapError { HapticError("\(kind) vibration is \($0)") }.get()
        if case .unavailable(let reason) = backend.availability() {
            throw HapticError("\(kind) vibration is not available: \(reason)")
        }
        return backend
    }
}

/// What `HapticConfiguration.detect()` found: one line per backend, in detection order.
///
/// ```
/// evdev     no /dev/input/event* reports FF_RUMBLE — connect a game pad …
/// gpio      not configured — give a chip and line, e.g. --gpio gpiochip0:17
/// sysfs     available: /sys/class/leds/vibrator
/// ```
public struct HapticDetectionReport: Sendable, CustomStringConvertible {
    public let entries: [(kind: HapticBackendKind, availability: HapticAvailability)]

    /// The backend auto-detection would pick, if any.
    public var firstAvailable: HapticBackendKind? {
        entries.first { $0.availability.isAvailable }?.kind
    }

    public var description: String {
        entries.map { entry in
            let name = entry.kind.rawValue.padded(to: 10)
            switch entry.availability {
            case .available(let target): return "\(name)available: \(target)"
            case .unavailable(let reason): return "\(name)\(reason)"
            }
        }.joined(separator: "\n")
    }
}
