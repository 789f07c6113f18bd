import Foundation
import Glibc
import SFX

/// The haptic options shared by `alert`, `vibrate` and `haptics`; they override the settings file.
enum HapticOptions {
    static let options: [OptionSpec] = [
        .option("backend", value: "NAME", help: "evdev, gpio, sysfs, command or callback (default: the first available)."),
        .option("input-device", value: "PATH", help: "evdev: this event device instead of the first with rumble."),
        .option("gpio", value: "CHIP:LINE[:active-low]", help: "gpio: the line driving the buzzer, e.g. gpiochip0:17."),
        .option("command", value: "PROGRAM", help: "command: a program to run for each vibration."),
    ]

    static func apply(_ arguments: ParsedArguments, to settings: inout UserSettings) throws {
        if let name = arguments.value("backend") {
            guard let kind = HapticBackendKind(rawValue: name) else {
                throw UsageError(message: "unknown backend '\(name)': expected \(HapticBackendKind.allCases.map(\.rawValue).joined(separator: ", "))", command: arguments.spec)
            }
            settings.hapticBackend = kind
        }
        if let device = arguments.value("input-device") { settings.inputDevice = device }
        if let gpio = arguments.value("gpio") {
            do {
                settings.gpio = try GPIOLineConfiguration(parsing: gpio)
            } catch {
                throw UsageError(message: "invalid value '\(gpio)' for '--gpio': \(error)", command: arguments.spec)
            }
        }
        if let command = arguments.value("command") { settings.command = [command] }
    }
}
