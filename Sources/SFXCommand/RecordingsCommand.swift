import FoundationEssentials
import SFXSystem
import Glibc
import SFX

enum RecordingsCommand: Subcommand {
    static let spec = CommandSpec(
        name: "recordings", abstract: "List the saved recordings, or remove one (rm NAME).",
        discussion: """
        The recordings are the files in $XDG_DATA_HOME/sfx/recordings (~/.local/share/sfx/recordings), \
        where `sfx record` saves without -o: name, date, duration, format (from the content) and size, \
        oldest first. `sfx recordings rm NAME` deletes the one called NAME.
        """,
        examples: ["sfx recordings", "sfx recordings --json", "sfx recordings rm 2026-11-30_14-55-03.m4a"],
        positionals: [PositionalSpec(name: "rm NAME", help: "Remove the recording called NAME.", min: 0, max: 2)],
        options: [CommonOptions.json])

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let directory = Recorder.defaultDirectory()
        let words = arguments.positionals
        if let first = words.first {
            guard first == "rm" else { throw UsageError(message: "unknown action '\(first)': expected rm NAME", command: spec) }
            guard words.count == 2 else { throw UsageError(message: "missing expected argument 'NAME' after rm", command: spec) }
            do { try RecordingStore.remove(named: words[1], in: directory) } catch { throw Failure("\(error)") }
            return 0
        }
        let recordings = RecordingStore.list(in: directory)
        if arguments.flag(CommonOptions.json) {
            try printJSON(recordings)
            return 0
        }
        if recordings.isEmpty {
            print("no recordings in \(directory.path)")
            return 0
        }
        let width = recordings.map(\.name.count).max() ?? 0
        for r in recordings {
            let name = r.name.padded(to: width)
            let duration = r.duration.map { String(cFormat: "%8.2f s", $0) } ?? "       ? s"
            print("\(name)  \(localDateTime(r.date, format: "%Y-%m-%d %H:%M:%S"))  \(duration)  \((r.format ?? "?").padded(to: 6))  \(r.size) bytes")
        }
        return 0
    }
}
