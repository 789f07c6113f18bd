import SFXCore
import SFXDaemon

enum StopCommand: Subcommand {
    static let spec = CommandSpec(
        name: "stop", abstract: "Stop every sound the daemon plays (fading out).",
        discussion: """
        Without a daemon nothing plays beyond the command that started it (Ctrl-C stops that \
        one), so there is nothing to stop: it says so and exits 0.
        """,
        examples: ["sfx stop", "sfx stop --fade 500"],
        positionals: [],
        options: [fade.spec, quiet] + DaemonRoute.specs)

    static let fade = IntegerOption(spec: .option("fade", value: "MS", help: "Fade out over this many milliseconds, 0 to 60000 (default 30)."), range: SettingLimits.fadeMilliseconds)
    static let quiet = OptionSpec.flag("quiet", short: "q", help: "Print nothing.")

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let milliseconds = try fade.read(arguments) ?? 30
        if let client = try DaemonRoute.client(arguments),
           try DaemonRoute.send(client, .stop, Fields(["fade": "\(milliseconds)"]), forced: arguments.flag(DaemonRoute.daemon)) != nil {
            return 0
        }
        if !arguments.flag(quiet) { print("sfx: no daemon answers, so nothing plays beyond the commands that started it; nothing to stop") }
        return 0
    }
}
