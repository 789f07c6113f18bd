import CALSA
import CSFXALSA
import Glibc

/// An alsa-lib call that failed: which call, on which device, the errno's name and ALSA's words.
///
/// Its description is one line that names the device and, for the common cases (no such device,
/// busy, no permission), what to do.
public struct ALSAError: Error, CustomStringConvertible, Sendable {
    public let device: String
    public let operation: String
    /// The positive errno value (ENODEV, EBUSY, …).
    public let code: Int32

    public init(device: String, operation: String, code: Int32) {
        self.device = device
        self.operation = operation
        self.code = code < 0 ? -code : code
    }

    /// The device is gone (unplugged or disconnected): reopen it later.
    public var isDisconnect: Bool { code == ENODEV || code == ENXIO || code == ENOENT }

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
