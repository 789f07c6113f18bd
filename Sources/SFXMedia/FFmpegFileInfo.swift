/// `AudioFileInfo` for what FFmpeg reads: the container and codec as FFmpeg names them, and the
/// MIME type and extension of the usual containers.
extension AudioFileInfo {
    init(_ source: FFmpegSource) {
        let kind = Self.ffmpegKind(container: source.containerName, codec: source.codecName)
        path = source.path
        container = kind.container
        encoding = source.codecLongName
        sampleRate = source.sampleRate
        channels = source.channels
        frames = source.frames
        duration = source.frames.map { Double($0) / Double(source.sampleRate) }
        mimeType = kind.mime
        fileExtension = kind.fileExtension
    }

    private static func ffmpegKind(container: String, codec: String) -> (container: String, mime: String, fileExtension: String) {
        let names = container.split(separator: ",")
        if names.contains("mp4") || names.contains("m4a") || names.contains("mov") { return ("MPEG-4", "audio/mp4", "m4a") }
        if names.contains("asf") { return ("ASF", "audio/x-ms-wma", "wma") }
        if names.contains("matroska") || names.contains("webm") {
            return codec == "opus" || codec == "vorbis" ? ("WebM", "audio/webm", "webm") : ("Matroska", "audio/x-matroska", "mka")
        }
        if names.contains("aac") { return ("ADTS", "audio/aac", "aac") }
        if names.contains("ac3") { return ("AC-3", "audio/ac3", "ac3") }
        let token = String(names.first ?? "audio").lowercased()
        return (token.uppercased(), "audio/x-\(token)", token)
    }
}
