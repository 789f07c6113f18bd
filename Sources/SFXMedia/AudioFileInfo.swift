import CSndFile
import FoundationEssentials
import Glibc

/// What a sound file is, read from its content (never from its name): container, encoding,
/// rate, channels, length, and the MIME type and file extension that match.
///
/// ```swift
/// let info = try AudioFileInfo(contentsOf: URL(filePath: "upload.bin"))
/// info.mimeType        // "audio/ogg"
/// info.fileExtension   // "opus"
/// ```
///
/// `Codable`, so `sfx info --json` can print it. The MIME types are the ones browsers and
/// servers use (WAV `audio/wav`, AIFF and AIFC `audio/aiff`, FLAC `audio/flac`, Ogg Vorbis and
/// Opus `audio/ogg`, MP3 `audio/mpeg`, CAF `audio/x-caf`, AU `audio/basic`), so an upload is
/// never labelled `application/octet-stream`.
public struct AudioFileInfo: Sendable, Hashable, Codable {
    public var path: String
    /// The container, e.g. "WAV", "AIFC", "Ogg", "MP3".
    public var container: String
    /// The encoding inside it as libsndfile names it, e.g. "Signed 16 bit PCM", "Opus".
    public var encoding: String
    public var sampleRate: Int
    public var channels: Int
    /// Frames the header gives; nil when the length is unknown.
    public var frames: Int64?
    /// Seconds; nil when the length is unknown.
    public var duration: Double?
    public var mimeType: String
    /// The canonical extension for this content, without the dot ("wav", "opus").
    public var fileExtension: String

    /// Reads the header of the file at `url`. Throws `MediaError` as `AudioDecoder` does.
    public init(contentsOf url: URL) throws {
        try self.init(file: RawFilePath(url))
    }

    /// Reads the header of the file at `file` (any bytes a Linux file name may hold; `path` shows
    /// bytes that are not UTF-8 as `\xNN`). Only regular files are opened.
    public init(file sound: RawFilePath) throws {
        let opened = try AudioSources.open(sound)   // libsndfile, else FFmpeg
        if let ffmpeg = opened as? FFmpegSource {
            self = AudioFileInfo(ffmpeg)
            return
        }
        let file = opened as! SoundFile
        let kind = AudioFileInfo.kind(major: file.majorFormat, subtype: file.subtype, leadingBytes: file.leadingBytes(12))
        path = file.path
        container = kind.container
        encoding = AudioFileInfo.encodingName(subtype: file.subtype)
        sampleRate = file.sampleRate
        channels = file.channels
        // A stream whose header has no length (a FLAC whose STREAMINFO was never completed, as
        // after a crash or a full disk): counted by decoding it, as every reader would play it.
        frames = file.frames ?? AudioFileInfo.countFrames(file)
        if Int(file.majorFormat) == SF_FORMAT_MPEG, Int(file.subtype) == SF_FORMAT_MPEG_LAYER_III,
           let opened = try? RawFilePath.openRegularFile(sound) {
            // An MP3 without a frame count: its frames counted, not its length guessed.
            if let samples = MP3InfoFrame.samplesWhenUncounted(descriptor: opened.descriptor) { frames = samples }
            close(opened.descriptor)
        }
        duration = frames.map { Double($0) / Double(file.sampleRate) }
        mimeType = kind.mime
        fileExtension = kind.fileExtension
    }

    /// The frames `file` decodes to from its start; nil when none decode.
    private static func countFrames(_ file: SoundFile) -> Int64? {
        let block = 4_096
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: block * file.channels)
        defer { buffer.deallocate() }
        var total: Int64 = 0
        while true {
            let n = file.read(into: buffer, frames: block)
            if n <= 0 { break }
            total += Int64(n)
        }
        return total > 0 ? total : nil
    }

    private typealias Kind = (container: String, mime: String, fileExtension: String)

    private static func kind(major: Int32, subtype: Int32, leadingBytes: [UInt8]) -> Kind {
        switch Int(major) {
        case SF_FORMAT_WAV, SF_FORMAT_WAVEX: return ("WAV", "audio/wav", "wav")
        case SF_FORMAT_RF64: return ("RF64", "audio/wav", "wav")
        case SF_FORMAT_W64: return ("Wave64", "audio/x-w64", "w64")
        case SF_FORMAT_AIFF:
            // libsndfile reports AIFF for both; the FORM type at byte 8 tells AIFC apart.
            return leadingBytes.dropFirst(8).starts(with: Array("AIFC".utf8)) ? ("AIFC", "audio/aiff", "aifc") : ("AIFF", "audio/aiff", "aiff")
        case SF_FORMAT_AU: return ("AU", "audio/basic", "au")
        case SF_FORMAT_FLAC: return ("FLAC", "audio/flac", "flac")
        case SF_FORMAT_CAF: return ("CAF", "audio/x-caf", "caf")
        case SF_FORMAT_OGG:
            switch Int(subtype) {
            case SF_FORMAT_OPUS: return ("Ogg", "audio/ogg", "opus")
            case SF_FORMAT_VORBIS: return ("Ogg", "audio/ogg", "ogg")
            default: return ("Ogg", "audio/ogg", "oga")
            }
        case SF_FORMAT_MPEG:
            switch Int(subtype) {
            case SF_FORMAT_MPEG_LAYER_I: return ("MP1", "audio/mpeg", "mp1")
            case SF_FORMAT_MPEG_LAYER_II: return ("MP2", "audio/mpeg", "mp2")
            default: return ("MP3", "audio/mpeg", "mp3")
            }
        case SF_FORMAT_SVX: return ("8SVX", "audio/x-8svx", "8svx")
        case SF_FORMAT_NIST: return ("NIST SPHERE", "audio/x-nist", "sph")
        case SF_FORMAT_VOC: return ("VOC", "audio/x-voc", "voc")
        case SF_FORMAT_IRCAM: return ("IRCAM", "audio/x-ircam", "sf")
        case SF_FORMAT_PAF: return ("PAF", "audio/x-paf", "paf")
        case SF_FORMAT_SD2: return ("SD2", "audio/x-sd2", "sd2")
        default:
            let name = majorName(major)
            let token = name.lowercased().filter { $0.isLetter || $0.isNumber }
            return (name, "audio/x-\(token.isEmpty ? "unknown" : token)", token.isEmpty ? "snd" : token)
        }
    }

    private static func majorName(_ major: Int32) -> String {
        formatInfo(major).flatMap { $0.split(separator: " ").first.map(String.init) } ?? "Audio"
    }

    private static func encodingName(subtype: Int32) -> String {
        formatInfo(subtype) ?? "unknown encoding"
    }

    /// libsndfile's own name for a major or sub format.
    private static func formatInfo(_ format: Int32) -> String? {
        var info = SF_FORMAT_INFO()
        info.format = format
        guard sf_command(nil, Int32(SFC_GET_FORMAT_INFO), &info, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0, let name = info.name else { return nil }
        return String(cString: name)
    }
}
