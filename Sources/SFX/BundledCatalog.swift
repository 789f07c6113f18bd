import Foundation
import SFXMedia

/// The ids and one-line descriptions of sfx's bundled sounds, read from the `[X-SFX Sounds]`
/// group of the bundled theme's index (`name=id;description`).
struct BundledCatalog: Sendable {
    struct Entry: Sendable {
        let id: UInt32
        let description: String
    }

    static let group = "X-SFX Sounds"
    let entries: [String: Entry]
    /// Each event's loudness class, from the `[X-SFX Loudness Classes]` group (`name=class`).
    let loudnessClasses: [String: String]

    /// Reads `<directory>/sfx/index.theme`; a missing or unreadable index gives an empty catalog
    /// (the theme lookup then reports the sounds as missing, with the fix).
    init(directory: String) {
        let index = URL(filePath: directory).appending(path: "sfx/index.theme")
        let file = try? IniFile(contentsOf: index)
        loudnessClasses = Dictionary(file?.group("X-SFX Loudness Classes")?.entries.map { ($0.key, $0.value) } ?? [],
                                     uniquingKeysWith: { $1 })
        guard let group = file?.group(Self.group) else {
            entries = [:]
            return
        }
        var entries: [String: Entry] = [:]
        for (name, value) in group.entries {
            let parts = value.split(separator: ";", maxSplits: 1)
            guard let id = parts.first.flatMap({ UInt32($0) }) else { continue }
            entries[name] = Entry(id: id, description: parts.count > 1 ? String(parts[1]) : "")
        }
        self.entries = entries
    }
}
