import CSndFile
import FoundationEssentials
import SFXSystem
import Glibc

/// An open libsndfile reader with its header checked: the one place SFXMedia opens sound files.
///
/// Opening classifies every failure into a `MediaError` (missing, directory, permissions, empty,
/// not audio, malformed, unsupported encoding) and rejects header values no real sound has.
/// The descriptor is opened here (not by libsndfile) so that `errno` tells why an open failed.
final class SoundFile {
    /// Highest sample rate accepted: 768 kHz, the top of what converters ship.
    static let maximumSampleRate = 768_000
    /// Lowest sample rate accepted: 1 kHz, below anything a sound file plausibly holds (telephony
    /// starts at 8 kHz). A lower rate is refused rather than resampled: the conversion's cost grows
    /// with the ratio of the rates, and a 20-frame file at 1 Hz would become 20 s of cue.
    static let minimumSampleRate = 1_000
    /// The sample rates sfx decodes, writes and converts.
    public static let sampleRates = minimumSampleRate...maximumSampleRate
    /// Most channels accepted (libsndfile itself allows 1024).
    static let maximumChannels = 64
    /// Frame counts at or above this (about 2.5 years at 768 kHz) are header damage.
    static let absurdFrameCount: Int64 = 1 << 45

    let path: String
    let info: SF_INFO
    private let handle: OpaquePointer
    private let descriptor: Int32

    /// Opens `file`. Only non-empty regular files are opened (`RawFilePath.openRegularFile`), so
    /// nothing that is not a regular file is ever read.
    convenience init(path: String) throws {
        try self.init(file: RawFilePath(path))
    }

    /// With `raw`, the file is headerless PCM of that layout (libsndfile's SF_FORMAT_RAW).
    init(file: RawFilePath, raw: RawPCMFormat? = nil) throws {
        let path = file.description
        self.path = path
        let fd = try RawFilePath.openRegularFile(file).descriptor
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        var info = SF_INFO()
        if let raw {
            info.format = raw.sample.libsndfileFormat
            info.samplerate = Int32(raw.sampleRate)
            info.channels = Int32(raw.channels)
        }
        // libsndfile gets its own duplicate, which it closes even when opening fails.
        guard let handle = sf_open_fd(dup(fd), Int32(SFM_READ), &info, Int32(SF_TRUE)) else {
            let code = sf_error(nil)
            let message = String(cString: sf_strerror(nil))
            let sniffed = SoundFile.sniff(fd)
            close(fd)
            throw SoundFile.openError(code: code, message: message, sniffed: sniffed, path: path)
        }
        self.handle = handle
        self.descriptor = fd
        self.info = info
        do {
            try checkHeader()
        } catch {
            sf_close(handle)
            close(fd)
            throw error
        }
    }

    deinit {
        sf_close(handle)
        close(descriptor)
    }

    var sampleRate: Int { Int(info.samplerate) }
    var channels: Int { Int(info.channels) }
    /// The frame count the header gives, or nil when the length is unknown (a stream).
    var frames: Int64? { info.frames == Int64.max ? nil : Int64(info.frames) }
    var majorFormat: Int32 { info.format & Int32(SF_FORMAT_TYPEMASK) }
    var subtype: Int32 { info.format & Int32(SF_FORMAT_SUBMASK) }

    /// libsndfile's channel map, when the file carries one.
    var channelMap: [ChannelPosition]? {
        var raw = [Int32](repeating: 0, count: Int(info.channels))
        let size = Int32(raw.count * MemoryLayout<Int32>.size)
        guard sf_command(handle, Int32(SFC_GET_CHANNEL_MAP_INFO), &raw, size) == SF_TRUE else { return nil }
        return raw.map { ChannelPosition(rawValue: Int($0)) ?? .invalid }
    }

    /// The first `count` bytes of the file (fewer if it is shorter).
    func leadingBytes(_ count: Int) -> [UInt8] { SoundFile.leadingBytes(of: descriptor, count) }

