import FoundationEssentials
import SFXSystem
import Glibc
import SFX
import SFXMedia

/// `sfx`: play, inspect and render sounds from the shell.

let version = "0.1.0"

let commands: [Subcommand.Type] = [
    PlayCommand.self, AlertCommand.self, VibrateCommand.self, ListCommand.self, InfoCommand.self,
    RenderCommand.self, DevicesCommand.self, HapticsCommand.self, MuteCommand.self, CompletionCommand.self,
    RecordCommand.self, MeterCommand.self, RecordingsCommand.self, UploadCommand.self,
    ServeCommand.self, StatusCommand.self, StopCommand.self, LoadCommand.self, BankCommand.self,
]

/// Built when asked for: a global of this file is made before the first line runs, and this one
/// would make every subcommand's spec (most of a millisecond of every `sfx play`).
var mainHelp: String { """
OVERVIEW: sfx — low-latency sound effects and alerts for Linux

USAGE: sfx <subcommand> [options]

SUBCOMMANDS:
\(commands.map { Help.row("  " + $0.spec.name, $0.spec.abstract, column: 16) }.joined(separator: "").dropLast())

OPTIONS:
  --version     Show the version.
  -h, --help    Show help information.

  See 'sfx <subcommand> --help' for the subcommand's options and examples.

EXAMPLES:
  sfx play bell
  sfx alert dialog-warning
  sfx render tock bell -o out.ogg --at 0 --at 0.25
""" }

protocol Subcommand {
    static var spec: CommandSpec { get }
    /// Runs with arguments already checked against `spec`; returns the exit status.
    static func run(_ arguments: ParsedArguments) throws -> Int32
}

/// A failure that is not the user's typing: printed as `sfx: <message>`, exit status 1.
struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}

/// Edits (insert, delete, replace, or swap two neighbours) that turn `a` into `b`.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
    var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
    for i in 0...a.count { d[i][0] = i }
    for j in 0...b.count { d[0][j] = j }
    for i in 1...a.count {
        for j in 1...b.count {
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
        }
    }
    return d[a.count][b.count]
}

/// The line for a failure, in the command line's words: where the library advises a Swift
/// caller (raise `CueLimits`, use a `Player`), say what to type instead.
func commandLineMessage(_ error: any Error) -> String {
    var media = error as? MediaError
    if case .media(let wrapped)? = error as? SoundError { media = wrapped }
    guard let media else { return String(describing: error) }
    let subject = media.subject
    let instead: String
    if subject.hasPrefix("/proc/self/fd/") {
        instead = "save it to a file and `sfx play` that alone, which streams it"
    } else if RawInput.extensions.contains(URL(filePath: subject).pathExtension.lowercased()) {
        instead = "raw PCM is played whole: convert it to a sound file (sox can) and `sfx play` that alone, which streams it"
    } else {
        instead = "`sfx play \(subject)` alone streams it"
    }
    switch media.reason {
    case .tooLong(let seconds, let limit):
        let (length, most) = MediaError.distinct(seconds, limit)
        return "\(subject): is \(length) s long, over the \(most) s a sound held in memory may last; \(instead)"
    case .tooLarge:
        return media.description.replacing("shorten it, or raise CueLimits.maximumBytes", with: "shorten it, or \(instead)")
    default:
        return media.description
    }
}

func printError(_ message: String) {
    writeToStandardError("sfx: \(message)\n")
}

@MainActor
func runMain(_ argv: [String]) -> Int32 {
    guard let first = argv.first else {
        writeToStandardError(mainHelp + "\n")
        return 64
    }
    switch first {
    case "--help", "-h", "help":
        if first == "help", argv.count > 1, let command = commands.first(where: { $0.spec.name == argv[1] }) {
            print(command.spec.help)
        } else {
            print(mainHelp)
        }
        return 0
    case "--version":
        print("sfx \(version)")
        return 0
    default:
        break
    }
    guard let command = commands.first(where: { $0.spec.name == first }) else {
        let names = commands.map { $0.spec.name }
        let near = names.filter { editDistance($0, first) <= ($0.count > 4 ? 2 : 1) }.min { editDistance($0, first) < editDistance($1, first) }
        printError("unknown subcommand '\(first)'" + (near.map { "; did you mean '\($0)'?" } ?? ";") + " see 'sfx --help'")
        return 64
    }
    do {
        let arguments = try ParsedArguments(Array(argv.dropFirst()), spec: command.spec)
        if arguments.helpRequested {
            print(command.spec.help)
            return 0
        }
        return try SettingFlags.mapping(arguments) { try command.run(arguments) }
    } catch let error as UsageError {
        printError(error.message)
        if let spec = error.command { writeToStandardError("usage: \(spec.usageLine)\n  see 'sfx \(spec.name) --help'\n") }
        return 64
    } catch {
        printError(StandardInputAudio.named(commandLineMessage(error)))
        return 1
    }
}

exit(runMain(Array(CommandLine.arguments.dropFirst())))
