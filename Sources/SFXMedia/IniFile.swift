import FoundationEssentials
import SFXSystem
import Glibc

/// A reader for the INI-style files of the freedesktop specifications (`index.theme`, `.desktop`).
///
/// ```ini
/// [Sound Theme]
/// Name=sfx
/// Inherits=freedesktop
/// Directories=stereo
///
/// [X-SFX Volumes]
/// tock=0.8
/// ```
///
/// Lines are `[Group]` headers or `Key=Value` pairs; blank lines and lines starting with `#` or
/// `;` are skipped; spaces around keys and values are trimmed; a key repeated in a group keeps
/// its last value (`entries` keeps every one, with its line number, and `duplicates` names the
/// repeats, for readers that warn or combine them). Groups keep the order they appear in; a
/// group named twice is merged.
/// Lines that are neither (and pairs before the first group) are ignored, as the specification
/// asks readers to do.
public struct IniFile: Sendable, Hashable {
    /// One `[Group]` and its entries in file order.
    public struct Group: Sendable, Hashable {
        public var name: String
        public var entries: [(key: String, value: String)] {
            keys.map { ($0, values[$0]!) }
        }
        private var keys: [String] = []
        private var values: [String: String] = [:]

        init(name: String) { self.name = name }

        public subscript(key: String) -> String? { values[key] }

        mutating func set(_ key: String, _ value: String) {
            if values.updateValue(value, forKey: key) == nil { keys.append(key) }
        }
    }

    /// One `Key=Value` line as written, repeats included.
    public struct Entry: Sendable, Hashable {
        public var group: String
        public var key: String
        public var value: String
        /// 1-based line number in the file.
        public var line: Int
    }

    public private(set) var groups: [Group] = []
    /// Every `Key=Value` line inside a group, in file order, repeated keys included.
    public private(set) var entries: [Entry] = []
    /// Where each group is in `groups`, by name, so parsing and lookups take constant time per
    /// group (a file with tens of thousands of sections parses in linear time).
    private var index: [String: Int] = [:]

    /// The largest file `init(contentsOf:)` reads: 16 MB (theme and settings files are a few KB).
    public static let maximumFileBytes = 16_000_000

    /// Parses `text`.
    public init(parsing text: String) {
        var current: Int?
        var lineNumber = 0
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" }) {
            lineNumber += 1
            let line = Self.trimmed(rawLine, newlines: true)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                let name = String(line.dropFirst().dropLast())
                if let existing = index[name] {
                    current = existing
                } else {
                    groups.append(Group(name: name))
                    current = groups.count - 1
                    index[name] = current
                }
                continue
            }
            guard let current, let equals = line.firstIndex(of: "=") else { continue }
            let key = Self.trimmed(line[..<equals], newlines: false)
            let value = Self.trimmed(line[line.index(after: equals)...], newlines: false)
            groups[current].set(key, value)
            entries.append(Entry(group: groups[current].name, key: key, value: value, line: lineNumber))
        }
    }

    /// `text` without the white space around it: Foundation's `.whitespaces` (space separators,
    /// tab and, in swift-corelibs-foundation, U+200B), with `newlines` also
    /// `.whitespacesAndNewlines`' line breaks (U+000A–U+000D, U+0085, U+2028, U+2029). In the standard library alone: Foundation's trimming goes through
    /// NSString and took most of the time `sfx play` spent reading its sound theme.
    static func trimmed<Text: StringProtocol>(_ text: Text, newlines: Bool) -> String {
        func blank(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.value {
            case 0x09, 0x20, 0x200B: return true
            case 0x0A...0x0D, 0x85, 0x2028, 0x2029: return newlines
            case 0..<0xA0: return false
            default: return scalar.properties.generalCategory == .spaceSeparator
            }
        }
        let scalars = Substring(text).unicodeScalars
        guard let first = scalars.firstIndex(where: { !blank($0) }), let last = scalars.lastIndex(where: { !blank($0) }) else { return "" }
        return String(scalars[first...last])
    }

    /// Reads and parses the file at `url`. Throws `MediaError` when it cannot be read: missing,
    /// unreadable, not a regular file (a directory, FIFO or device is refused before it is read),
    /// or larger than `maximumFileBytes`.
    public init(contentsOf url: URL) throws {
        self.init(parsing: String(decoding: try IniFile.readFile(RawFilePath(url)), as: UTF8.self))
    }

    private static func readFile(_ file: RawFilePath) throws -> [UInt8] {
        let path = file.description
        var st = stat()
        guard file.withCString({ stat($0, &st) }) == 0 else { throw MediaError.fromErrno(errno, path: path, writing: false) }
        if let error = MediaError.notRegular(mode: st.st_mode, path: path, directoryIsSound: false) { throw error }
        let fd = file.withCString { open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        guard fd >= 0 else { throw MediaError.fromErrno(errno, path: path, writing: false) }
        defer { close(fd) }
        guard fstat(fd, &st) == 0 else { throw MediaError.fromErrno(errno, path: path, writing: false) }
        if let error = MediaError.notRegular(mode: st.st_mode, path: path, directoryIsSound: false) { throw error }
        func tooLarge() -> MediaError {
            MediaError(.failed(detail: "is larger than \(MediaError.megabytes(Int64(maximumFileBytes))), too large for a settings or theme file; give the right file"), subject: path)
        }
        guard st.st_size <= maximumFileBytes else { throw tooLarge() }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size) + 1)
        var count = 0
        while true {
            if count > maximumFileBytes { throw tooLarge() }
            if count == bytes.count {
                // The file grew since fstat: read on, up to one byte past the limit.
                bytes.append(contentsOf: repeatElement(0, count: min(bytes.count, maximumFileBytes + 1 - count)))
            }
            let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if got < 0 {
                if errno == EINTR { continue }
                throw MediaError.fromErrno(errno, path: path, writing: false)
            }
            if got == 0 { break }
            count += got
        }
        return Array(bytes.prefix(count))
    }

    /// The group named `name`, if present.
    public func group(_ name: String) -> Group? { index[name].map { groups[$0] } }

    /// The value of `key` in group `group`.
    public subscript(group: String, key: String) -> String? { self.group(group)?[key] }

    /// A list value split at commas and spaces, as `Inherits` and `Directories` are written. A
    /// `#` and what follows it is a comment, not names (`Inherits=a # the parent`), as
    /// libcanberra reads it.
    public func list(group: String, key: String) -> [String] {
        IniFile.list(self[group, key] ?? "")
    }

    /// `value` split as `list(group:key:)` splits a list value.
    public static func list(_ value: String) -> [String] {
        let names = value.firstIndex(of: "#").map { value[..<$0] } ?? Substring(value)
        return names.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }).map(String.init)
    }

    /// Keys given more than once in one group: the group, the key, and every line that sets it.
    public var duplicates: [(group: String, key: String, lines: [Int])] {
        var lines: [String: [Int]] = [:]
        var order: [(String, String)] = []
        for entry in entries {
            let id = entry.group + "\u{0}" + entry.key
            if lines[id] == nil { order.append((entry.group, entry.key)) }
            lines[id, default: []].append(entry.line)
        }
        return order.compactMap { group, key in
            let found = lines[group + "\u{0}" + key] ?? []
            return found.count > 1 ? (group, key, found) : nil
        }
    }
}
