import FoundationEssentials
import Glibc

/// The MIME type of a file from its content (magic bytes), never from its name: what an upload
/// sends as `Content-Type`.
///
/// MPEG-4 (`ftyp` at byte 4: M4A, MP4, AAC in MP4) is `audio/mp4`, which libsndfile cannot open;
/// everything else is what `AudioFileInfo` (and so `sfx info`) says: `audio/ogg` for Opus and
/// Vorbis, `audio/mpeg` for MP3, `audio/flac`, `audio/wav`, … Content that is not sound is
/// `application/octet-stream`.
public enum AudioContentType {
    /// The MIME type of the file at `url`. Throws `MediaError` only when the file cannot be read.
    public static func of(_ url: URL) throws -> String {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw MediaError.fromErrno(errno, path: url.path, writing: false) }
        var head = [UInt8](repeating: 0, count: 12)
        let n = read(fd, &head, head.count)
        close(fd)
        guard n >= 0 else { throw MediaError.fromErrno(errno, path: url.path, writing: false) }
        if let type = mimeType(leadingBytes: Array(head.prefix(n))) { return type }
        return (try? AudioFileInfo(contentsOf: url).mimeType) ?? "application/octet-stream"
    }

    /// The types told from the first bytes alone, or nil when libsndfile must look.
    static func mimeType(leadingBytes bytes: [UInt8]) -> String? {
        guard bytes.count >= 12 else { return nil }
        if bytes[4..<8].elementsEqual("ftyp".utf8) {
            // 3GPP brands are their own type; every other brand (M4A, mp42, isom, dash) is MPEG-4.
            return bytes[8..<11].elementsEqual("3gp".utf8) ? "audio/3gpp" : "audio/mp4"
        }
        return nil
    }
}
