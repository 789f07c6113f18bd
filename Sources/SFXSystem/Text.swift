import FoundationEssentials
import Glibc

// Text as the engine needs it without full Foundation (no ICU): C's printf formats, trimming,
// padding, and an error's one-line text. FoundationEssentials has String, Data and URL but not
// `String(format:)`, `trimmingCharacters(in:)`, `padding(toLength:…)` or `localizedDescription`.

extension String {
    /// `format` with C's printf conversions (`%d`, `%.2f`, `%5.1f`, `%02x`, `%s` of a C string …),
    /// in the C locale (sfx never calls setlocale), as `String(format:)` in the POSIX locale.
    /// `%@` is not C's (its argument would be read as a C string): give Swift strings through
    /// interpolation.
    ///
    ///     String(cFormat: "%.1f ms", 1.25)   // "1.2 ms" (round half to even, as printf)
    public init(cFormat format: String, _ arguments: any CVarArg...) {
        self = withVaList(arguments) { list in
            var buffer = [CChar](repeating: 0, count: 128)
            let needed = Int(vsnprintf(&buffer, buffer.count, format, list))
            guard needed >= buffer.count else { return text(of: buffer) }
            return withVaList(arguments) { again in
                buffer = [CChar](repeating: 0, count: needed + 1)
                _ = vsnprintf(&buffer, buffer.count, format, again)
                return text(of: buffer)
            }
        }
    }

    /// The text without white space or line ends at either end.
    public var trimmed: String { trimmed(where: \.isWhitespace) }

    /// The text without the characters of `characters` at either end.
    public func trimmed(of characters: String) -> String { trimmed { characters.contains($0) } }

    /// The text without the characters `drop` says at either end.
    public func trimmed(where drop: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !drop($0) }), let last = lastIndex(where: { !drop($0) }) else { return "" }
        return String(self[first...last])
    }

    /// The text made `width` characters long: cut, or filled with `pad` on the right
    /// (Foundation's `padding(toLength:withPad:startingAt: 0)` with a one-character pad).
    public func padded(to width: Int, with pad: Character = " ") -> String {
        count >= width ? String(prefix(width)) : self + String(repeating: pad, count: width - count)
    }
}

extension Substring {
    /// The text without white space or line ends at either end.
    public var trimmed: String { String(self).trimmed }

    /// The text without the characters of `characters` at either end.
    public func trimmed(of characters: String) -> String { String(self).trimmed(of: characters) }
}

/// What an error says in one line: a `LocalizedError`'s description, a system error's words
/// (`strerror` for POSIX codes), else its own description.
public func errorText(_ error: any Error) -> String {
    if let localized = error as? any LocalizedError, let text = localized.errorDescription { return text }
    if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
    if let cocoa = error as? CocoaError {
        if let underlying = cocoa.underlying as? POSIXError { return errorText(underlying) }
        let path = cocoa.filePath.map { " (\($0))" } ?? ""
        switch cocoa.code {
        case .fileNoSuchFile, .fileReadNoSuchFile: return "no such file or directory" + path
        case .fileReadNoPermission, .fileWriteNoPermission: return "permission denied" + path
        case .fileWriteOutOfSpace: return "no space left on the device" + path
        case .fileWriteFileExists: return "the file exists" + path
        case .fileWriteVolumeReadOnly: return "read-only file system" + path
        default: return "file error \(cocoa.code.rawValue)" + path
        }
    }
    return String(describing: error)
}

/// Writes `text` to standard error as it is (no line end added), unbuffered.
public func writeToStandardError(_ text: String) { writeAll(2, text) }

/// Writes `text` to standard output as it is, after what `print` has buffered.
public func writeToStandardOutput(_ text: String) {
    fflush(nil)   // every output stream: print's buffer among them
    writeAll(1, text)
}

private func writeAll(_ descriptor: Int32, _ text: String) {
    var bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeMutableBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
        if written < 0 { if errno == EINTR { continue }; return }
        offset += written
    }
}

/// The local time of `date` as `yyyy-MM-dd HH:mm` (C's localtime_r, the TZ environment variable).
public func localDateTime(_ date: Date, format: String = "%Y-%m-%d %H:%M") -> String {
    var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
    var parts = tm()
    guard localtime_r(&seconds, &parts) != nil else { return date.formatted(.iso8601) }
    var buffer = [CChar](repeating: 0, count: 64)
    let length = strftime(&buffer, buffer.count, format, &parts)
    return length > 0 ? text(of: buffer) : ""
}

extension String {
    /// A path's last component (`/a/b.wav` → `b.wav`; `/a/b/` → `b`), as NSString's
    /// `lastPathComponent`.
    public var fileName: String {
        let parts = split(separator: "/")
        return parts.last.map(String.init) ?? (hasPrefix("/") ? "/" : "")
    }

    /// A path without its last component (`/a/b.wav` → `/a`; `/b` → `/`; `b` → ``), as NSString's
    /// `deletingLastPathComponent`.
    public var directoryPart: String {
        var path = Substring(self)
        while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
        guard let slash = path.lastIndex(of: "/") else { return "" }
        if slash == path.startIndex { return "/" }
        var directory = path[..<slash]
        while directory.count > 1, directory.hasSuffix("/") { directory = directory.dropLast() }
        return String(directory)
    }

    /// A path's extension without the dot (`b.tar.gz` → `gz`; `.hidden` and `b` → ``), as
    /// NSString's `pathExtension`.
    public var fileExtension: String {
        let name = fileName
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }
}

/// `date` in ISO 8601 at the local time's offset (`2026-12-03T15:10:00+01:00`; the TZ
/// environment variable and /etc/localtime, through localtime_r, as ISO8601DateFormatter with
/// the current time zone writes it). FoundationEssentials' own TimeZone knows GMT alone.
public func iso8601Local(_ date: Date) -> String {
    var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
    var parts = tm()
    guard localtime_r(&seconds, &parts) != nil else { return date.formatted(.iso8601) }
    let offset = parts.tm_gmtoff
    let zone = offset == 0 ? "Z" : (offset < 0 ? "-" : "+") + String(cFormat: "%02ld:%02ld", abs(offset) / 3600, (abs(offset) % 3600) / 60)
    return localDateTime(date, format: "%Y-%m-%dT%H:%M:%S") + zone
}

/// A date in ISO 8601 with a time zone (`Z` or an offset), as `iso8601Local` and others write it.
public func parseISO8601(_ text: String) -> Date? {
    try? Date.ISO8601FormatStyle().parse(text)
}

/// The effective user's home directory from the password database (what `$HOME` should hold,
/// for when it is unset), else `/`.
public func homeDirectory() -> String {
    var entry = passwd()
    var found: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 4096)
    guard getpwuid_r(geteuid(), &entry, &buffer, buffer.count, &found) == 0, found != nil, let directory = entry.pw_dir else { return "/" }
    return String(cString: directory)
}

/// A C string's text from the buffer that holds it (up to its first NUL).
private func text(of buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
