import CSndFile
import FoundationEssentials
import Glibc

/// The file formats `AudioFileWriter` writes.
public enum AudioFileEncoding: String, Sendable, Codable, CaseIterable {
    /// WAV, 32-bit float: every sample kept exactly, above 1 too. libsndfile writes its fmt chunk
    /// without the extension size, so sox warns ("wave header missing extended part of fmt
    /// chunk") as it does for WAVE_FORMAT_EXTENSIBLE: for files people open, `wavPCM32`.
    case wavFloat32
    /// WAV, 32-bit integer PCM: a float sample in -1…1 comes back within 2^-31 (-186 dBFS) of
    /// itself, exactly from 2^-8 up, and every reader (sox, aplay) takes it without a warning.
    case wavPCM32
    /// WAV, 16-bit PCM.
    case wavPCM16
    /// WAV, 24-bit PCM.
    case wavPCM24
    /// FLAC, 16-bit: lossless and compressed.
    case flac16
    /// FLAC, 24-bit.
    case flac24
    /// AIFF, 16-bit PCM.
    case aiffPCM16
    /// CAF, 32-bit float.
    case cafFloat32
    /// Ogg Vorbis (lossy).
    case oggVorbis
    /// Ogg Opus (lossy; 8, 12, 16, 24 or 48 kHz only).
    case oggOpus
    /// MP3 (lossy; libsndfile 1.2 with LAME).
    case mp3

    var sndfileFormat: Int32 {
        let format: Int
        switch self {
        case .wavFloat32: format = SF_FORMAT_WAV | SF_FORMAT_FLOAT
        case .wavPCM32: format = SF_FORMAT_WAV | SF_FORMAT_PCM_32
        case .wavPCM16: format = SF_FORMAT_WAV | SF_FORMAT_PCM_16
        case .wavPCM24: format = SF_FORMAT_WAV | SF_FORMAT_PCM_24
        case .flac16: format = SF_FORMAT_FLAC | SF_FORMAT_PCM_16
        case .flac24: format = SF_FORMAT_FLAC | SF_FORMAT_PCM_24
        case .aiffPCM16: format = SF_FORMAT_AIFF | SF_FORMAT_PCM_16
        case .cafFloat32: format = SF_FORMAT_CAF | SF_FORMAT_FLOAT
        case .oggVorbis: format = SF_FORMAT_OGG | SF_FORMAT_VORBIS
        case .oggOpus: format = SF_FORMAT_OGG | SF_FORMAT_OPUS
        case .mp3: format = SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III
        }
        return Int32(format)
    }
}

/// Writes interleaved float frames to a sound file with libsndfile: all at once with
/// `write(_:sampleRate:channels:to:as:)`, or in pieces (a recorder's writer thread) with
/// `append(_:)` and `close()`.
///
/// ```swift
/// try AudioFileWriter.write(samples, sampleRate: 48_000, channels: 2,
///                           to: URL(filePath: "take.flac"), as: .flac24)
/// ```
///
/// WAV, AIFF, CAF and FLAC output is deterministic: the same samples give the same bytes (the
/// PEAK chunk, which would carry a timestamp, is turned off). Ogg and MP3 streams carry random
/// serial numbers or encoder state and differ from run to run. Samples outside -1…1 are clipped
/// for integer encodings. Failures throw `MediaError`: directory missing, permission denied,
/// disk full, or an encoding the format cannot take (such as Opus at 44.1 kHz).
public final class AudioFileWriter {
    public let path: String
    public let channels: Int
    private var handle: OpaquePointer?
    /// Every byte goes through it (libsndfile's virtual I/O), so a failed write is seen even
    /// where libsndfile does not look (its MP3 encoder's writes, the last flush at close).
    private let sink: DescriptorSink

