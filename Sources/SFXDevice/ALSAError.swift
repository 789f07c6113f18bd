import CALSA
import CSFXALSA
import Glibc

/// An alsa-lib call (or a device of sfx's own) that failed: which call, on which device, the
/// errno's name and ALSA's words. The cases sort the errno into what a caller acts on; every
/// case carries the device, the operation and the positive errno (`code`).
///
/// Its description is one line that names the device and what to do: `DeviceFailure` sorts the
/// errno further by where the device leads (a sound server's plugin, a card, a PCM name alsa-lib
/// does not know) and says whether waiting may help (`isTransient`).
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
        case EHOSTDOWN: "EHOSTDOWN"
        case ECONNREFUSED: "ECONNREFUSED"
        default: "errno \(code)"
        }
    }

    /// What the failure is, sorted for what a program does about it: see `DeviceFailure`. It
    /// reads alsa-lib's configuration (which plugin the device leads to) and, for a sound
    /// server's plugin, whether the server's socket answers: call it off the real-time thread.
    public var failure: DeviceFailure { DeviceFailure(self) }

    /// Whether waiting may help: the device's sound server is not up yet, the device or card is
    /// absent, unplugged or busy, or the call was interrupted — a program may keep trying to
    /// open it (with back-off). False for what only a change of configuration, permissions or
    /// request mends (a format or rate the device does not offer, no permission, a PCM name
    /// alsa-lib does not know, a server that refuses this user). Reads the configuration as
    /// `failure` does.
    public var isTransient: Bool { failure.isTransient }

    /// One line that names the device, what failed and the fix (see `DeviceFailure`).
    public var description: String { failure.line }
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
