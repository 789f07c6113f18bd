import FoundationEssentials
import SFXSystem
import Glibc

/// The formats a recording is written in: WAV, FLAC, Ogg Opus, Ogg Vorbis and MP3 through
/// libsndfile, M4A (AAC in MPEG-4) through FFmpeg's libavformat and libavcodec.
public enum RecordingFormat: String, Sendable, Codable, CaseIterable {
    /// WAV, 16-bit PCM: its header is rewritten with the length so far as the file grows.
    case wav
    /// FLAC, 16-bit, lossless: a stream of frames, readable up to the last complete one.
    case flac
    /// Ogg Opus (48 kHz inside; 8, 12, 16, 24 or 48 kHz input): pages, readable up to the last one.
    case opus
    /// Ogg Vorbis: pages, readable up to the last one.
    case vorbis
    /// MP3 (LAME through libsndfile): frames, its first one counting them at every checkpoint.
    case mp3
    /// M4A: AAC-LC in MPEG-4, fragmented while it is written (a fragment every half second,
    /// readable up to the last one), a standard file once finished (`RecordingContainer`).
    case m4a

    /// The file name extension ("wav", "opus", "m4a").
    public var fileExtension: String {
        switch self {
        case .vorbis: "ogg"
        default: rawValue
        }
    }

    /// The MIME type of the content.
    public var mimeType: String {
        switch self {
        case .wav: "audio/wav"
        case .flac: "audio/flac"
        case .opus, .vorbis: "audio/ogg"
        case .mp3: "audio/mpeg"
        case .m4a: "audio/mp4"
        }
    }

    /// Whether the codec loses information (Opus, Vorbis, MP3, AAC).
    public var isLossy: Bool { ![.wav, .flac].contains(self) }

    /// The format a file name's extension names (.wav, .flac, .opus, .ogg/.oga, .mp3, .m4a/.mp4/.aac), or nil.
    public init?(fileName: String) {
        switch fileName.fileExtension.lowercased() {
        case "wav": self = .wav
        case "flac": self = .flac
        case "opus": self = .opus
        case "ogg", "oga": self = .vorbis
        case "mp3": self = .mp3
        case "m4a", "mp4", "aac": self = .m4a
        default: return nil
        }
    }

    /// "m4a|opus|mp3|flac|wav|vorbis", for help and errors.
    public static let names = "m4a|opus|mp3|flac|wav|vorbis"
}

/// How a finished M4A is laid out. While it is written an M4A is always fragmented MPEG-4 (an
/// empty `moov`, then a `moof` + `mdat` fragment every half second), so that a crash leaves a
/// readable file; this is what it becomes at the end.
public enum RecordingContainer: String, Sendable, Codable, CaseIterable {
    /// A standard MPEG-4 file, rewritten from the fragments when the recording ends (the packets
    /// copied, not re-encoded): one `moov` with the durations and sample tables, before the
    /// `mdat`, no fragments, the encoder's priming hidden by an edit list. What phones, players,
    /// servers and tag readers that take the length from the `moov` (or need it to seek) read.
    case standard
    /// The fragmented file as written: `mvhd` duration 0, no `mehd` or `sidx`, a `moof` + `mdat`
    /// pair every half second; for those who stream the fragments as they come.
    case fragmented
}

/// How a recording is encoded: format, rate, channels and, for the lossy codecs, quality.
public struct RecordingEncoding: Sendable, Hashable {
    public var format: RecordingFormat
    public var sampleRate: Int
    public var channels: Int
    /// Bits per second for M4A (AAC), 16000 … 512000; nil: 64 kb/s a channel. (The libsndfile
    /// codecs take `quality` instead.)
    public var bitRate: Int?
    /// 0 (smallest) … 1 (best) for Opus, Vorbis and MP3 (libsndfile's SFC_SET_COMPRESSION_LEVEL,
    /// inverted) and FLAC's compression effort; nil leaves the codec's default.
    public var quality: Double?
    /// What a finished M4A becomes (the other formats have one layout).
    public var container: RecordingContainer

