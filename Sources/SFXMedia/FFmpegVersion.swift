import CFFmpeg

/// The FFmpeg libraries sfx decodes and encodes through, as `sfx version -v` would name them.
public enum FFmpegLibraries {
    /// "libavformat 59.27.100, libavcodec 59.37.100" for the libraries loaded at run time.
    public static var versions: String {
        func text(_ name: String, _ version: UInt32) -> String {
            "\(name) \(version >> 16).\((version >> 8) & 0xff).\(version & 0xff)"
        }
        return [text("libavformat", avformat_version()), text("libavcodec", avcodec_version()),
                text("libswresample", swresample_version()), text("libavutil", avutil_version())].joined(separator: ", ")
    }
}
