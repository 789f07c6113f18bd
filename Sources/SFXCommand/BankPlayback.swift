import FoundationEssentials
import Glibc
import SFX

/// `sfx play --bank FILE EVENT …`: plays a bank's events in this process (no daemon), each
/// with its variations, then waits for them to end.
enum BankPlayback {
    static let bank = OptionSpec.option("bank", value: "FILE", help: "Play the named events of this sound bank (docs/banks.md) in this process, not sounds.")

    static func run(_ path: String, _ arguments: ParsedArguments) throws -> Int32 {
        let names = arguments.positionals
        guard !names.isEmpty else {
            throw UsageError(message: "--bank plays events by name: give one or more, such as 'sfx play --bank game.json step'", command: PlayCommand.spec)
        }
        let volume = try Volume.factor(arguments) ?? 1
        let position = try WorldOptions.position(arguments)
        let options = try OutputOptions(arguments)
        let settings = try CommandSettings.load(quiet: options.quiet)
        let session = try EngineSession(options, settings: settings, deferStart: true, plays: names.count + 2,
                                        preload: [], deferNotice: true, hrtf: .off)
        let loaded: SoundBank
        do {
            loaded = try session.engine.loadBank(URL(filePath: path), watch: false)
        } catch {
            for problem in error.errors { printError("\(problem)") }
            session.engine.close()
            return 65
        }
        for name in names where loaded.event(named: name) == nil {
            session.engine.close()
            throw Failure("\(path): no event \"\(name)\"; its events are \(loaded.eventNames.joined(separator: ", "))")
        }
        session.announce()
        let interrupted = Interruption()
        interrupted.onInterrupt { try? session.engine.stopAll(fade: .milliseconds(30)) }
        if !interrupted.happened {
            for name in names { session.engine.play(event: name, in: loaded, at: position, volume: volume) }
        }
        session.finish(tail: 0, interrupted: interrupted)
        return interrupted.happened ? 130 : 0
    }
}
