import FoundationEssentials
import Glibc
import SFX
import SFXDaemon

enum StatusCommand: Subcommand {
    static let spec = CommandSpec(
        name: "status", abstract: "Show the daemon's state, or what an engine in this process would open.",
        discussion: """
        Whether the daemon runs, the device and its negotiated format, period and buffer, the \
        latency estimate, xruns, voices playing, sounds loaded, mute state and why, the haptic \
        backend, SCHED_FIFO and the daemon's uptime. With no daemon, an engine is opened here to \
        show the device it gets.
        """,
        examples: ["sfx status", "sfx status --json"],
        positionals: [],
        options: [json] + DaemonRoute.specs + OutputOptions.specs)

    static let json = OptionSpec.flag("json", help: "Print the state as one JSON object.")

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let status: DaemonStatus
        var unanswered: String?
        let client = try DaemonRoute.client(arguments)
        if let client, let reply = try DaemonRoute.send(client, .status, Fields(), forced: arguments.flag(DaemonRoute.daemon)) {
            do {
                status = try JSONDecoder().decode(DaemonStatus.self, from: Data(reply.payload))
            } catch {
                throw Failure("the daemon's status cannot be read (\(error)); the daemon and this sfx differ in version: restart it")
            }
        } else {
            // A daemon that took the connection but did not answer is running, stuck or flooded.
            if DaemonRoute.unanswered { unanswered = DaemonRoute.inProcessReason }
            let options = try OutputOptions(arguments)
            let settings = try CommandSettings.load(quiet: true)
            let session = try EngineSession(options, settings: settings)
            session.engine.start()
            // The output thread asks for SCHED_FIFO as it starts: wait a moment for the answer.
            for _ in 0..<50 where session.engine.metrics.realtimeGranted == nil { usleep(2_000) }
            // The output's latency is read once the buffer is first filled (a sound server's
            // plugin can take a while): up to half a second.
            for _ in 0..<100 where session.engine.metrics.outputLatency == nil && !session.engine.metrics.deviceLost { usleep(5_000) }
            status = DaemonStatus(engine: session.engine, daemon: false, systemSoundsLoaded: 0, customSounds: [],
                                  hapticBackend: settings.hapticBackend?.rawValue ?? "auto")
            session.finish(played: false)
        }
        if arguments.flag(json) {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(status), as: UTF8.self))
        } else if let unanswered {
            print("daemon: not answering: \(unanswered); this engine was opened in-process to look")
            print(status.text.split(separator: "\n", omittingEmptySubsequences: false).dropFirst().joined(separator: "\n"))
        } else {
            print(status.text)
        }
        return 0
    }
}
