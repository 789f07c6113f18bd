import FoundationEssentials
import SFXSystem
import Glibc
import SFX

/// `sfx bank check FILE`: validates a bank file (see docs/banks.md) without playing it.
enum BankCommand: Subcommand {
    static let spec = CommandSpec(
        name: "bank", abstract: "Check a sound bank file (JSON events with variations).",
        discussion: """
        'sfx bank check FILE' reads the bank as the library does and prints one line per \
        problem (FILE:LINE: what is wrong and how to fix it), including sound files that are \
        missing; exit status 0 when the bank is good (it then lists its events), 65 otherwise.
        """,
        examples: ["sfx bank check footsteps.json"],
        positionals: [PositionalSpec(name: "ACTION", help: "check", min: 1, max: 1),
                      PositionalSpec(name: "FILE", help: "The bank file.", min: 1, max: 1)],
        options: [quiet])

    static let quiet = OptionSpec.flag("quiet", short: "q", help: "Print problems only.")

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let action = arguments.positionals[0]
        guard action == "check" else {
            throw UsageError(message: "unknown bank action '\(action)': use 'sfx bank check FILE'", command: spec)
        }
        let url = URL(filePath: arguments.positionals[1])
        let problems = check(url)
        for problem in problems { writeToStandardError("\(problem)\n") }
        guard problems.isEmpty else { return 65 }
        if !arguments.flag(quiet), let file = try? BankFile(contentsOf: url) {
            for event in file.events { print("\(event.name): \(event.sounds.count) sound\(event.sounds.count == 1 ? "" : "s"), \(event.choose.rawValue)") }
            for rule in file.ducking {
                func ms(_ d: Duration) -> Int { Int((d.seconds * 1000).rounded()) }
                let db = rule.decibels == rule.decibels.rounded() ? "\(Int(rule.decibels))" : "\(rule.decibels)"
                print("ducking: \(rule.trigger) lowers \(rule.target) by \(db) dB (attack \(ms(rule.attack)) ms, release \(ms(rule.release)) ms)")
            }
        }
        return 0
    }

    /// The bank's problems, and each sound file that cannot be read, in line order.
    static func check(_ url: URL) -> [BankError] {
        let file: BankFile
        do { file = try BankFile(contentsOf: url) } catch { return error.errors }
        var problems: [BankError] = []
        for event in file.events {
            for (sound, line) in zip(event.sounds, event.soundLines) where !FileManager.default.isReadableFile(atPath: sound.path) {
                problems.append(BankError(file: url.lastPathComponent, line: line,
                                          reason: "event \"\(event.name)\": sound \"\(sound.lastPathComponent)\" cannot be read at \(sound.path): check the path (relative to the bank)"))
            }
        }
        return problems.sorted { $0.line < $1.line }
    }
}
