import CSndFile
import FoundationEssentials
import Glibc

/// A recording written by libsndfile: WAV (16-bit PCM), FLAC (16-bit), Ogg Opus, Ogg Vorbis, MP3.
///
/// Crash safety: WAV's header is rewritten at each `checkpoint()` (SFC_UPDATE_HEADER_NOW: the
/// RIFF and data lengths from the file's size), so a killed process leaves a WAV whose header
/// covers every frame written before the last checkpoint; MP3's first frame gets the count of
/// the frames on disk at each checkpoint (`MP3InfoFrame`); FLAC and Ogg are streams that readers
/// take up to their last complete frame or page.
///
/// Every byte goes out through a `DescriptorSink` (libsndfile's virtual I/O), so a failed write
/// is seen whether or not libsndfile reports it: its MP3 encoder, for one, ignores the result
/// of its writes, and a full disk went by unnoticed. After a failure, `finish()` lets libsndfile
/// close the file without appending to it, and keeps what fitted.
final class SoundFileEncoder: RecordingEncoder {
    let encoding: RecordingEncoding
    private(set) var framesWritten: Int64 = 0
    private let path: String
    private var handle: OpaquePointer?
    private let sink: DescriptorSink
    private let mp3: MP3InfoFrame?
    /// The first failure: nothing more is encoded after it.
    private var failure: MediaError?

