import CFFmpeg
import FoundationEssentials
import SFXSystem
import Glibc

/// The loop region a music file's tags give, as SDL_mixer and games read them: `LOOPSTART` and
/// `LOOPLENGTH` (or `LOOPEND`, exclusive), in the file's own frames. Ogg Vorbis and Opus and
/// FLAC carry them as Vorbis comments, MP3 as ID3 `TXXX` frames, M4A as iTunes free-form atoms;
/// FFmpeg's metadata dictionaries expose all of these (libsndfile's `sf_get_string` only knows
/// its fixed set of strings, so FFmpeg reads them, even for files libsndfile plays).
public enum LoopTags {
    /// Extensions of containers that carry no such tags: not opened a second time to look.
    static let untagged: Set<String> = ["wav", "wave", "aif", "aiff", "aifc", "caf", "au", "raw", "w64", "rf64"]

    /// The tagged region (start..<end source frames), or nil when the file has none, has no
    /// usable one (LOOPSTART past the end, a length of 0, not a number) or FFmpeg is missing.
    public static func region(of file: RawFilePath) -> Range<Int64>? {
        guard !untagged.contains(URL(filePath: file.description).pathExtension.lowercased()),
              FFmpegLibraries.unavailableReason == nil, let source = try? FFmpegSource(file: file) else { return nil }
        return region(start: source.tag("LOOPSTART"), length: source.tag("LOOPLENGTH"), end: source.tag("LOOPEND"),
                      frames: source.frames)
    }

    /// The region the tags' texts give (frames; `end` is exclusive), clamped to `frames` when known.
    static func region(start: String?, length: String?, end: String?, frames: Int64?) -> Range<Int64>? {
        func number(_ text: String?) -> Int64? { text.flatMap { Int64($0.trimmed) } }
        guard let first = number(start), first >= 0 else { return nil }
        var last: Int64
        if let length = number(length), length > 0 {
            last = first + length
        } else if let end = number(end), end > first {
            last = end
        } else if let frames {
            last = frames                       // LOOPSTART alone: loop to the end
        } else {
            return nil
        }
        if let frames { last = min(last, frames) }
        return first < last ? first..<last : nil
    }
}

extension FFmpegSource {
    /// The text of the tag `key` (any case), from the container's metadata or the audio stream's.
    func tag(_ key: String) -> String? {
        guard let format else { return nil }
        if let entry = av_dict_get(format.pointee.metadata, key, nil, 0) { return String(cString: entry.pointee.value) }
        guard streamIndex >= 0, let stream = format.pointee.streams[Int(streamIndex)],
              let entry = av_dict_get(stream.pointee.metadata, key, nil, 0) else { return nil }
        return String(cString: entry.pointee.value)
    }
}
