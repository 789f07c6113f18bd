import FoundationEssentials
import Glibc
import SFX

enum HapticsCommand: Subcommand {
    static let spec = CommandSpec(
        name: "haptics", abstract: "Show which vibration backends this machine has, and why the others are missing.",
        discussion: "Detection order: evdev, gpio, sysfs, command, callback; the first available is used.",
        examples: ["sfx haptics", "sfx haptics --input-device /dev/input/event5"],
        positionals: [],
        options: HapticOptions.options)

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        var settings = try CommandSettings.load(needing: UserSettings.hapticKeys)
        try HapticOptions.apply(arguments, to: &settings)
        var haptics = HapticConfiguration()
        settings.apply(to: &haptics)
        let report = haptics.detect()
        print(report)
        if let chosen = settings.hapticBackend ?? report.firstAvailable {
            print("\nsfx vibrates with: \(chosen.rawValue)")
        } else {
            print("\nsfx cannot vibrate here: no backend is available")
        }
        return 0
    }
}