    private static func leadingBytes(of fd: Int32, _ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = pread(fd, &bytes, count, 0)
        return Array(bytes.prefix(max(got, 0)))
    }

    /// Reads up to `frames` interleaved frames into `buffer` (room for `frames × channels`
    /// samples) and returns how many it read: 0 at the end of the audio or on a decoding error
    /// (`finishReading` tells which).
    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        max(0, Int(sf_readf_float(handle, buffer, sf_count_t(frames))))
    }

    /// Moves the next `read` to `frame` (exact: libsndfile seeks to the sample).
    func seek(toFrame frame: Int64) throws {
        guard sf_seek(handle, sf_count_t(frame), SEEK_SET) == frame else {
            throw MediaError(.failed(detail: "cannot seek to frame \(frame): \(String(cString: sf_strerror(handle)))"), subject: path)
        }
    }

    /// After the last `read` (at the end of the audio): checks that the file held what its
    /// header promised and that libsndfile met no error.
    func finishReading(framesRead: Int) throws {
        let promised = max(Int64(info.frames), headerPromisedFrames ?? 0)
        if Int64(framesRead) < promised, self.frames != nil {
            throw MediaError(.truncated(promisedFrames: promised, foundFrames: Int64(framesRead)), subject: path)
        }
        if sf_error(handle) != Int32(SF_ERR_NO_ERROR) {
            throw MediaError(.corrupt(detail: String(cString: sf_strerror(handle))), subject: path)
        }
    }

    /// For uncompressed containers libsndfile shortens a data chunk that runs past the end of the
    /// file and only says so in its log ("data : 176400 (should be 49920)"). This reads the log
    /// and returns the frame count the header promised, when a size line promised more than the
    /// file holds.
    ///
    /// A size that is a placeholder promises nothing: a WAV written to a pipe cannot go back to
    /// fill in its length, so its writer puts the largest size there instead (sox 0x7FFFF000,
    /// arecord 0x7FFFFFFF, FFmpeg 0xFFFFFFFF), and the audio runs to the end of the file, as
    /// aplay and sox read it.
    private var headerPromisedFrames: Int64? {
        let log = SoundFile.log(of: handle)
        // Nearly every log lacks the words: checked as bytes, so that the parse below (Foundation's
        // trimming and searching, about 0.1 ms the first time) is paid for only then.
        guard log.utf8.firstRange(of: "(should be ".utf8) != nil else { return nil }
        let sizeLines = ["data", "SSND", "Data Size"]
        for line in log.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmed }
            guard parts.count == 2, sizeLines.contains(parts[0]), let open = parts[1].firstRange(of: "(should be ") else { continue }
            guard let declared = Int64(parts[1][..<open.lowerBound].trimmed),
                  let actual = Int64(parts[1][open.upperBound...].prefix { $0.isNumber }),
                  declared > actual, actual > 0 else { continue }
            if SoundFile.isPlaceholderLength(declared) { return nil }
            return Int64((Double(declared) * Double(info.frames) / Double(actual)).rounded())
        }
        return nil
    }

    /// Whether a chunk size of `bytes` is what writers put in a header they cannot go back to
    /// (within 64 KiB below 2^31 or 2^32: the largest size, rounded down to a whole frame).
    static func isPlaceholderLength(_ bytes: Int64) -> Bool {
        (0x7FFF_0000...0x8000_0000).contains(bytes) || (0xFFFF_0000...0xFFFF_FFFF).contains(bytes)
    }

    /// libsndfile's parse log for `handle`, or for the last failed open when `handle` is nil.
    private static func log(of handle: OpaquePointer?) -> String {
        var log = [CChar](repeating: 0, count: 16_384)
        sf_command(handle, Int32(SFC_GET_LOG_INFO), &log, Int32(log.count))
        return String(decoding: log.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func checkHeader() throws {
        func absurd(_ detail: String) -> MediaError { MediaError(.absurdHeader(detail: detail), subject: path) }
        guard info.samplerate > 0, info.samplerate <= SoundFile.maximumSampleRate else {
            throw absurd("sample rate \(info.samplerate) Hz, expected 1 to \(SoundFile.maximumSampleRate)")
        }
        guard SoundFile.sampleRates.contains(Int(info.samplerate)) else {
            throw MediaError(.unsupportedSampleRate(Int(info.samplerate), accepted: SoundFile.sampleRates), subject: path)
        }
        guard info.channels > 0, info.channels <= SoundFile.maximumChannels else {
            throw absurd("\(info.channels) channels, expected 1 to \(SoundFile.maximumChannels)")
        }
        guard info.frames >= 0, info.frames < SoundFile.absurdFrameCount || frames == nil else {
            throw absurd("\(info.frames) frames")
        }
    }

    private static func openError(code: Int32, message: String, sniffed: String, path: String) -> MediaError {
        // A known container with an unknown codec is logged as "Format : 0x1234 => Unknown format"
        // but reported as a malformed chunk.
        if let line = log(of: nil).split(separator: "\n").first(where: { $0.contains("=> Unknown format") }) {
            return MediaError(.unsupportedEncoding(detail: line.split(whereSeparator: \.isWhitespace).joined(separator: " ")), subject: path)
        }
        switch code {
        case Int32(SF_ERR_UNRECOGNISED_FORMAT):
            return MediaError(.notAudio(looksLike: sniffed), subject: path)
        case Int32(SF_ERR_UNSUPPORTED_ENCODING):
            return MediaError(.unsupportedEncoding(detail: message), subject: path)
        case Int32(SF_ERR_SYSTEM):
            return MediaError(.failed(detail: message), subject: path)
        default:
            let lower = message.lowercased()
            // libsndfile says "File does not exist or is not a regular file (possibly a pipe?)"
            // when it cannot read a format's opening (an MP3 cut to a few hundred bytes); the
            // file was opened and checked as a regular file here, so it is damaged.
            if lower.contains("possibly a pipe") {
                return MediaError(.corrupt(detail: "libsndfile cannot read its beginning: the file is cut short or damaged"), subject: path)
            }
            if lower.contains("unsupported") || lower.contains("not supported") || lower.contains("codec") {
                return MediaError(.unsupportedEncoding(detail: message), subject: path)
            }
            if lower.contains("unknown format") || lower.contains("not recognised") {
                return MediaError(.notAudio(looksLike: sniffed), subject: path)
            }
            return MediaError(.corrupt(detail: message), subject: path)
        }
    }

    /// What a file that is not audio seems to be, from its first bytes.
    private static func sniff(_ fd: Int32) -> String {
        let bytes = leadingBytes(of: fd, 512)
        let signatures: [(prefix: [UInt8], name: String)] = [
            ([0x89, 0x50, 0x4E, 0x47], "a PNG image"),
            ([0xFF, 0xD8, 0xFF], "a JPEG image"),
            ([0x47, 0x49, 0x46, 0x38], "a GIF image"),
            ([0x25, 0x50, 0x44, 0x46], "a PDF document"),
            ([0x50, 0x4B, 0x03, 0x04], "a ZIP archive"),
            ([0x1F, 0x8B], "a gzip archive"),
            ([0x7F, 0x45, 0x4C, 0x46], "an ELF program"),
        ]
        if let match = signatures.first(where: { bytes.starts(with: $0.prefix) }) { return "it looks like \(match.name)" }
        let printable = bytes.allSatisfy { $0 == 9 || $0 == 10 || $0 == 13 || (0x20..<0x7F).contains($0) || $0 >= 0x80 }
        if !bytes.isEmpty && printable { return "it looks like text" }
        return "libsndfile does not recognise its format"
    }
}
