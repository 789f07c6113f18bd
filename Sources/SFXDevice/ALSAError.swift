import CALSA
import CSFXALSA
import Glibc

/// An alsa-lib call (or a device of sfx's own) that failed: which call, on which device, the
/// errno's name and ALSA's words. The cases sort the errno into what a caller acts on; every
/// case carries the device, the operation and the positive errno (`code`).
///
/// Its description is one line that names the device and, for the common cases (no such device,
/// busy, no permission), what to do.
public enum ALSAError: Error, CustomStringConvertible, Sendable, Hashable {
    /// No such device, or it went away (ENOENT, ENODEV, ENXIO): pick another, or reopen it later.
    case noDevice(device: String, operation: String, code: Int32)
    /// Another program holds the device (EBUSY).
    case busy(device: String, operation: String)
    /// The user may not open it (EACCES, EPERM).
    case permissionDenied(device: String, operation: String, code: Int32)
    /// The device cannot do what was asked (EINVAL): a format, rate or size it does not offer,
    /// or a request out of range.
    case unsupported(device: String, operation: String)
    /// Any other failure; `code` says which.
    case failed(device: String, operation: String, code: Int32)

    /// The case for `code` (an errno, negative or positive).
    public init(device: String, operation: String, code: Int32) {
        let code = code < 0 ? -code : code
        switch code {
        case ENOENT, ENODEV, ENXIO: self = .noDevice(device: device, operation: operation, code: code)
        case EBUSY: self = .busy(device: device, operation: operation)
        case EACCES, EPERM: self = .permissionDenied(device: device, operation: operation, code: code)
        case EINVAL: self = .unsupported(device: device, operation: operation)
        default: self = .failed(device: device, operation: operation, code: code)
        }
    }

    public var device: String {
        switch self {
        case .noDevice(let device, _, _), .busy(let device, _), .permissionDenied(let device, _, _),
             .unsupported(let device, _), .failed(let device, _, _): device
        }
    }

    public var operation: String {
        switch self {
        case .noDevice(_, let operation, _), .busy(_, let operation), .permissionDenied(_, let operation, _),
             .unsupported(_, let operation), .failed(_, let operation, _): operation
        }
    }

    /// The positive errno value (ENODEV, EBUSY, …).
    public var code: Int32 {
        switch self {
        case .noDevice(_, _, let code), .permissionDenied(_, _, let code), .failed(_, _, let code): code
        case .busy: EBUSY
        case .unsupported: EINVAL
        }
    }

    /// The device is gone (unplugged or disconnected): reopen it later.
    public var isDisconnect: Bool { if case .noDevice = self { true } else { false } }

    public var errnoName: String {
        switch code {
        case EPERM: "EPERM"
        case ENOENT: "ENOENT"
        case EIO: "EIO"
        case ENXIO: "ENXIO"
        case EAGAIN: "EAGAIN"
        case ENOMEM: "ENOMEM"
        case EACCES: "EACCES"
        case EBUSY: "EBUSY"
        case ENODEV: "ENODEV"
        case EINVAL: "EINVAL"
        case EPIPE: "EPIPE"
        case ESTRPIPE: "ESTRPIPE"
        case EBADFD: "EBADFD"
        case ENOSYS: "ENOSYS"
        default: "errno \(code)"
        }
    }

    public var description: String {
        let words = String(cString: snd_strerror(-code))
        let fix: String
        switch code {
        case ENOENT, ENODEV, ENXIO:
            fix = "; `sfx devices` lists the devices there are, and --device picks one"
        case EBUSY:
            fix = "; another program holds it: use a shared device such as 'default' or 'dmix', or close the other program"
        case EACCES, EPERM:
            fix = "; add the user to the 'audio' group (usermod -aG audio $USER) and log in again"
        default:
            fix = ""
        }
        return "audio device '\(device)': \(operation) failed: \(words) (\(errnoName))\(fix)"
    }
}

/// alsa-lib set up for sfx: its own stderr diagnostics silenced (sfx reports every failure as one
/// line of its own). Touch `ALSALibrary.ready` before the first alsa-lib call.
enum ALSALibrary {
    static let ready: Void = sfx_alsa_silence_errors()
}

/// Runs an alsa-lib call returning a negative errno on failure.
@inline(__always)
func check(_ result: Int32, _ device: String, _ operation: String) throws(ALSAError) {
    if result < 0 { throw ALSAError(device: device, operation: operation, code: result) }
}
