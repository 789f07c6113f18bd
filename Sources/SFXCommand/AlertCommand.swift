import Foundation
import Glibc
import SFX

enum AlertCommand: Subcommand {
    static let spec = CommandSpec(
        name: "alert", abstract: "Play an alert sound; vibrate instead when the output is muted.",
        discussion: """
        Muted means sfx's mute flag (`sfx mute`), the output's Master switch off or volume at \\
        zero, or no usable output. `vibrate-with-alert` in ~/.config/sfx/sfx.conf (never, \\
        when-muted, always) decides when it vibrates. Exits 1 when it could neither play nor vibrate.
        """,
        positionals: [PositionalSpec(name: "NAME|FILE", help: "A system sound name or a sound file.", min: 1, max: 1)],
        options: [.option("volume", value: "GAIN", help: "Gain, 0 to 1 (default 1)."),
                  .option("vibrate", value: "WHEN", help: "never, when-muted or always (default: the settings file, else when-muted).")]
            + HapticOptions.options + EngineSession.options)

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        var settings = try UserSettings.load()
        try HapticOptions.apply(arguments, to: &settings)
        if let when = arguments.value("vibrate") {
            guard let mode = AlertVibration(rawValue: when) else {
                throw UsageError(message: "invalid value '\(when)' for '--vibrate': expected never, when-muted or always", command: spec)
            }
            settings.alertVibration = mode
        }
        let volume = Float(try arguments.number("volume", in: 0...1) ?? 1)
        let session = try EngineSession(arguments, settings: settings)
        let sound = try SoundArgument(arguments.positionals[0]).load(into: session.engine.library)
        let interruption = VibrationInterruption { try? session.engine.stopAll(fade: .milliseconds(30)) }
        let result = session.engine.alert(sound, volume: volume)
        if result.vibrated { session.engine.waitForVibration() }
        session.finish()
        if let status = interruption.exitStatus() { return status }
        print(result)
        return result.wasNoticed ? 0 : 1
    }
}
