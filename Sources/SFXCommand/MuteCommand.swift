import FoundationEssentials
import Glibc
import SFX
import SFXDaemon
import SFXDevice

enum MuteCommand: Subcommand {
    static let spec = CommandSpec(
        name: "mute", abstract: "Set or show sfx's mute flag (alerts vibrate instead while it is on).",
        discussion: """
        The flag lives in $XDG_STATE_HOME/sfx/muted (default ~/.local/state/sfx/muted), shared by \
        the command and the library. `status` reads the output `sfx alert` would play to (the \
        daemon's when one answers, else the device given, else a running sound server or sfx's \
        virtual card on a machine with no sound card) by the rule `sfx alert` follows: the flag \
        on, the output's Master or PCM switch off or volume at zero, or, through a sound server, \
        the sink or sfx's stream muted or at zero volume. It prints the reasons in `sfx alert`'s \
        words and exits 0 when muted, 1 when not, so a script can test it as it tests \
        `systemctl is-active`; on, off and toggle exit 0 once done. A usage error exits 64.
        """,
        examples: ["sfx mute on", "sfx mute toggle", "if sfx mute status -q; then echo muted; fi", "sfx mute status --json"],
        positionals: [PositionalSpec(name: "on|off|toggle|status", help: "What to do (default: status).", min: 0, max: 1)],
        options: [device, json, quiet] + DaemonRoute.specs)

    static let device = OptionSpec.option("device", short: "D", value: "PCM", help: "Read this output instead of the one `sfx alert` uses (default: the settings file, else default).")
    static let json = OptionSpec.flag("json", help: "Print the state as JSON: muted, reasons, flag, device, mixer (absent when the output has none), server.")
    static let quiet = OptionSpec.flag("quiet", short: "q", help: "Print nothing; the exit status tells (status: 0 muted, 1 not).")

    /// What `--json` prints.
    struct State: Encodable {
        /// Whether `sfx alert` counts the output as muted now.
        let muted: Bool
        /// Why, each in `sfx alert`'s words; empty when not muted.
        let reasons: [String]
        let flag: Bool
        let device: String
        /// nil when the device has no Master or PCM control (or a sound server decides).
        let mixer: MasterState?
        let mixerMuted: Bool?
        /// The sound server read, when the output goes to one ("PulseAudio (on PipeWire 0.3.65)").
        let server: String?
        /// Whether the daemon (`sfx serve`) answered: then it is its output that was read.
        let daemon: Bool
    }

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let flag = MuteFlag.user()
        let action = arguments.positionals.first ?? "status"
        guard ["on", "off", "toggle", "status"].contains(action) else {
            throw UsageError(message: "unknown action '\(action)': expected on, off, toggle or status", command: spec)
        }
        let quiet = arguments.flag(Self.quiet)
        let state: State
        if let reply = try throughDaemon(action, arguments) {
            state = State(daemonReply: reply)
        } else {
            switch action {
            case "on": try flag.set(true)
            case "off": try flag.set(false)
            case "toggle": try flag.toggle()
            default: break
            }
            let settings = try CommandSettings.load(quiet: quiet)
            // When the alert's output cannot be had (no virtual card here), the flag still counts.
            let device: String
            do {
                device = try EngineSession.output(device: arguments.value(Self.device), settings: settings, keepRecordings: true).device
            } catch {
                if !quiet, action == "status" { printError("\(error); only sfx's flag and default's mixer are read") }
                device = settings.device ?? "default"
            }
            state = State(MuteState.reading(output: device, flag: flag, outputOpen: false), flag: flag.isMuted)
        }
        if arguments.flag(Self.json) {
            if !quiet { try printJSON(state) }
        } else if !quiet {
            print("sfx mute flag: \(state.flag ? "on" : "off")")
            if state.daemon { print("output: \(state.device), the daemon's (`sfx serve`)") }
            if let master = state.mixer {
                let volume = master.volume.map { "\(Int(($0 * 100).rounded())) %" } ?? "no volume"
                let switchText = master.switchOn.map { $0 ? "on" : "off" } ?? "no switch"
                print("output mixer (\(state.device)): \(master.control) \(switchText), \(volume)\(master.isMuted ? " — muted" : "")")
            } else if let server = state.server {
                print("output (\(state.device)): the sound server \(server)")
            } else if !state.daemon {
                print("output mixer (\(state.device)): none — the device has no Master or PCM control; only sfx's flag counts")
            }
            print(state.muted ? "muted: " + state.reasons.joined(separator: "; ") : "not muted")
        }
        guard action == "status" else { return 0 }
        return state.muted ? 0 : 1
    }

    /// Sets or reads the flag and the state through the daemon, whose engine decides what its
    /// alerts do, when one answers and no other device is asked for; nil otherwise (then this
    /// process does it).
    static func throughDaemon(_ action: String, _ arguments: ParsedArguments) throws -> Fields? {
        guard let client = try DaemonRoute.client(arguments, usable: arguments.value(Self.device) == nil,
                                                  why: "read another device's mixer (--device)") else { return nil }
        return try DaemonRoute.send(client, .mute, Fields(["action": action]), forced: arguments.flag(DaemonRoute.daemon))?.fields
    }
}

extension MuteCommand.State {
    init(_ mute: MuteState, flag: Bool) {
        self.init(muted: mute.isMuted, reasons: mute.reasons.map(\.description), flag: flag, device: mute.device,
                  mixer: mute.master, mixerMuted: mute.master?.isMuted, server: mute.server?.serverName, daemon: false)
    }

    /// The daemon's reply to a mute request (`DaemonService`).
    init(daemonReply fields: Fields) {
        let mixer = fields["mixer"].flatMap { try? JSONDecoder().decode(MasterState.self, from: Data($0.utf8)) }
        self.init(muted: fields["muted"] == "true",
                  reasons: (fields["reasons"] ?? "").split(separator: "\t").map(String.init),
                  flag: fields["flag"] == "on", device: fields["device"] ?? "the daemon's",
                  mixer: mixer, mixerMuted: mixer?.isMuted, server: fields["server"], daemon: true)
    }
}
