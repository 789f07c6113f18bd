import CSFXSystem
import FoundationEssentials
import Glibc

/// A haptics failure as one line that names the device and says how to fix it.
///
/// System errors keep their errno (`errno`) so callers can branch on it; the text always names the
/// device, the errno's symbolic name and the fix:
///
/// ```
/// /dev/input/event3: permission denied (EACCES) — add the user to the 'input' group or add a udev rule
/// gpiochip0 line 17: busy (EBUSY) — another program holds the line; stop it (gpioinfo shows the consumer)
/// ```
public struct HapticError: Error, Equatable, CustomStringConvertible {
    public let description: String
    /// The errno behind the failure, or nil when it did not come from a system call.
    public let errno: Int32?

    public init(_ description: String, errno: Int32? = nil) {
        self.description = description
        self.errno = errno
    }

    /// The kind of device an errno refers to; it decides the fix the message suggests.
    public enum DeviceKind: Sendable {
        case inputDevice, gpioLine, sysfsFile, command
    }

    /// The one-line message for `errno` from `operation` (a verb such as "open") on `device`.
    public static func system(_ errno: Int32, device: String, operation: String, kind: DeviceKind) -> HapticError {
        let name = errnoName(errno)
        let text: String
        switch errno {
        case EACCES, EPERM:
            text = "permission denied (\(name)) — " + accessFix(kind)
        case ENODEV, ENXIO:
            text = "device is gone (\(name)) — reconnect it; `sfx haptics` lists what is present"
        case EBUSY:
            text = "busy (\(name)) — " + busyFix(kind)
        case ENOENT:
            text = "not found (\(name)) — check the name; `sfx haptics` lists what is present"
        default:
            text = "\(operation) failed: \(String(cString: strerror(errno))) (\(name))"
        }
        return HapticError("\(device): \(text)", errno: errno)
    }

    private static func accessFix(_ kind: DeviceKind) -> String {
        switch kind {
        case .inputDevice: "add the user to the 'input' group or add a udev rule"
        case .gpioLine: "add the user to the 'gpio' group or add a udev rule for /dev/gpiochip*"
        case .sysfsFile: "run as root or add a udev rule that makes the file writable"
        case .command: "make the command executable (chmod +x)"
        }
    }

    private static func busyFix(_ kind: DeviceKind) -> String {
        switch kind {
        case .gpioLine: "another program holds the line; stop it (gpioinfo shows the consumer)"
        default: "another program holds the device; close it or pick another"
        }
    }

    /// The symbolic name of an errno, as in swift-system's `Errno` ("EACCES"): the C library's
    /// (`sfx_errno_name`, shared with the virtual card's support).
    static func errnoName(_ errno: Int32) -> String {
        sfx_errno_name(errno).map { String(cString: $0) } ?? "errno \(errno)"
    }
}
