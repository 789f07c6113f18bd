import SFXPlayback
import FoundationEssentials
import SFXSystem
import Glibc
import SFXMedia

/// The saved recordings in a directory (by default `Recorder.defaultDirectory()`): what
/// `sfx recordings` lists and removes.
public struct SavedRecording: Sendable, Codable, Hashable {
    /// The file's name in the directory.
    public var name: String
    public var path: String
    /// When it was last written.
    public var date: Date
    /// Seconds of audio; nil when the file cannot be read as sound.
    public var duration: Double?
    /// "m4a", "wav", … from the content (nil when it is not sound).
    public var format: String?
    /// Bytes on disk.
    public var size: Int64

    private enum Key: String, CodingKey { case name, path, date, duration, format, size }

    public init(name: String, path: String, date: Date, duration: Double?, format: String?, size: Int64) {
        self.name = name
        self.path = path
        self.date = date
        self.duration = duration
        self.format = format
        self.size = size
    }

    /// JSON: the date as ISO 8601 in local time with its offset ("2026-11-30T15:11:58+01:00").
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(name, forKey: .name)
        try container.encode(path, forKey: .path)
        try container.encode(iso8601Local(date), forKey: .date)
        try container.encode(duration, forKey: .duration)
        try container.encode(format, forKey: .format)
        try container.encode(size, forKey: .size)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        name = try container.decode(String.self, forKey: .name)
        path = try container.decode(String.self, forKey: .path)
        let text = try container.decode(String.self, forKey: .date)
        guard let date = parseISO8601(text) else {
            throw DecodingError.dataCorruptedError(forKey: .date, in: container, debugDescription: "\(text) is not an ISO 8601 date")
        }
        self.date = date
        duration = try container.decodeIfPresent(Double.self, forKey: .duration)
        format = try container.decodeIfPresent(String.self, forKey: .format)
        size = try container.decode(Int64.self, forKey: .size)
    }
}

public enum RecordingStore {
    /// Creates `directory` and its missing parents with mode 0700, and checks that it is a
    /// directory of the user's own, not a symbolic link, that no one else can write to.
    public static func prepare(_ directory: URL) throws {
        var st = stat()
        if lstat(directory.path, &st) != 0 {
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw MediaError(.failed(detail: "cannot be created (\(errorText(error))); create it (mkdir -p -m 700) or choose another place"), subject: directory.path)
            }
            guard lstat(directory.path, &st) == 0 else { throw MediaError.fromErrnoForDirectory(errno, directory) }
        }
        guard st.st_mode & S_IFMT == S_IFDIR else {
            throw MediaError(.failed(detail: "is not a directory (or is a symbolic link); recordings go only into a real directory: remove it or choose another place"), subject: directory.path)
        }
        guard st.st_uid == getuid(), st.st_mode & 0o022 == 0 else {
            throw MediaError(.failed(detail: "belongs to another user or others may write to it; recordings go only into a private directory: chmod 700 it or choose another place"), subject: directory.path)
        }
    }

    /// "2026-11-30_14-55-03" in local time: a file name that sorts by time.
    public static func timestamp(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970)
        var parts = tm()
        localtime_r(&time, &parts)
        return String(cFormat: "%04d-%02d-%02d_%02d-%02d-%02d", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec)
    }

    /// The recordings in `directory`, oldest first (an empty list when it does not exist).
    public static func list(in directory: URL = Recorder.defaultDirectory()) -> [SavedRecording] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        var found: [SavedRecording] = []
        for name in names where !name.hasPrefix(".") {
            let url = directory.appending(path: name)
            var st = stat()
            guard lstat(url.path, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { continue }
            let probe = RecordingProbe(url)
            found.append(SavedRecording(name: name, path: url.path,
                                        date: Date(timeIntervalSince1970: Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9),
                                        duration: probe?.duration, format: probe?.format, size: Int64(st.st_size)))
        }
        return found.sorted { ($0.date, $0.name) < ($1.date, $1.name) }
    }

    /// Deletes the recording called `name` in `directory`. `name` is a file name, not a path.
    public static func remove(named name: String, in directory: URL = Recorder.defaultDirectory()) throws {
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
            throw MediaError(.failed(detail: "is not a recording's name; give a name `sfx recordings` lists"), subject: name)
        }
        let url = directory.appending(path: name)
        var st = stat()
        guard lstat(url.path, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
            throw MediaError(.failed(detail: "no such recording in \(directory.path); `sfx recordings` lists them"), subject: name)
        }
        guard unlink(url.path) == 0 else {
            throw MediaError(.failed(detail: "cannot be removed (\(String(cString: strerror(errno)))); check the directory's permissions"), subject: url.path)
        }
    }
}

extension MediaError {
    static func fromErrnoForDirectory(_ code: Int32, _ directory: URL) -> MediaError {
        MediaError(.failed(detail: "cannot be used (\(String(cString: strerror(code)))); choose another place"), subject: directory.path)
    }
}
