import Dispatch
import FoundationEssentials
import Glibc
import SFX
import SFXDaemon

enum ServeCommand: Subcommand {
    static let spec = CommandSpec(
        name: "serve", abstract: "Run the daemon: an engine kept open, sounds preloaded, for every sfx command.",
        discussion: """
        Listens on $XDG_RUNTIME_DIR/sfx/sfx.sock (directory 0700, socket 0600); `sfx play`, \
        alert, vibrate, stop, mute, load and status use it when it answers. System sounds and \
        the custom sounds of ~/.config/sfx/serve.conf ([sounds] name = file) are preloaded; \
        SIGHUP reads that file again; SIGTERM or Ctrl-C lets the sounds playing end and exits 0, \
        removing the socket. --system is for kiosks: a socket path of your choice, 0660 and \
        owned by --group, whose members may use it. Under systemd it takes the socket it is \
        passed (socket activation).
        """,
        examples: ["sfx serve", "sfx serve --system --socket /run/sfx/sfx.sock --group audio", "systemctl --user enable --now sfx"],
        positionals: [],
        options: [socket, system, group, config, bank, noWatch, idle.spec, hrtf] + limitOptions.map(\.spec) + OutputOptions.specs)

    static let socket = OptionSpec.option("socket", value: "PATH", help: "Listen here (default $XDG_RUNTIME_DIR/sfx/sfx.sock; with --system, /run/sfx/sfx.sock).")
    static let system = OptionSpec.flag("system", help: "System mode for kiosks: --socket anywhere, shared with --group.")
    static let group = OptionSpec.option("group", value: "NAME", help: "With --system: members of this group may use the daemon (socket 0660).")
    static let idle = IntegerOption(spec: .option("idle-timeout", value: "MS", help: "Close the device after this much silence, 0 to keep it open (default 100): the next sound reopens it and is in its first period, with no buffer of silence ahead."), range: 0...86_400_000)
    static let bank = OptionSpec.option("bank", value: "FILE", repeatable: true, help: "Load this sound bank (docs/banks.md; repeatable): clients play its events by name, and edits to it or its sounds are reloaded.")
    static let noWatch = OptionSpec.flag("no-watch", help: "Do not reload --bank files when they change on disk.")
    static let hrtf = OptionSpec.flag("hrtf", help: "Render clients' positional plays (position=) through the default HRTF set, for headphones.")
    static let config = OptionSpec.option("config", value: "FILE", help: "The sounds to preload (default $XDG_CONFIG_HOME/sfx/serve.conf).")
    static let maxConnections = IntegerOption(spec: .option("max-connections", value: "N", help: "Connections open at once (default \(DaemonLimits.defaultConnections)); at the limit the longest-idle one is closed."), range: 1...65_536)
    static let maxConnectionsPerUser = IntegerOption(spec: .option("max-connections-per-user", value: "N", help: "Connections one uid may hold open (default \(DaemonLimits.defaultConnectionsPerUser))."), range: 1...65_536)
    static let clientIdleTimeout = IntegerOption(spec: .option("client-idle-timeout", value: "S", help: "Close a connection idle this many seconds, 0 never (default \(Int(DaemonLimits.defaultIdleTimeoutSeconds)))."), range: 0...86_400)
    static let maxSounds = IntegerOption(spec: .option("max-sounds", value: "N", help: "Sounds clients may load, in all (default \(DaemonLimits.defaultSounds))."), range: 0...1_000_000)
    static let maxSoundsPerClient = IntegerOption(spec: .option("max-sounds-per-client", value: "N", help: "Sounds one uid may load (default \(DaemonLimits.defaultSoundsPerClient))."), range: 0...1_000_000)
    static let maxSoundMemory = IntegerOption(spec: .option("max-sound-memory", value: "MB", help: "Decoded memory of clients' sounds, in all (default \(DaemonLimits.defaultSoundBytes >> 20))."), range: 1...1_048_576)
    static let maxSoundMemoryPerClient = IntegerOption(spec: .option("max-sound-memory-per-client", value: "MB", help: "Decoded memory of one uid's sounds (default \(DaemonLimits.defaultSoundBytesPerClient >> 20))."), range: 1...1_048_576)
    static let limitOptions = [maxConnections, maxConnectionsPerUser, clientIdleTimeout, maxSounds, maxSoundsPerClient, maxSoundMemory, maxSoundMemoryPerClient]

