import CSndFile
import Foundation

/// A recording written by libsndfile: WAV (16-bit PCM), FLAC (16-bit), Ogg Opus, Ogg Vorbis, MP3.
///
/// Crash safety: WAV's header is rewritten at each `checkpoint()` (SFC_UPDATE_HEADER_NOW: the
/// RIFF and data lengths from the file's size), so a killed process leaves a WAV whose header
/// covers every frame written before the last checkpoint; FLAC, Ogg and MP3 are streams that
/// readers take up to their last complete frame or page.
final class SoundFileEncoder: RecordingEncoder {
    let encoding: RecordingEncoding
    private(set) var framesWritten: Int64 = 0
    private let path: String
    private var handle: OpaquePointer?

    init(descriptor fd: Int32, path: String, encoding: RecordingEncoding) throws {
        self.encoding = encoding
        self.path = path
        var info = SF_INFO()
        info.samplerate = Int32(encoding.sampleRate)
        info.channels = Int32(encoding.channels)
        info.format = Int32(Self.sndfileFormat(encoding.format))
        guard sf_format_check(&info) == SF_TRUE else {
            Glibc.close(fd)
            let rates = encoding.format == .opus ? " (Opus takes 8000, 12000, 16000, 24000 or 48000 Hz)" : ""
            throw MediaError(.unsupportedOutput(detail: "\(encoding.format.rawValue) cannot hold \(encoding.channels) channels at \(encoding.sampleRate) Hz\(rates)"), subject: path)
        }
        // libsndfile owns the descriptor from here, and closes it even when opening fails.
        guard let handle = sf_open_fd(fd, Int32(SFM_WRITE), &info, Int32(SF_TRUE)) else {
            let code = errno
            let message = String(cString: sf_strerror(nil))
            if sf_error(nil) == Int32(SF_ERR_SYSTEM) { throw RecordingFile.writeError(code, detail: message, path: path) }
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
        let frames = sf_count_t(samples.count / encoding.channels)
        guard let base = samples.baseAddress, frames > 0 else { return }
        errno = 0
        let written = sf_writef_float(handle, base, frames)
        framesWritten += Int64(max(written, 0))
        if written != frames {
            throw RecordingFile.writeError(errno, detail: String(cString: sf_strerror(handle)), path: path)
        }
    }

    func checkpoint() throws {
        guard let handle, encoding.format == .wav else { return }
        sf_command(handle, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
    }

    func finish() throws {
        guard let handle else { return }
        self.handle = nil
        errno = 0
        if sf_close(handle) != 0 {
            throw RecordingFile.writeError(errno, detail: "libsndfile could not complete the file", path: path)
        }
    }

    func abandon() {
        if let handle { sf_close(handle) }
        handle = nil
    }
}
