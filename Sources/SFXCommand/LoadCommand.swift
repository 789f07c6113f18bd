import FoundationEssentials
import Glibc
import SFX
import SFXDaemon
import SFXMedia

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
        try checkLength(sound, text: text)
        if let client = try DaemonRoute.client(arguments) {
            var (fields, file) = try DaemonRoute.sound(sound)
            defer { if let file { close(file) } }
            fields["name"] = chosen
            fields["file"] = "1"
            if let reply = try DaemonRoute.send(client, .load, fields, file: file, forced: arguments.flag(DaemonRoute.daemon)) {
                let replaced = reply.fields["replaced"] == "1" ? ", replacing the sound loaded as \(chosen) before" : ""
                if !quiet { print("loaded \(chosen) (sound \(reply.fields["id"] ?? "?"))\(replaced); play it with: sfx play \(chosen)") }
                return 0
            }
        }
        // No daemon: decode it to check it; nothing keeps it afterwards.
        let library = try SoundLibrary()
        do {
            _ = try sound.load(into: library)
        } catch SoundError.media(let error) {
            if case .tooLong(let seconds, let limit) = error.reason { throw tooLong(text, seconds: seconds, limit: limit) }
            throw error
        }
        if !quiet { print("sfx: no daemon answers; \(text) decodes fine, but nothing keeps it: start `sfx serve` to load sounds by name") }
        return 0
    }

    /// Fails before anything is sent when the header says the sound is longer than a loaded
    /// sound may be (they are held whole in memory), saying what plays it instead.
    static func checkLength(_ sound: SoundArgument, text: String) throws {
        let file: RawFilePath
        switch sound {
        case .file(let path): file = path
        case .standardInput: file = try StandardInputAudio.shared.path()
        case .system: return
        }
        let limit = CueLimits.standard.maximumDuration
        // A file that cannot be examined is left to the load, which says why.
        guard let info = try? AudioFileInfo(file: file), let seconds = info.duration, seconds > limit else { return }
        throw tooLong(text, seconds: seconds, limit: limit)
    }

    /// "long.wav: is 30.02 s long, over the 30 s a loaded sound may last; …", with what to do
    /// from the shell.
    static func tooLong(_ text: String, seconds: Double, limit: Double) -> Failure {
        let (length, most) = MediaError.distinct(seconds, limit)
        let instead = text == "-" ? "save it to a file and play that with `sfx play FILE`, which streams it"
                                  : "play it with `sfx play \(text)`, which streams it"
        return Failure("\(text == "-" ? "standard input (-)" : text): is \(length) s long, over the \(most) s a loaded sound may last "
                       + "(loaded sounds are held whole in memory); \(instead)")
    }
}
