import FoundationEssentials
import SFXSystem
import Glibc
import SFX
import SFXDaemon

enum AlertCommand: Subcommand {
    static let spec = CommandSpec(
        name: "alert", abstract: "Play an alert sound; vibrate instead when the output is muted.",
        discussion: """
        Muted means sfx's mute flag (`sfx mute`), the output's Master switch off or volume at \
        zero, through a sound server the sink or sfx's stream muted or at zero volume, or no \
        usable output: what `sfx mute status` reports. `vibrate-with-alert` in ~/.config/sfx/sfx.conf (never, \
        when-muted, always) decides when it vibrates. Prints what happened; exits 1 when it \
        could neither play nor vibrate. --follow plays nothing: it prints every alert the daemon \
        makes, from any client, as a `caption:` line with what reached the person, until \
        interrupted (a caption bar, a notifier).
        """,
        examples: ["sfx alert bell", "sfx alert dialog-warning --vibrate always --command /usr/local/bin/buzz",
                   "sfx alert --follow"],
        positionals: [PositionalSpec(name: "NAME|FILE", help: "A system sound name or a sound file (see `sfx play --help`).", min: 0, max: 1)],
        options: [SoundArgument.idOption, SoundArgument.fileOption, Volume.option, Volume.decibelOption,
                  vibrate, follow]
            + HapticOptions.options + OutputOptions.specs + DaemonRoute.specs)

    static let vibrate = OptionSpec.option("vibrate", value: "WHEN", help: "never, when-muted or always (default: the settings file, else when-muted).")
    static let follow = OptionSpec.flag("follow", help: "Play nothing: print every alert the daemon makes, from any client (caption: WORDS [SOUND: heard,felt,flashed|none]), until interrupted.")

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        if arguments.flag(follow) { return try followDaemon(arguments) }
        let sounds = try SoundArgument.all(in: arguments)
        guard sounds.count == 1 else {
            throw UsageError(message: "an alert plays one sound; \(sounds.count) were given", command: spec)
        }
        if let status = try alertThroughDaemon(arguments, sound: sounds[0]) { return status }
        let options = try OutputOptions(arguments)
        var settings = try CommandSettings.load(needing: UserSettings.alertKeys, quiet: options.quiet)
        try HapticOptions.apply(arguments, to: &settings)
        if let when = arguments.value(vibrate) {
            guard let mode = AlertVibration(rawValue: when) else {
                throw UsageError(message: "invalid value '\(when)' for '--vibrate': expected never, when-muted or always", command: spec)
            }
            settings.alertVibration = mode
        }
        try HapticOptions.checkCommand(settings)
        let volume = try Volume.factor(arguments) ?? 1
        try SoundArgument.checkFilesExist(sounds)
        let session = try EngineSession(options, settings: settings, deferStart: true, preload: sounds.compactMap(\.systemName), deferNotice: true)
        let sound = try sounds[0].load(into: session.engine.library)
        session.announce()
        let interruption = VibrationInterruption { try? session.engine.stopAll(fade: .milliseconds(30)) }
        let result = session.engine.alert(sound, volume: volume, name: sounds[0].systemName)
        if result.vibrated { session.engine.waitForVibration() }
        session.finish(played: result.played)
        if let status = interruption.exitStatus() { return status }
        print(result)
        if !result.played, let notice = result.notice { print("caption: \(notice)") }
        return result.wasNoticed ? 0 : 1
    }
}

extension AlertCommand {
    /// `--follow`: subscribes to the daemon's alert notices and prints each as a `caption:` line,
    /// until interrupted (SIGINT or SIGTERM end it) or the daemon goes away (exit 1).
    static func followDaemon(_ arguments: ParsedArguments) throws -> Int32 {
        if !arguments.positionals.isEmpty || arguments.value(SoundArgument.idOption) != nil || arguments.value(SoundArgument.fileOption) != nil {
            throw UsageError(message: "--follow prints the daemon's alerts and plays none: give it no sound", command: spec)
        }
        let playing = [Volume.option, Volume.decibelOption, vibrate, DaemonRoute.noDaemon] + HapticOptions.options
            + OutputOptions.specs.filter { $0.name != "quiet" && $0.name != "verbose" }
        if let given = playing.first(where: { arguments.flag($0) || arguments.value($0) != nil }) {
            throw UsageError(message: "--follow reads the daemon's alerts: --\(given.name) has no part in it; drop it", command: spec)
        }
        let client: DaemonClient
        do {
            client = try DaemonClient.connect(path: arguments.value(DaemonRoute.socket))
        } catch {
            if case .unreachable(let path, let code) = error, code == ENOENT || code == ECONNREFUSED {
                throw Failure("no sfx daemon at \(path): start one with sfx serve")
            }
            throw Failure(error.description)
        }
        do {
            let reply = try client.subscribeToNotices()
            if reply.kind == .error { throw Failure(reply.text) }
            if arguments.flag(OutputOptions.verbose) {
                writeToStandardError("sfx: following the alerts of the daemon at \(client.path)\n")
            }
            while true {
                let notice = try client.nextNotice()
                // Written at once, line by line: a caption bar reads it through a pipe.
                writeToStandardOutput("caption: \(notice.line)\n")
            }
        } catch let error as DaemonClient.Failure {
            switch error {
            case .noReply(let code):
                throw Failure("the daemon at \(client.path) went away (\(String(cString: strerror(code)))); start it again with sfx serve")
            case .busy(let line):
                // Its line names the limit and the option that raises it; there is no in-process way.
                throw Failure(line)
            default:
                throw Failure(error.description)
            }
        }
    }
}
