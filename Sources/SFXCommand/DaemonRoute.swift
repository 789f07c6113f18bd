import FoundationEssentials
import Glibc
import SFX
import SFXDaemon

/// `--daemon`, `--no-daemon` and `--socket`: whether a command goes through `sfx serve`.
///
/// By default a command uses the daemon when one answers at `$XDG_RUNTIME_DIR/sfx/sfx.sock`
/// (or `$SFX_SOCKET`, or --socket) and runs in-process otherwise, also when the daemon goes
/// away before it replies. `--daemon` fails rather than run in-process; `--no-daemon` never
/// asks the daemon.
enum DaemonRoute {
    static let daemon = OptionSpec.flag("daemon", help: "Go through the daemon (`sfx serve`); fail if none answers.")
    static let noDaemon = OptionSpec.flag("no-daemon", help: "Run in this process even when a daemon answers.")
    static let socket = OptionSpec.option("socket", value: "PATH", help: "The daemon's socket (default $XDG_RUNTIME_DIR/sfx/sfx.sock).")

    static let specs = [daemon, noDaemon, socket]
    /// Set by the `sfx` front when it found no daemon: do not ask again.
    static let triedKey = "SFX_DAEMON_TRIED"
    /// Set by the front beside `triedKey`: why the daemon did not play (one line).
    static let whyKey = "SFX_DAEMON_WHY"
    /// Why the last `client` or `send` returned nil (for -v: "in-process: …").
    nonisolated(unsafe) static var inProcessReason = "no daemon was asked"
    /// Whether something listens at the socket but did not answer in time (a full backlog, or no
    /// reply): a daemon stuck or flooded, not an absent one.
    nonisolated(unsafe) static var unanswered = false

    /// A connection to the daemon, or nil to run in-process. `usable` false (options the daemon
    /// cannot honour, such as another device) means in-process, and a usage error with --daemon.
    static func client(_ arguments: ParsedArguments, usable: Bool = true, why: String = "") throws -> DaemonClient? {
        let forced = arguments.flag(daemon)
        if forced, arguments.flag(noDaemon) {
            throw UsageError(message: "give --daemon or --no-daemon, not both", command: arguments.spec)
        }
        if arguments.flag(noDaemon) {
            inProcessReason = "--no-daemon"
            return nil
        }
        guard usable else {
            if forced { throw UsageError(message: "the daemon cannot \(why); drop it or use --no-daemon", command: arguments.spec) }
            inProcessReason = "the daemon cannot \(why)"
            return nil
        }
        let environment = ProcessInfo.processInfo.environment
        if !forced, environment[triedKey] == "1", arguments.value(socket) == nil {
            inProcessReason = environment[whyKey] ?? "the daemon did not answer the sfx front"
            return nil
        }
        do {
            return try DaemonClient.connect(path: arguments.value(socket))
        } catch {
            if forced { throw Failure(error.description) }
            inProcessReason = error.description
            if case .unreachable(_, let code) = error, code == EAGAIN || code == ETIMEDOUT { unanswered = true }
            return nil
        }
    }

    /// Sends a request; nil when the daemon went away before replying (then run in-process,
    /// unless --daemon). An error reply throws its line.
    static func send(_ client: DaemonClient, _ kind: RequestKind, _ fields: Fields, file: Int32? = nil,
                     forced: Bool) throws -> DaemonClient.Reply? {
        let reply: DaemonClient.Reply
        do {
            reply = try client.request(kind, fields, file: file)
        } catch {
            // A load has no in-process equivalent: a busy daemon is its answer.
            if forced || kind == .load, case .busy = error { throw Failure(error.description) }
            if forced { throw Failure(error.description) }
            inProcessReason = "\(error.description) (at \(client.path))"
            unanswered = true
            return nil
        }
        if reply.kind == .error { throw Failure(reply.text) }
        return reply
    }