    public init(format: RecordingFormat, sampleRate: Int = 48_000, channels: Int = 2, bitRate: Int? = nil, quality: Double? = nil,
                container: RecordingContainer = .standard) {
        self.format = format
        self.sampleRate = sampleRate
        self.channels = channels
        self.bitRate = bitRate
        self.quality = quality
        self.container = container
    }
}

/// Writes a recording as it is captured: frames in, a file that is valid after every
/// `checkpoint()` (so a crash or SIGKILL loses at most what came after the last one), and a
/// complete file after `finish()`. Made by `RecordingFile.create`.
public protocol RecordingEncoder: AnyObject {
    var encoding: RecordingEncoding { get }
    /// Frames given to `append` so far.
    var framesWritten: Int64 { get }
    /// Encodes whole interleaved frames. Throws `MediaError` (`.diskFull` when the disk or the
    /// file-size limit is reached: what was written before stays readable after `finish()`).
    func append(_ samples: UnsafeBufferPointer<Float>) throws
    /// Makes what was written so far readable from the file on disk (WAV: the header's lengths
    /// rewritten; MP3: the frames on disk counted in its first frame; M4A: complete fragments
    /// pushed out).
    func checkpoint() throws
    /// Completes the file and closes it (M4A with `RecordingContainer.standard`: then rewrites
    /// it as a standard MPEG-4 file, atomically; when that fails, the fragmented file is kept,
    /// complete, and the failure thrown). The encoder is done after it. After a failed write
    /// (thrown by `append` or `checkpoint`) nothing more is encoded: the file keeps what fitted,
    /// cut after its last complete page, frame or fragment, and is readable to its end; only a
    /// failure not thrown before is thrown here.
    func finish() throws
    /// Closes the file without completing it (it is about to be deleted).
    func abandon()
}

/// Creating recording files: never over an existing file, never through a symbolic link,
/// readable by the user alone.
public enum RecordingFile {
    /// Creates `url` (O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600) and an encoder writing to it.
    /// Throws `MediaError` naming the file: it exists already (`.failed`), a missing directory,
    /// permission, or an encoding the format cannot take.
    public static func create(_ url: URL, encoding: RecordingEncoding) throws -> any RecordingEncoder {
        guard (8_000...192_000).contains(encoding.sampleRate), (1...8).contains(encoding.channels) else {
            throw MediaError(.unsupportedOutput(detail: "\(encoding.sampleRate) Hz, \(encoding.channels) channels"), subject: url.path)
        }
        let fd = try createExclusive(url)
        do {
            switch encoding.format {
            case .m4a: return try MPEG4AudioEncoder(descriptor: fd, path: url.path, encoding: encoding)
            default: return try SoundFileEncoder(descriptor: fd, path: url.path, encoding: encoding)
            }
        } catch {
            // Nothing useful was written: the file goes.
            unlink(url.path)
            throw error
        }
    }

    /// Opens a new file for writing, failing when anything (a file, a link) is at `url`.
    static func createExclusive(_ url: URL) throws -> Int32 {
        let fd = open(url.path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            if code == EEXIST {
                throw MediaError(.failed(detail: "already exists; recordings never overwrite a file: choose another name or remove it"), subject: url.path)
            }
            throw MediaError.fromErrno(code, path: url.path, writing: true)
        }
        return fd
    }

    /// The error for a failed write: disk full and file-size limit (EFBIG) as `.diskFull`.
    static func writeError(_ code: Int32, detail: String, path: String) -> MediaError {
        switch code {
        case ENOSPC, EDQUOT, EFBIG: return MediaError(.diskFull, subject: path)
        case EACCES, EPERM, EROFS: return MediaError.fromErrno(code, path: path, writing: true)
        default: return MediaError(.failed(detail: "cannot be written: \(detail)"), subject: path)
        }
    }
}
