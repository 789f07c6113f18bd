import Foundation
import Glibc
import SFX

enum MuteCommand: Subcommand {
    static let spec = CommandSpec(
        name: "mute", abstract: "Set or show sfx's mute flag (alerts vibrate instead while it is on).",
        discussion: "The flag lives in $XDG_STATE_HOME/sfx/muted (default ~/.local/state/sfx/muted), shared by the command, the library and the daemon.",
        positionals: [PositionalSpec(name: "on|off|toggle|status", help: "What to do (default: status).", min: 0, max: 1)],
        options: [.option("device", short: "D", value: "PCM", help: "Also show this output's mixer (default: default).")])

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let flag = MuteFlag.user()
        switch arguments.positionals.first ?? "status" {
        case "on": try flag.set(true)
        case "off": try flag.set(false)
        case "toggle": try flag.toggle()
        case "status": break
        case let other:
            throw UsageError(message: "unknown action '\(other)': expected on, off, toggle or status", command: spec)
        }
        print("sfx mute flag: \(flag.isMuted ? "on" : "off")")
        let device = try arguments.value("device") ?? UserSettings.load().device ?? "default"
        do {
            let master = try MixerControl(device: device).read()
            let volume = master.volume.map { "\(Int(($0 * 100).rounded())) %" } ?? "no volume"
            let switchText = master.switchOn.map { $0 ? "on" : "off" } ?? "no switch"
            print("output mixer (\(device)): \(master.control) \(switchText), \(volume)\(master.isMuted ? " — muted" : "")")
        } catch {
            print("output mixer (\(device)): unavailable — \(error)")
        }
        return 0
    }
}
