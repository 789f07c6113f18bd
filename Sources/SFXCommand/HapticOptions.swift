import FoundationEssentials
import Glibc
import SFX

/// The haptic options shared by `alert`, `vibrate` and `haptics`; they override the settings file.
enum HapticOptions {
    static let backend = OptionSpec.option("backend", value: "NAME", help: "evdev, gpio, sysfs, command or callback (default: the first available).")
    static let inputDevice = OptionSpec.option("input-device", value: "PATH", help: "evdev: this event device instead of the first with rumble.")
    static let gpio = OptionSpec.option("gpio", value: "CHIP:LINE[:active-low]", help: "gpio: the line driving the buzzer, e.g. gpiochip0:17.")
    static let command = OptionSpec.option("command", value: "PROGRAM", help: "command: a program and its arguments, split at spaces and run without a shell, for each vibration.")

    static let options = [backend, inputDevice, gpio, command]

    static func apply(_ arguments: ParsedArguments, to settings: inout UserSettings) throws {
        if let name = arguments.value(backend) {
            guard let kind = HapticBackendKind(rawValue: name) else {
                throw UsageError(message: "unknown backend '\(name)': expected \(HapticBackendKind.allCases.map(\.rawValue).joined(separator: ", "))", command: arguments.spec)
            }
            settings.hapticBackend = kind
        }
        if let device = arguments.value(inputDevice) { settings.inputDevice = device }
        if let gpio = arguments.value(gpio) {
            do {
                settings.gpio = try GPIOLineConfiguration(parsing: gpio)
            } catch {
                throw UsageError(message: "invalid value '\(gpio)' for '--gpio': \(error)", command: arguments.spec)
            }
        }
        if let command = arguments.value(command) {
            settings.command = UserSettings.commandWords(command)
            guard settings.command?.isEmpty == false else {
                throw UsageError(message: "invalid value '\(command)' for '--command': expected a program", command: arguments.spec)
            }
        }
    }

    /// When a vibration command is what will vibrate (the command backend, or no backend chosen
    /// and a command given), its program must exist and be executable: otherwise one line that
    /// names it, rather than "no vibration backend is available".
    static func checkCommand(_ settings: UserSettings) throws {
        guard let program = settings.command?.first,
              settings.hapticBackend == nil || settings.hapticBackend == .command else { return }
        let candidates: [String]
        if program.contains("/") {
            candidates = [program]
        } else {
            let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
            candidates = path.split(separator: ":").map { "\($0)/\(program)" }
        }
        var found: String?
        for candidate in candidates {
            var info = stat()
            guard stat(candidate, &info) == 0 else { continue }
            found = candidate
            if info.st_mode & S_IFMT == S_IFREG, access(candidate, X_OK) == 0 { return }
        }
        let source = "the vibration command (--command, or [haptics] command in \(UserSettings.url().path))"
        if let found {
            throw Failure("\(source): \(found) is not an executable file; make it executable (chmod +x) or name another program")
        }
        throw Failure("\(source): program '\(program)' was not found\(program.contains("/") ? "" : " on PATH"); give its full path")
    }
}
