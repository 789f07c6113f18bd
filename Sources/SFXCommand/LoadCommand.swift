import Foundation
import Glibc
import SFX
import SFXDaemon

enum LoadCommand: Subcommand {
    static let spec = CommandSpec(
        name: "load", abstract: "Load a sound file into the daemon under a name, for `sfx play NAME`.",
        discussion: """
        The file is opened here and passed to the daemon as an open descriptor: the daemon reads \
        what you can read, and opens no path of yours. A name loaded again is replaced. The \
        sound stays until the daemon stops; for sounds kept across restarts, list them in \
        ~/.config/sfx/serve.conf. Without a daemon the file is decoded here to check it, and \
        nothing keeps it.
        """,
        examples: ["sfx load ./coin.ogg", "sfx load --name door /srv/kiosk/door-chime.flac"],
        positionals: [PositionalSpec(name: "FILE", help: "A sound file, or - for standard input.", min: 1, max: 1)],
        options: [name] + DaemonRoute.specs + [OutputOptions.quiet])

    static let name = OptionSpec.option("name", value: "NAME", help: "The name to play it by (default: the file's name without its extension).")

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let text = arguments.positionals[0]
        let sound: SoundArgument = text == "-" ? .standardInput : .file(SoundArgument.rawBytes(of: text))
        let base = URL(filePath: text).deletingPathExtension().lastPathComponent
        let chosen = arguments.value(name) ?? (text == "-" ? "stdin" : base)
        guard !chosen.isEmpty, !chosen.contains("/"), !chosen.contains("\n"), !chosen.contains("="),
              SoundArgument(chosen) == .system(chosen) else {
            throw UsageError(message: "'\(chosen)' cannot name a sound (it would read as a file); give --name with letters, digits and dashes", command: spec)
        }
        let quiet = arguments.flag(OutputOptions.quiet)
        try SoundArgument.checkFilesExist([sound])
        if let client = try DaemonRoute.client(arguments) {
            var (fields, file) = try DaemonRoute.sound(sound)
            defer { if let file { close(file) } }
            fields["name"] = chosen
            fields["file"] = "1"
            if let reply = try DaemonRoute.send(client, .load, fields, file: file, forced: arguments.flag(DaemonRoute.daemon)) {
                if !quiet { print("loaded \(chosen) (sound \(reply.fields["id"] ?? "?")); play it with: sfx play \(chosen)") }
                return 0
            }
        }
        // No daemon: decode it to check it; nothing keeps it afterwards.
        let library = try SoundLibrary()
        _ = try sound.load(into: library)
        if !quiet { print("sfx: no daemon answers; \(text) decodes fine, but nothing keeps it: start `sfx serve` to load sounds by name") }
        return 0
    }
}
