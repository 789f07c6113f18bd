import Foundation

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
/// its last value. Groups keep the order they appear in; a group named twice is merged.
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

    public private(set) var groups: [Group] = []

    /// Parses `text`.
    public init(parsing text: String) {
        var current: Int?
        for rawLine in text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                let name = String(line.dropFirst().dropLast())
                if let existing = groups.firstIndex(where: { $0.name == name }) {
                    current = existing
                } else {
                    groups.append(Group(name: name))
                    current = groups.count - 1
                }
                continue
            }
            guard let current, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            groups[current].set(key, value)
        }
    }

    /// Reads and parses the file at `url`. Throws `MediaError` when it cannot be read.
    public init(contentsOf url: URL) throws {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
            let code = !exists ? ENOENT : (isDirectory.boolValue ? EISDIR : EACCES)
            throw MediaError.fromErrno(code, path: url.path, writing: false)
        }
        self.init(parsing: String(decoding: data, as: UTF8.self))
    }

    /// The group named `name`, if present.
    public func group(_ name: String) -> Group? { groups.first { $0.name == name } }

    /// The value of `key` in group `group`.
    public subscript(group: String, key: String) -> String? { self.group(group)?[key] }

    /// A list value split at commas and spaces, as `Inherits` and `Directories` are written.
    public func list(group: String, key: String) -> [String] {
        (self[group, key] ?? "").split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
    }
}
