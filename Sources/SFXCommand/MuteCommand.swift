import Foundation
import Glibc
import SFX
import SFXDevice

enum MuteCommand: Subcommand {
    static let spec = CommandSpec(
        name: "mute", abstract: "Set or show sfx's mute flag (alerts vibrate instead while it is on).",
        discussion: """
        The flag lives in $XDG_STATE_HOME/sfx/muted (default ~/.local/state/sfx/muted), shared by \
        the command and the library. `status` also shows the output's mixer (Master or PCM \
        switch and volume) and exits 0 when sfx counts the output as muted (the flag on, the \
        switch off or the volume at zero) and 1 when not, so a script can test it as it tests \
        `systemctl is-active`; on, off and toggle exit 0 once done. A usage error exits 64.
        """,
        examples: ["sfx mute on", "sfx mute toggle", "if sfx mute status -q; then echo muted; fi", "sfx mute status --json"],
        positionals: [PositionalSpec(name: "on|off|toggle|status", help: "What to do (default: status).", min: 0, max: 1)],
        options: [device, json, quiet] + DaemonRoute.specs)

    static let device = OptionSpec.option("device", short: "D", value: "PCM", help: "Also show this output's mixer (default: the settings file, else default).")
    static let json = OptionSpec.flag("json", help: "Print the state as JSON: muted, flag, device, mixer (absent when the output has none).")
    static let quiet = OptionSpec.flag("quiet", short: "q", help: "Print nothing; the exit status tells (status: 0 muted, 1 not).")

    /// What `--json` prints.
    struct State: Encodable {
        /// The flag is on, or the output's mixer is switched off or at zero volume.
        let muted: Bool
        let flag: Bool
        let device: String
        /// nil when the device has no Master or PCM control.
        let mixer: MasterState?
        let mixerMuted: Bool?
    }

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let flag = MuteFlag.user()
        let action = arguments.positionals.first ?? "status"
        let setByDaemon = try setThroughDaemon(action, arguments)
        switch action {
        case _ where setByDaemon: break
        case "on": try flag.set(true)
        case "off": try flag.set(false)
        case "toggle": try flag.toggle()
        case "status": break
        case let other:
            throw UsageError(message: "unknown action '\(other)': expected on, off, toggle or status", command: spec)
        }
        let quiet = arguments.flag(Self.quiet)
        let device = try arguments.value(Self.device) ?? CommandSettings.load(quiet: quiet).device ?? "default"
        let master = try? MixerControl(device: device).read()
        let state = State(muted: flag.isMuted || master?.isMuted == true, flag: flag.isMuted, device: device,
                          mixer: master, mixerMuted: master?.isMuted)
        if arguments.flag(Self.json) {
            if !quiet { try printJSON(state) }
        } else if !quiet {
            print("sfx mute flag: \(state.flag ? "on" : "off")")
            if let master {
                let volume = master.volume.map { "\(Int(($0 * 100).rounded())) %" } ?? "no volume"
                let switchText = master.switchOn.map { $0 ? "on" : "off" } ?? "no switch"
                print("output mixer (\(device)): \(master.control) \(switchText), \(volume)\(master.isMuted ? " — muted" : "")")
            } else {
                print("output mixer (\(device)): none — the device has no Master or PCM control; only sfx's flag counts")
            }
        }
        guard action == "status" else { return 0 }
        return state.muted ? 0 : 1
    }
}