    /// The fields naming a sound for play and alert, and the descriptor to pass for a file
    /// (opened here, as the user; the daemon reads through it and opens nothing itself).
    static func sound(_ sound: SoundArgument) throws -> (Fields, Int32?) {
        switch sound {
        case .system(let name):
            return (Fields(["name": name]), nil)
        case .file(let path):
            let fd = path.withCString { open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
            guard fd >= 0 else { throw Failure("\(path): cannot be opened (\(String(cString: strerror(errno)))); check the name and its permissions") }
            return (Fields(["file": "1", "label": path.description]), fd)
        case .standardInput:
            let path = try StandardInputAudio.shared.path()
            let fd = path.withCString { open($0, O_RDONLY | O_CLOEXEC) }
            guard fd >= 0 else { throw Failure("standard input: cannot be passed to the daemon (\(String(cString: strerror(errno)))); add --no-daemon") }
            return (Fields(["file": "1", "label": "standard input (-)"]), fd)
        }
    }
}

/// The daemon paths of the commands that try it first, one function each, beside their
/// in-process `run`.
extension PlayCommand {
    /// Plays through the daemon: 0 once every sound is accepted; nil to play in-process.
    static func playThroughDaemon(_ arguments: ParsedArguments, sounds: [SoundArgument], volume: Float, pan: Float, loops: Int,
                                  position: Vector3? = nil, filter: FilterSettings? = nil, reverb: String? = nil) throws -> Int32? {
        let custom = OutputOptions.specs.filter { $0.name != "quiet" && $0.name != "verbose" }.contains { arguments.flag($0) || arguments.value($0) != nil }
            || arguments.flag(normalize) || arguments.value(normalizeTo.spec) != nil
            || PlayerPlayback.specs.contains { arguments.flag($0) || arguments.value($0) != nil }
        guard let client = try DaemonRoute.client(arguments, usable: !custom,
                                                  why: "change the device, period, normalisation, speed, start or ending") else { return nil }
        let forced = arguments.flag(DaemonRoute.daemon)
        let verbose = arguments.flag(OutputOptions.verbose)
        // The daemon's engine chose its HRTF when it started (`sfx serve --hrtf`): ask which.
        if arguments.flag(WorldOptions.hrtf) {
            guard let reply = try DaemonRoute.send(client, .status, Fields(), forced: forced) else { return nil }
            let hrtf = (try? JSONDecoder().decode(DaemonStatus.self, from: Data(reply.payload)))?.hrtf ?? "off"
            if hrtf.hasPrefix("off") {
                let why = "render through an HRTF set (it was started without sfx serve --hrtf)"
                if forced { throw UsageError(message: "the daemon cannot \(why); drop --hrtf or use --no-daemon", command: arguments.spec) }
                DaemonRoute.inProcessReason = "the daemon cannot \(why)"
                return nil
            }
        }
        // The reverb goes on the daemon's bus first, so the plays' sends find it there.
        if let reverb {
            let fields = Fields(["bus": "\(WorldOptions.reverbBus)", "effect": "reverb", "preset": reverb])
            guard try DaemonRoute.send(client, .effect, fields, forced: forced) != nil else { return nil }
        }
        var voices: [String] = []
        for (index, sound) in sounds.enumerated() {
            var (fields, file) = try DaemonRoute.sound(sound)
            defer { if let file { close(file) } }
            fields["volume"] = "\(volume)"
            fields["pan"] = "\(pan)"
            fields["loops"] = "\(loops)"
            if let position { fields["position"] = WorldFields.text(of: position) }
            for (key, value) in WorldFields.fields(of: filter) { fields[key] = value }
            if reverb != nil {
                fields["send"] = "\(WorldOptions.reverbSend)"
                fields["bus"] = "\(WorldOptions.reverbBus)"
            }
            guard let reply = try DaemonRoute.send(client, .play, fields, file: file, forced: forced) else {
                if index == 0 { return nil }
                throw Failure("the daemon went away after playing \(index) of \(sounds.count) sounds; see `sfx status`")
            }
            let label = switch sound {
            case .system(let name): name
            case .file(let path): path.description
            case .standardInput: "standard input"
            }
            voices.append("\(label) as voice \(reply.fields["id"] ?? "?")")
        }
        if verbose {
            // The daemon's view: its device and setup, as `sfx status` shows them.
            print("sfx: via the daemon at \(client.path): played \(voices.joined(separator: ", "))")
            if let reply = try? client.request(.status), reply.kind == .ok,
               let status = try? JSONDecoder().decode(DaemonStatus.self, from: Data(reply.payload)) {
                print("sfx: the daemon's \(status.setupLine)")
            }
        }
        return 0
    }
}

extension AlertCommand {
    /// An alert through the daemon (whose vibrator and settings decide): the exit status, or nil
    /// to alert in-process.
    static func alertThroughDaemon(_ arguments: ParsedArguments, sound: SoundArgument) throws -> Int32? {
        let custom = (HapticOptions.options + [vibrate]).contains { arguments.value($0) != nil }
            || OutputOptions.specs.filter { $0.name != "quiet" }.contains { arguments.flag($0) || arguments.value($0) != nil }
        guard let client = try DaemonRoute.client(arguments, usable: !custom,
                                                  why: "take --vibrate, haptic or output options (it uses its own settings)") else { return nil }
        var (fields, file) = try DaemonRoute.sound(sound)
        defer { if let file { close(file) } }
        if let volume = try Volume.factor(arguments) { fields["volume"] = "\(volume)" }
        guard let reply = try DaemonRoute.send(client, .alert, fields, file: file, forced: arguments.flag(DaemonRoute.daemon)) else { return nil }
        print(reply.fields["result"] ?? "")
        // As in-process: an alert not heard gives its caption, for whoever cannot hear it.
        if reply.fields["played"] != "true", let notice = reply.fields["notice"] { print("caption: \(notice)") }
        return reply.fields["noticed"] == "true" ? 0 : 1
    }
}

extension VibrateCommand {
    /// A vibration through the daemon's vibrator: 0 once started, or nil to vibrate in-process.
    static func vibrateThroughDaemon(_ arguments: ParsedArguments) throws -> Int32? {
        let custom = HapticOptions.options.contains { arguments.value($0) != nil }
        guard let client = try DaemonRoute.client(arguments, usable: !custom, why: "take haptic options (it uses its own settings)") else { return nil }
        var fields = Fields()
        fields["effect"] = arguments.value(effect)
        fields["pattern"] = arguments.value(pattern)
        fields["amplitude"] = arguments.value(amplitude)
        fields["repeat"] = arguments.value(repeatIndex.spec)
        guard try DaemonRoute.send(client, .vibrate, fields, forced: arguments.flag(DaemonRoute.daemon)) != nil else { return nil }
        return 0
    }
}