    /// Creates (or replaces) the file at `url`.
    public init(url: URL, encoding: AudioFileEncoding, sampleRate: Int, channels: Int) throws {
        path = url.path
        self.channels = channels
        guard SoundFile.sampleRates.contains(sampleRate), (1...SoundFile.maximumChannels).contains(channels) else {
            throw MediaError(.unsupportedOutput(detail: "\(sampleRate) Hz, \(channels) channels"), subject: url.path)
        }
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channels)
        info.format = encoding.sndfileFormat
        guard sf_format_check(&info) == SF_TRUE else {
            throw MediaError(.unsupportedOutput(detail: "\(encoding.rawValue) cannot hold \(channels) channels at \(sampleRate) Hz"), subject: url.path)
        }
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw MediaError.fromErrno(errno, path: url.path, writing: true) }
        sink = DescriptorSink(descriptor)
        var io = DescriptorSink.virtualIO
        // A pipe or FIFO (no seeking) stays libsndfile's own, which writes headers for pipes; it
        // gets a duplicate, which it closes even when opening fails.
        let seekable = lseek(descriptor, 0, SEEK_CUR) >= 0
        let opened = seekable ? sf_open_virtual(&io, Int32(SFM_WRITE), &info, Unmanaged.passUnretained(sink).toOpaque())
                              : sf_open_fd(dup(descriptor), Int32(SFM_WRITE), &info, Int32(SF_TRUE))
        guard let handle = opened else {
            let code = sink.failure != 0 ? sink.failure : errno
            let message = String(cString: sf_strerror(nil))
            let failed = sink.failure != 0
            sink.close()
            if failed || sf_error(nil) == Int32(SF_ERR_SYSTEM) {
                throw AudioFileWriter.writeError(errno: code, message: message, path: url.path)
            }
            throw MediaError(.unsupportedOutput(detail: message), subject: url.path)
        }
        sf_command(handle, Int32(SFC_SET_ADD_PEAK_CHUNK), nil, Int32(SF_FALSE))
        // 32-bit integers: libsndfile's plain conversion wraps full scale (+1 becomes -1); its
        // clipping one scales by 2^31 and stops at the largest integer. (16 and 24 bits keep the
        // plain conversion, whose scale their files have always had.)
        if encoding == .wavPCM32 { sf_command(handle, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE)) }
        self.handle = handle
    }

    deinit {
        if let handle { sf_close(handle) }
        sink.close()
    }

    /// Appends whole interleaved frames.
    public func append(_ samples: UnsafeBufferPointer<Float>) throws {
        guard let handle else { throw MediaError(.failed(detail: "already closed"), subject: path) }
        guard samples.count % channels == 0 else {
            throw MediaError(.invalidBuffer(detail: "\(samples.count) samples is not a whole number of \(channels)-channel frames"), subject: path)
        }
        let frames = sf_count_t(samples.count / channels)
        guard let base = samples.baseAddress, frames > 0 else { return }
        errno = 0
        let written = sf_writef_float(handle, base, frames)
        if sink.failure != 0 {
            throw AudioFileWriter.writeError(errno: sink.failure, message: String(cString: strerror(sink.failure)), path: path)
        }
        if written != frames {
            throw AudioFileWriter.writeError(errno: errno, message: String(cString: sf_strerror(handle)), path: path)
        }
    }

    /// Finishes the header and closes the file. Safe to call once; the writer is done after it.
    public func close() throws {
        guard let handle else { return }
        self.handle = nil
        errno = 0
        let closed = sf_close(handle)
        let code = errno
        defer { sink.close() }
        if sink.failure != 0 {
            throw AudioFileWriter.writeError(errno: sink.failure, message: String(cString: strerror(sink.failure)), path: path)
        }
        if closed != 0 {
            throw AudioFileWriter.writeError(errno: code, message: "libsndfile could not finish the file", path: path)
        }
    }

    /// Writes `samples` (interleaved, `channels` per frame) to a new file at `url`.
    public static func write(_ samples: [Float], sampleRate: Int, channels: Int, to url: URL, as encoding: AudioFileEncoding) throws {
        let writer = try AudioFileWriter(url: url, encoding: encoding, sampleRate: sampleRate, channels: channels)
        try samples.withUnsafeBufferPointer { try writer.append($0) }
        try writer.close()
    }

    private static func writeError(errno code: Int32, message: String, path: String) -> MediaError {
        switch code {
        case ENOSPC, EDQUOT, EACCES, EPERM, EROFS: return MediaError.fromErrno(code, path: path, writing: true)
        default: return MediaError(.failed(detail: "cannot be written: \(message)"), subject: path)
        }
    }
}
