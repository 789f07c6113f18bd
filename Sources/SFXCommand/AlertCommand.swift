import Foundation
import Glibc
import SFX

enum AlertCommand: Subcommand {
    static let spec = CommandSpec(
        name: "alert", abstract: "Play an alert sound; vibrate instead when the output is muted.",
        discussion: """
        Muted means sfx's mute flag (`sfx mute`), the output's Master switch off or volume at \
        zero, through a sound server the sink or sfx's stream muted or at zero volume, or no \
        usable output: what `sfx mute status` reports. `vibrate-with-alert` in ~/.config/sfx/sfx.conf (never, \
        when-muted, always) decides when it vibrates. Prints what happened; exits 1 when it \
        could neither play nor vibrate.
        """,
        examples: ["sfx alert bell", "sfx alert dialog-warning --vibrate always --command /usr/local/bin/buzz"],
        positionals: [PositionalSpec(name: "NAME|FILE", help: "A system sound name or a sound file (see `sfx play --help`).", min: 0, max: 1)],
        options: [SoundArgument.idOption, SoundArgument.fileOption, Volume.option, Volume.decibelOption,
                  vibrate]
            + HapticOptions.options + OutputOptions.specs + DaemonRoute.specs)

    static let vibrate = OptionSpec.option("vibrate", value: "WHEN", help: "never, when-muted or always (default: the settings file, else when-muted).")

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
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
