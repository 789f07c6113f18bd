import SFXPlayback
import FoundationEssentials
import SFXSystem
import Glibc
import SFXDevice
import SFXMedia

/// Why a recording (or a monitor) could not start or could not go on, as one line that names the
/// device or file and the fix.
public enum RecorderError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The capture device could not be opened (no such device, busy, no permission, a format it
    /// lacks, or a sound server's device with no server running).
    case device(ALSAError)
    /// A sound server's capture device (`default` through pipewire-alsa, `pulse`) on a machine
    /// with no sound card and no sound server running: nothing can record here but sfx's
    /// virtual card. `code` is the errno (EHOSTDOWN from PipeWire's plugin, ECONNREFUSED from Pulse's).
    case noCardNoServer(device: String, code: Int32)
    /// The capture device failed while recording (unplugged, or kept failing); `code` is the errno.
    case deviceLost(device: String, code: Int32)
    /// The file could not be created or written.
    case file(MediaError)
    /// The disk (or the file-size limit) filled up: recording stopped; the file keeps `seconds`.
    case diskFull(url: URL, seconds: Double)
    /// A setting out of range.
    case setting(SettingError)
    /// The prompt tone could not be played.
    case prompt(String)
    /// `record()` on a recorder that has already recorded (a recorder makes one file).
    case alreadyStarted
    /// Voice processing cannot run: the line (libspeexdsp missing, and what to install).
    case voiceProcessing(String)
    /// SFX_VIRTUAL_INPUT asked for sfx's virtual card and it cannot be used (`VirtualInput`).
    case virtualInput(String)

    public var description: String {
        switch self {
        case .device(let error):
            return Self.line(error)
        case .noCardNoServer(let device, let code):
            return "no sound card here and no sound server running, so capture device '\(device)' cannot open (\(Self.errnoName(code))): "
                + "start PipeWire or PulseAudio, pick another device with --device (`sfx devices` lists them), "
                + "or leave out --device to record from sfx's virtual card"
        case .deviceLost(let device, let code):
            return "capture device '\(device)' failed while recording (\(Self.errnoName(code))); what was recorded until then is kept; reconnect it and record again"
        case .file(let error):
            return error.description
        case .diskFull(let url, let seconds):
            return "\(url.path): the disk is full (or the file-size limit reached): recording stopped and the \(String(cFormat: "%.1f", seconds)) s written so far were kept; free some space"
        case .setting(let error):
            return error.description
        case .prompt(let why):
            return "the prompt tone cannot be played (\(why)); choose another sound, or record without one"
        case .alreadyStarted:
            return "this recorder has already recorded; make a new Recorder for the next recording"
        case .voiceProcessing(let why):
            return "voice processing cannot run: \(why); or record without it (voiceProcessing = .off)"
        case .virtualInput(let line):
            return line
        }
    }

    /// The error for a failed open of `device`: `.noCardNoServer` when a sound server's device
    /// failed for want of a server on a machine without a sound card, else `.device`.
    public static func opening(_ error: ALSAError, hasSoundCard: Bool = DeviceList.hasSoundCard) -> RecorderError {
        if isServerAbsent(error.code), !hasSoundCard { return .noCardNoServer(device: error.device, code: error.code) }
        return .device(error)
    }

    /// EHOSTDOWN (PipeWire's ALSA plugin) and ECONNREFUSED (Pulse's): the device's sound server
    /// is not running.
    public static func isServerAbsent(_ code: Int32) -> Bool { code == EHOSTDOWN || code == ECONNREFUSED }

    /// One line for a device that did not open: the device in quotes, what went wrong with the
    /// errno's name, and the fix.
    private static func line(_ error: ALSAError) -> String {
        let device = "capture device '\(error.device)'"
        let other = "pick another device with --device (`sfx devices` lists them)"
        let code = errnoName(error.code)
        switch error {
        case .noDevice:
            return "no \(device) (\(code)): connect a microphone, or \(other)"
        case .busy:
            return "\(device) is busy (\(code)): another program is recording from it; close that program, or \(other)"
        case .permissionDenied:
            return "no permission to open \(device) (\(code)): add your user to the `audio` group (sudo usermod -aG audio $USER) and log in again"
        case .unsupported:
            return "\(device) cannot record as asked: \(error.operation) failed (\(code)); try --rate 48000 or --channels 1, or \(other)"
        case .failed where isServerAbsent(error.code):
            return "\(device) needs a sound server and none is running (\(code)): start PipeWire or PulseAudio, or \(other)"
        case .failed:
            return "\(device) failed at \(error.operation) (\(code): \(String(cString: strerror(error.code)))); \(other)"
        }
    }

    /// "EHOSTDOWN", "ENOENT", …; "errno N" for the rare others.
    public static func errnoName(_ code: Int32) -> String {
        switch code {
        case EHOSTDOWN: "EHOSTDOWN"
        case ECONNREFUSED: "ECONNREFUSED"
        case ENOENT: "ENOENT"
        case ENODEV: "ENODEV"
        case ENXIO: "ENXIO"
        case EBUSY: "EBUSY"
        case EACCES: "EACCES"
        case EPERM: "EPERM"
        case EINVAL: "EINVAL"
        case EIO: "EIO"
        case EPIPE: "EPIPE"
        case ESTRPIPE: "ESTRPIPE"
        case EBADFD: "EBADFD"
        case ENOMEM: "ENOMEM"
        case EAGAIN: "EAGAIN"
        default: "errno \(code)"
        }
    }
}

/// What a recorder reports, in order: `started`, then any of `paused`, `resumed` and `overrun`,
/// and exactly one of `finished`, `discarded` or `failed`.
public enum RecorderEvent: Sendable, Equatable, CustomStringConvertible {
    /// Capture began; frames go to `url`.
    case started(URL)
    case paused
    case resumed
    /// The capture device overran (the capture thread was late); `count` so far. Recovered at once.
    case overrun(count: Int)
    /// The file is complete: `duration` seconds of audio at `url`.
    case finished(url: URL, duration: Double)
    /// The file was removed: cancelled, or shorter than the minimum. `reason` says which.
    case discarded(url: URL, reason: String)
    /// Recording stopped on an error. For a full disk or a lost device the file keeps what was
    /// written, and when a finished M4A could not be rewritten as a standard file it stays
    /// fragmented, complete (the error's line says so); otherwise there is no file.
    case failed(RecorderError)

    public var description: String {
        switch self {
        case .started(let url): "started: \(url.path)"
        case .paused: "paused"
        case .resumed: "resumed"
        case .overrun(let count): "overrun (\(count) so far)"
        case .finished(let url, let duration): "finished: \(url.path), \(String(cFormat: "%.2f", duration)) s"
        case .discarded(let url, let reason): "discarded: \(url.path): \(reason)"
        case .failed(let error): "failed: \(error)"
        }
    }
}
