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

    /// Reads `<directory>/sfx/index.theme`; a missing or unreadable index gives an empty catalog
    /// (the theme lookup then reports the sounds as missing, with the fix).
    init(directory: String) {
        let index = URL(filePath: directory).appending(path: "sfx/index.theme")
        guard let group = (try? IniFile(contentsOf: index))?.group(Self.group) else {
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
