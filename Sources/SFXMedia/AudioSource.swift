import FoundationEssentials
import Glibc

/// A decoder that hands out interleaved float frames at the source's own rate and channels, one
/// block at a time: libsndfile (`SoundFile`, which reads through mpg123 for MP3) for what it
/// knows, FFmpeg (`FFmpegSource`) for the rest (M4A/AAC, ALAC, WMA, …). Cues and the streaming
/// reader both read through it.
protocol AudioSource: AnyObject {
    /// The file, for messages.
    var path: String { get }
    var sampleRate: Int { get }
    var channels: Int { get }
    /// Frames the header gives, or nil when the length is unknown.
    var frames: Int64? { get }
    var channelMap: [ChannelPosition]? { get }
    /// Reads up to `frames` frames; 0 at the end or on a decoding error (`finishReading` tells).
    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int
    /// After the last read: throws when the source was cut short or damaged.
    func finishReading(framesRead: Int) throws
    /// Moves the next read to `frame` of the source, exactly.
    func seek(toFrame frame: Int64) throws
}

extension SoundFile: AudioSource {}

enum AudioSources {
    /// Opens `file` with libsndfile, or when libsndfile cannot read it (not a format it knows,
    /// or an encoding it lacks), with FFmpeg. A file neither reads fails with libsndfile's reason,
    /// which names the file and what it looks like; without FFmpeg's libraries, with the reason
    /// they could not be loaded.
    /// With `raw`, the file is headerless PCM of that layout, read by libsndfile alone.
    static func open(_ file: RawFilePath, raw: RawPCMFormat? = nil) throws -> any AudioSource {
        if let raw { return try SoundFile(file: file, raw: raw) }
        do {
            return try SoundFile(file: file)
        } catch let error as MediaError {
            switch error.reason {
            case .notAudio, .unsupportedEncoding, .corrupt:
                if let missing = FFmpegLibraries.unavailableReason {
                    throw MediaError(.ffmpegMissing(reason: missing), subject: error.subject)
                }
                guard let source = try? FFmpegSource(file: file) else { throw error }
                return source
            default:
                throw error
            }
        }
    }
}