    init(descriptor fd: Int32, path: String, encoding: RecordingEncoding) throws {
        self.encoding = encoding
        self.path = path
        sink = DescriptorSink(fd)
        mp3 = encoding.format == .mp3 ? MP3InfoFrame(descriptor: fd) : nil
        var info = SF_INFO()
        info.samplerate = Int32(encoding.sampleRate)
        info.channels = Int32(encoding.channels)
        info.format = Int32(Self.sndfileFormat(encoding.format))
        guard sf_format_check(&info) == SF_TRUE else {
            sink.close()
            let rates = encoding.format == .opus ? " (Opus takes 8000, 12000, 16000, 24000 or 48000 Hz)" : ""
            throw MediaError(.unsupportedOutput(detail: "\(encoding.format.rawValue) cannot hold \(encoding.channels) channels at \(encoding.sampleRate) Hz\(rates)"), subject: path)
        }
        var io = DescriptorSink.virtualIO
        guard let handle = sf_open_virtual(&io, Int32(SFM_WRITE), &info, Unmanaged.passUnretained(sink).toOpaque()) else {
            let code = sink.failure != 0 ? sink.failure : errno
            let message = String(cString: sf_strerror(nil))
            sink.close()
            if sink.failure != 0 || sf_error(nil) == Int32(SF_ERR_SYSTEM) { throw RecordingFile.writeError(code, detail: message, path: path) }
            throw MediaError(.unsupportedOutput(detail: message), subject: path)
        }
        self.handle = handle
        sf_command(handle, Int32(SFC_SET_ADD_PEAK_CHUNK), nil, Int32(SF_FALSE))
        // 16-bit PCM: the clipping conversion scales by 2^15 (the plain one by 2^15 - 1), so
        // k / 32768 is written as k and reads back exactly; +1.0 becomes 32767 instead of wrapping.
        if encoding.format == .wav || encoding.format == .flac {
            sf_command(handle, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        }
        if let quality = encoding.quality.map({ min(max($0, 0), 1) }) {
            // libsndfile's compression level: for the lossy codecs 0 is the best quality (the
            // largest file); for FLAC it is the effort (1 the smallest file, same samples).
            var level = encoding.format == .flac ? quality : 1 - quality
            sf_command(handle, Int32(SFC_SET_COMPRESSION_LEVEL), &level, Int32(MemoryLayout<Double>.size))
        }
        if encoding.format == .wav {
            // The header already on disk says "0 frames"; make it right as soon as frames come.
            sf_command(handle, Int32(SFC_SET_UPDATE_HEADER_AUTO), nil, Int32(SF_FALSE))
        }
    }

    deinit { abandon() }

    static func sndfileFormat(_ format: RecordingFormat) -> Int {
        switch format {
        case .wav: SF_FORMAT_WAV | SF_FORMAT_PCM_16
        case .flac: SF_FORMAT_FLAC | SF_FORMAT_PCM_16
        case .opus: SF_FORMAT_OGG | SF_FORMAT_OPUS
        case .vorbis: SF_FORMAT_OGG | SF_FORMAT_VORBIS
        case .mp3: SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III
        case .m4a: 0
        }
    }

    func append(_ samples: UnsafeBufferPointer<Float>) throws {
        guard let handle else { throw MediaError(.failed(detail: "the recording is already closed"), subject: path) }
        if let failure { throw failure }
        let frames = sf_count_t(samples.count / encoding.channels)
        guard let base = samples.baseAddress, frames > 0 else { return }
        errno = 0
        let written = sf_writef_float(handle, base, frames)
        framesWritten += Int64(max(written, 0))
        if let error = sink.error(path: path) ?? (written != frames
            ? RecordingFile.writeError(errno, detail: String(cString: sf_strerror(handle)), path: path) : nil) {
            failure = error
            throw error
        }
    }

    func checkpoint() throws {
        guard let handle else { return }
        if let failure { throw failure }
        if encoding.format == .wav { sf_command(handle, Int32(SFC_UPDATE_HEADER_NOW), nil, 0) }
        if let error = sink.error(path: path) {
            failure = error
            throw error
        }
        mp3?.update()
    }

    /// Completes the file. After a failed write (earlier, or in libsndfile's last flush) the
    /// file keeps what fitted: libsndfile's rewrites in place (WAV's lengths, FLAC's STREAMINFO)
    /// go through, nothing is appended, and an MP3's first frame counts the frames on disk.
    func finish() throws {
        guard let handle else { return }
        self.handle = nil
        defer { sink.close() }
        let reported = failure != nil
        errno = 0
        let closed = sf_close(handle)
        let code = errno
        if failure == nil, let error = sink.error(path: path) { failure = error }
        if let failure {
            if let mp3, mp3.update(replacingTag: true), let end = mp3.completeLength { _ = sink.truncate(to: end) }
            if encoding.format == .opus || encoding.format == .vorbis, let length = Self.completeOggPages(sink.fd) {
                _ = sink.truncate(to: length)
            }
            _ = fsync(sink.fd)
            if !reported { throw failure }
            return
        }
        if closed != 0 { throw RecordingFile.writeError(code, detail: "libsndfile could not complete the file", path: path) }
        guard fsync(sink.fd) == 0 || errno == EINVAL else { throw RecordingFile.writeError(errno, detail: "fsync", path: path) }
    }

    /// The length of the file's complete Ogg pages from the start: a page cut short by the
    /// failed write would hide the length (libsndfile reads it from the last page's granule
    /// position and gives up on a torn page). Nil when the file does not begin with a page.
    static func completeOggPages(_ fd: Int32) -> Int64? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        let size = Int64(st.st_size)
        var offset: Int64 = 0
        var header = [UInt8](repeating: 0, count: 27 + 255)
        while offset + 27 <= size {
            guard pread(fd, &header, header.count, off_t(offset)) >= 27, header[0..<4].elementsEqual("OggS".utf8) else { break }
            let segments = Int(header[26])
            guard offset + 27 + Int64(segments) <= size else { break }
            let body = header[27..<27 + segments].reduce(0) { $0 + Int($1) }
            let end = offset + 27 + Int64(segments) + Int64(body)
            guard end <= size else { break }
            offset = end
        }
        return offset > 0 ? offset : nil
    }

    func abandon() {
        if let handle { sf_close(handle) }
        handle = nil
        sink.close()
    }
}