    /// The daemon's limits: the defaults, changed by the options given.
    static func limits(_ arguments: ParsedArguments) throws -> DaemonLimits {
        var limits = DaemonLimits()
        if let n = try maxConnections.read(arguments) { limits.connections = n }
        if let n = try maxConnectionsPerUser.read(arguments) { limits.connectionsPerUser = n }
        if let n = try clientIdleTimeout.read(arguments) { limits.idleTimeoutSeconds = Double(n) }
        if let n = try maxSounds.read(arguments) { limits.sounds = n }
        if let n = try maxSoundsPerClient.read(arguments) { limits.soundsPerClient = n }
        if let n = try maxSoundMemory.read(arguments) { limits.soundBytes = n << 20 }
        if let n = try maxSoundMemoryPerClient.read(arguments) { limits.soundBytesPerClient = n << 20 }
        return limits
    }

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let options = try OutputOptions(arguments)
        let environment = ProcessInfo.processInfo.environment
        let groupID = try arguments.value(group).map { try lookUpGroup($0) }
        let limits = try limits(arguments)
        if groupID != nil, !arguments.flag(system) {
            throw UsageError(message: "--group is for --system; a user's daemon serves that user alone", command: spec)
        }
        // Signals are taken by the loop's queue, not the default action: block them first, so
        // that the engine's threads (started next) inherit the mask.
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in [SIGHUP, SIGTERM, SIGINT, SIGUSR2] { sigaddset(&mask, signal) }
        pthread_sigmask(SIG_BLOCK, &mask, nil)
        // A descriptor per client: take the whole hard limit (the soft one is often 1,024).
        var files = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &files) == 0, files.rlim_cur < files.rlim_max {
            files.rlim_cur = files.rlim_max
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &files)
        }
        let listening: ListeningSocket
        do {
            if let activated = ListeningSocket.activated(environment: environment) {
                listening = activated
            } else if arguments.flag(system) {
                listening = try .system(path: arguments.value(socket) ?? "/run/sfx/sfx.sock", group: groupID)
            } else if let path = arguments.value(socket) {
                listening = try .system(path: path, group: nil)
            } else {
                listening = try .user(environment: environment)
            }
        } catch {
            throw Failure(error.description)
        }
        let settings: UserSettings
        let session: EngineSession
        do {
            settings = try CommandSettings.load(quiet: options.quiet)
            let milliseconds = try idle.read(arguments) ?? 100
            // Rewind mode where the device allows it, as for the library: a client's play is
            // heard about a millisecond after it arrives while the device keeps a deep buffer.
            // On the virtual card, a card of its own: in-process plays clear the user's card.
            session = try EngineSession(options, settings: settings,
                                        idleTimeout: milliseconds == 0 ? nil : .milliseconds(milliseconds),
                                        cardDirectory: "daemon-card", hrtf: arguments.flag(hrtf) ? .default : .off,
                                        whileNoDevice: .mix)
        } catch {
            listening.close()
            throw error
        }
        let configURL = arguments.value(config).map { URL(filePath: $0) } ?? ServeConfiguration.url(environment: environment)
        let service = DaemonService(engine: session.engine, configurationURL: configURL,
                                    hapticBackend: settings.hapticBackend?.rawValue ?? "auto", limits: limits)
        for problem in service.preload() { printError("warning: \(problem)") }
        for path in arguments.values(bank) {
            do {
                let loaded = try service.loadBank(URL(filePath: path), watch: !arguments.flag(noWatch))
                if !options.quiet { printError("bank \(loaded.name): \(loaded.eventNames.joined(separator: ", "))") }
            } catch {
                for problem in error.errors { printError("\(problem)") }
                listening.close()
                session.engine.close()
                return 65
            }
        }
        session.engine.start()
        let server = DaemonServer(socket: listening, service: service, policy: PeerPolicy(group: groupID), limits: limits)
        let signals = SignalWatch(mask: mask) { signal in
            if signal == SIGHUP {
                for problem in service.reload() { printError("warning: \(problem)") }
                if !options.quiet { printError("reloaded \(configURL.path)") }
            } else {
                server.stop()
            }
        }
        // A kiosk's daemon starts before its sound server or its USB speaker: it serves all the
        // same, says so (and when the device comes and goes), and plays once the device opens.
        session.engine.onEvent = { event in
            switch event {
            case .deviceUnavailable, .deviceLost, .deviceRestored, .bankReloaded, .bankRejected: printError("\(event)")
            default: break
            }
        }
        if !options.quiet {
            printError("serving on \(listening.path) (\(EngineSession.setup(session.engine.metrics)))")
        }
        server.run()
        signals.stop()
        // The sounds playing may end (2 s at most: a loop would never); then they fade out.
        if !session.engine.waitUntilIdle(timeout: .seconds(2)) { try? session.engine.stopAll(fade: .milliseconds(30)) }
        // Bounded: SIGTERM must end the daemon even if a completion never comes.
        _ = session.engine.waitUntilIdle(timeout: .seconds(1))
        session.engine.close()
        return 0
    }

    static func lookUpGroup(_ name: String) throws -> gid_t {
        if let number = gid_t(name) { return number }
        guard let entry = getgrnam(name) else {
            throw Failure("no group named '\(name)'; create it (groupadd \(name)) or give another --group")
        }
        return entry.pointee.gr_gid
    }
}

/// Waits for blocked signals on a thread of its own (sigwait) and hands each to `handler`;
/// SIGUSR2, sent by `stop`, ends it.
final class SignalWatch: @unchecked Sendable {
    var mask: sigset_t
    let handler: @Sendable (Int32) -> Void
    private var thread: pthread_t?

    init(mask: sigset_t, handler: @escaping @Sendable (Int32) -> Void) {
        self.mask = mask
        self.handler = handler
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        if pthread_create(&thread, nil, { raw in
            let watch = Unmanaged<SignalWatch>.fromOpaque(raw!).takeRetainedValue()
            while true {
                var signal: Int32 = 0
                guard sigwait(&watch.mask, &signal) == 0 else { continue }
                if signal == SIGUSR2 { return nil }
                watch.handler(signal)
            }
        }, context) == 0 {
            self.thread = thread
        } else {
            Unmanaged<SignalWatch>.fromOpaque(context).release()
        }
    }

    /// Ends the watching thread.
    func stop() {
        guard let thread else { return }
        pthread_kill(thread, SIGUSR2)
        pthread_join(thread, nil)
        self.thread = nil
    }
}
