import FoundationEssentials
import SFXSystem
import Glibc
import SFX
import SFXMedia

enum ListCommand: Subcommand {
    static let spec = CommandSpec(
        name: "list", abstract: "List the system sounds: id, name, theme, loudness class, duration.",
        discussion: "System sounds come from the sound theme (sfx's own, inheriting freedesktop) and never need loading by hand. A description is sfx's for its own sounds; other themes' sounds have none.",
        examples: ["sfx list", "sfx list --theme freedesktop --json"],
        positionals: [],
        options: [CommonOptions.json,
                  theme])

    static let theme = OptionSpec.option("theme", value: "NAME", help: "The sound theme to list (default: sfx).")

    struct Row: Encodable {
        let id: UInt32?
        let name: String
        let theme: String
        let file: String
        let duration: Double?
        let description: String?
        /// "input-feedback", "notification", "dialog" or "alarm" (see Sounds/README.md).
        let loudnessClass: String?
    }

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        var configuration = SoundLibrary.Configuration()
        if let theme = arguments.value(Self.theme) {
            try ThemeCheck.installed(theme, default: configuration.theme, environment: configuration.environment)
            configuration.theme = theme
        }
        let library = try SoundLibrary(configuration: configuration)
        for warning in ThemeCheck.warnings(theme: configuration.theme, environment: configuration.environment) {
            printError("warning: \(warning)")
        }
        let rows = library.systemSounds().map { sound in
            Row(id: sound.id?.rawValue, name: sound.name, theme: sound.theme, file: sound.file,
                duration: (try? AudioFileInfo(contentsOf: URL(filePath: sound.file)))?.duration,
                description: sound.description, loudnessClass: library.loudnessClass(ofSystemSound: sound.name))
        }
        if arguments.flag(CommonOptions.json) {
            try printJSON(rows)
            return 0
        }
        let nameWidth = max(4, rows.map(\.name.count).max() ?? 0)
        let themeWidth = max(5, rows.map(\.theme.count).max() ?? 0)
        let classWidth = max(5, rows.map { $0.loudnessClass?.count ?? 1 }.max() ?? 0)
        print("ID    " + "NAME".padded(to: nameWidth + 2)
              + "THEME".padded(to: themeWidth + 2)
              + "CLASS".padded(to: classWidth + 2) + "DURATION  DESCRIPTION")
        for row in rows {
            let id = row.id.map(String.init) ?? "-"
            let duration = row.duration.map { String(cFormat: "%6.3f s", $0) } ?? "       ?"
            print(id.padded(to: 6)
                  + row.name.padded(to: nameWidth + 2)
                  + row.theme.padded(to: themeWidth + 2)
                  + (row.loudnessClass ?? "-").padded(to: classWidth + 2)
                  + duration + "  " + (row.description ?? ""))
        }
        return 0
    }
}
