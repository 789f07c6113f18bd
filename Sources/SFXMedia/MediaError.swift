import FoundationEssentials
import SFXSystem
import Glibc

/// Why a sound could not be loaded, inspected, written or found, as one line a person can act on.
///
/// Every failure in SFXMedia is a `MediaError`: the thing it concerns (`subject`, usually a file
/// path, or the name given to a caller's buffer) and a `Reason`. Its `description` is a single
/// line that names the subject, says what is wrong and, where there is one, what to do:
///
/// ```
/// coin.ogg: no such file; check the path (relative paths start at the current directory)
/// long.wav: is 45.0 s long, over the 30 s cue limit; cues are short sounds held in memory: play it with a Player (streamed), or raise CueLimits.maximumDuration to load it anyway
/// ```
///
/// Tests and callers match on `reason`; people read `description`.
public struct MediaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Sendable, Equatable {
        /// Nothing exists at the path.
        case missingFile
        /// The path names a directory.
        case isDirectory
        /// The path names a FIFO, a device or a socket; carries which ("a FIFO", "a character device").
        case notRegularFile(kind: String)
        /// The file exists but this user may not read it; carries "owner, group, mode" when known.
        case unreadable(ownership: String)
        /// The file has zero bytes.
        case emptyFile
        /// The content is not a sound format libsndfile knows; carries what it looks like instead.
        case notAudio(looksLike: String)
        /// The header promises more frames than the file holds.
        case truncated(promisedFrames: Int64, foundFrames: Int64)
        /// The audio data cannot be decoded (or holds NaN or infinite samples).
        case corrupt(detail: String)
        /// A valid header with no frames after it.
        case noFrames
        /// A header value no real sound has (sample rate, channel count, frame count).
        case absurdHeader(detail: String)
        /// Longer than the cue limit.
        case tooLong(seconds: Double, limit: Double)
        /// Its cue would take more memory than `CueLimits.maximumBytes`: the source's channels,
        /// rate and length (nil when unknown), the cue's bytes and format, and the limit.
        case tooLarge(channels: Int, sampleRate: Int, seconds: Double?, cueBytes: Int64, cueFormat: String, limit: Int)
        /// A known container with an encoding this libsndfile cannot decode or encode.
        case unsupportedEncoding(detail: String)
        /// libsndfile cannot read the file and FFmpeg's libraries, which might, cannot be loaded.
        case ffmpegMissing(reason: String)
        /// Writing: the chosen encoding cannot take these samples (rate, channels).
        case unsupportedOutput(detail: String)
        /// A sample rate outside the rates sfx converts (`accepted`: `SoundFile.sampleRates`).
        case unsupportedSampleRate(Int, accepted: ClosedRange<Int>)
        /// A caller's PCM buffer that cannot become a cue.
        case invalidBuffer(detail: String)
        /// Normalising: the sound is silent (nothing above −70 LUFS), so no gain gives it a loudness.
        case silent
        /// Writing: the directory that should hold the file does not exist.
        case directoryMissing(directory: String)
        /// Writing: permission denied.
        case notWritable
        /// Writing: no space left on the device.
        case diskFull
        /// No bundled Sounds/ directory was found; carries the places searched.
        case soundsDirectoryNotFound(searched: [String])
        /// Any other operating-system or library failure, with its own wording.
        case failed(detail: String)
    }

    /// The file path (or buffer name) the error concerns.
    public let subject: String
    public let reason: Reason

    public init(_ reason: Reason, subject: String) {
        self.reason = reason
        self.subject = subject
    }

    public var description: String { "\(subject): \(explanation)" }

    private var explanation: String {
        switch reason {
        case .missingFile:
            return "no such file; check the path (relative paths start at the current directory)"
        case .isDirectory:
            return "is a directory, not a sound file; name a file inside it"
        case .notRegularFile(let kind):
            return "is \(kind), not a regular file; give the path of a regular file"
        case .unreadable(let ownership):
            return "permission denied (\(ownership)); make it readable with `chmod a+r \(subject)` or add your user to the file's group"
        case .emptyFile:
            return "is empty (0 bytes); copy or export the sound again"
        case .notAudio(let looksLike):
            return "is not a sound file (\(looksLike)); use WAV, AIFF, FLAC, Ogg Vorbis, Opus, MP3, CAF, M4A (AAC, ALAC) or WMA"
        case .truncated(let promised, let found):
            return "is truncated: its header promises \(promised) frames but the file holds \(found); copy or export it again"
        case .corrupt(let detail):
            return "has corrupt audio data (\(detail)); export it again"
        case .noFrames:
            return "contains no audio frames; export it again with sound in it"
        case .absurdHeader(let detail):
            return "has an impossible header (\(detail)); the file is damaged, export it again"
        case .tooLong(let seconds, let limit):
            let (length, limitText) = MediaError.distinct(seconds, limit)
            return "is \(length) s long, over the \(limitText) s cue limit; "
                + "cues are short sounds held in memory: play it with a Player (streamed), or raise CueLimits.maximumDuration to load it anyway"
        case .tooLarge(let channels, let rate, let seconds, let bytes, let format, let limit):
            let length = seconds.map { String(cFormat: "%.1f s", $0) } ?? "longer than its header says"
            let limitText = "the \(MediaError.megabytes(Int64(limit))) cue memory limit"
            let size = bytes == Int64.max ? "more than \(limitText)" : "\(MediaError.megabytes(bytes)), over \(limitText)"
            return "has \(channels) ch at \(rate) Hz, \(length): as a cue at \(format) it would take \(size); "
                + "shorten it, or raise CueLimits.maximumBytes"
        case .unsupportedEncoding(let detail):
            return "uses an encoding libsndfile cannot handle (\(detail)); convert it, e.g. `sox \(subject) out.wav`"
        case .ffmpegMissing(let reason):
            return "libsndfile cannot read it and \(reason)"
        case .unsupportedOutput(let detail):
            return "cannot be written in this format (\(detail)); choose another encoding or sample rate"
        case .unsupportedSampleRate(let rate, let accepted):
            return "has a sample rate of \(rate) Hz, outside the \(accepted.lowerBound) to \(accepted.upperBound) Hz sfx plays; "
                + "resample it, e.g. `sox \(subject) -r 48000 out.wav`"
        case .invalidBuffer(let detail):
            return "cannot become a cue: \(detail)"
        case .silent:
            return "is silent (nothing above −70 LUFS), so it cannot be normalised to a loudness; load it without normalising, or give it sound"
        case .directoryMissing(let directory):
            return "cannot be written: directory \(directory) does not exist; create it first (mkdir -p \(directory))"
        case .notWritable:
            return "cannot be written: permission denied; choose a writable directory or fix its permissions (chmod)"
        case .diskFull:
            return "cannot be written: no space left on the device; free some space and try again"
        case .soundsDirectoryNotFound(let searched):
            return "no bundled Sounds directory found (searched \(searched.joined(separator: ", "))); "
                + "set SFX_SOUNDS_DIR to the directory that holds sfx's sounds"
        case .failed(let detail):
            return detail
        }
    }

    /// `value` and `limit` as text, rounded so that they differ when they do: the limit as short
    /// as it is ("30"), the value with as many decimals as that takes, from one to six ("30.02"
    /// over "30", never "30.0" over "30.0").
    public static func distinct(_ value: Double, _ limit: Double) -> (value: String, limit: String) {
        var limitText = String(cFormat: "%.6f", limit)
        while limitText.hasSuffix("0") { limitText.removeLast() }
        if limitText.hasSuffix(".") { limitText.removeLast() }
        for decimals in 1...6 {
            let text = String(cFormat: "%.\(decimals)f", value)
            if value == limit || Double(text) != Double(String(cFormat: "%.\(decimals)f", limit)) { return (text, limitText) }
        }
        return (String(cFormat: "%.6f", value), limitText)
    }

    /// "12.3 MB" (decimal megabytes).
    static func megabytes(_ bytes: Int64) -> String { String(cFormat: "%.1f MB", Double(bytes) / 1_000_000) }

    /// The error for a path whose `stat` mode is not a regular file, or nil when it is one.
    static func notRegular(mode: mode_t, path: String, directoryIsSound: Bool = true) -> MediaError? {
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: return MediaError(directoryIsSound ? .isDirectory : .notRegularFile(kind: "a directory"), subject: path)
        case S_IFIFO: return MediaError(.notRegularFile(kind: "a FIFO"), subject: path)
        case S_IFCHR: return MediaError(.notRegularFile(kind: "a character device"), subject: path)
        case S_IFBLK: return MediaError(.notRegularFile(kind: "a block device"), subject: path)
        case S_IFSOCK: return MediaError(.notRegularFile(kind: "a socket"), subject: path)
        default: return MediaError(.notRegularFile(kind: "an unknown kind of file"), subject: path)
        }
    }

    /// The error for a failed system call on `path`, classified by `errno`.
    static func fromErrno(_ code: Int32, path: String, writing: Bool) -> MediaError {
        switch code {
        case ENOENT where writing, ENOTDIR where writing:
            return MediaError(.directoryMissing(directory: path.directoryPart), subject: path)
        case ENOENT, ENOTDIR:
            return MediaError(.missingFile, subject: path)
        case EACCES where writing, EPERM where writing, EROFS:
            return MediaError(.notWritable, subject: path)
        case EACCES, EPERM:
            return MediaError(.unreadable(ownership: ownership(of: path)), subject: path)
        case EISDIR:
            return MediaError(.isDirectory, subject: path)
        case ENOSPC, EDQUOT:
            return MediaError(.diskFull, subject: path)
        default:
            return MediaError(.failed(detail: String(cString: strerror(code))), subject: path)
        }
    }

    /// "owner root, group audio, mode 0640" for the file at `path`, or "" when it cannot be stat'ed.
    private static func ownership(of path: String) -> String {
        var st = stat()
        guard stat(path, &st) == 0 else { return "cannot stat" }
        let owner = getpwuid(st.st_uid).map { String(cString: $0.pointee.pw_name) } ?? String(st.st_uid)
        let group = getgrgid(st.st_gid).map { String(cString: $0.pointee.gr_name) } ?? String(st.st_gid)
        return "owner \(owner), group \(group), mode \(String(st.st_mode & 0o7777, radix: 8))"
    }
}
