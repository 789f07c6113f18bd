import CFFmpeg
import CSFXFFmpeg

/// FFmpeg's libraries, which sfx loads on first use rather than links (Sources/CSFXFFmpeg): a
/// command that never meets an M4A, AAC, ALAC or WMA file does not pay for loading them.
public enum FFmpegLibraries {
    /// Why FFmpeg cannot be used, in one line naming what to install; nil when it is loaded.
    /// The first call loads the libraries.
    public static var unavailableReason: String? {
        sfx_ffmpeg_error().map { String(cString: $0) }
    }

    /// "libavformat 59.27.100, libavcodec 59.37.100, …" for the libraries loaded, or the reason
    /// they are not.
    public static var versions: String {
        if let unavailableReason { return unavailableReason }
        func text(_ name: String, _ version: UInt32) -> String {
            "\(name) \(version >> 16).\((version >> 8) & 0xff).\(version & 0xff)"
        }
        return [text("libavformat", avformat_version()), text("libavcodec", avcodec_version()),
                text("libswresample", swresample_version()), text("libavutil", avutil_version())].joined(separator: ", ")
    }

    /// Throws `error(reason)` when FFmpeg is not there.
    static func require(_ error: (String) -> MediaError) throws {
        if let unavailableReason { throw error(unavailableReason) }
    }
}
