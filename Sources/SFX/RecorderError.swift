import Foundation
import Glibc
import SFXDevice
import SFXMedia

/// Why a recording (or a monitor) could not start or could not go on, as one line that names the
/// device or file and the fix.
public enum RecorderError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The capture device could not be opened (no such device, busy, no permission, a format it lacks).
    case device(ALSAError)
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

    public var description: String {
        switch self {
        case .device(let error):
            switch error {
            case .permissionDenied(let device, _, _):
                return "no permission to use \(device): add your user to the `audio` group (sudo usermod -aG audio $USER) and log in again"
            case .busy(let device, _):
                return "capture device \(device) is busy: another program is recording from it; close that program, or choose another device (--device; `sfx devices` lists them)"
            case .noDevice(let device, _, _):
                return "no capture device \(device): connect a microphone, or choose another device (--device; `sfx devices` lists them)"
            default:
                return "capture device \(error)"
            }
        case .deviceLost(let device, let code):
            return "capture device \(device) failed while recording (\(String(cString: strerror(code)))); what was recorded until then is kept; reconnect it and record again"
        case .file(let error):
            return error.description
        case .diskFull(let url, let seconds):
            return "\(url.path): the disk is full (or the file-size limit reached): recording stopped and the \(String(format: "%.1f", seconds)) s written so far were kept; free some space"
        case .setting(let error):
            return error.description
        case .prompt(let why):
            return "the prompt tone cannot be played (\(why)); choose another sound, or record without one"
        case .alreadyStarted:
            return "this recorder has already recorded; make a new Recorder for the next recording"
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
    /// written (the error's line says so); otherwise there is no file.
    case failed(RecorderError)

    public var description: String {
        switch self {
        case .started(let url): "started: \(url.path)"
        case .paused: "paused"
        case .resumed: "resumed"
        case .overrun(let count): "overrun (\(count) so far)"
        case .finished(let url, let duration): "finished: \(url.path), \(String(format: "%.2f", duration)) s"
        case .discarded(let url, let reason): "discarded: \(url.path): \(reason)"
        case .failed(let error): "failed: \(error)"
        }
    }
}
