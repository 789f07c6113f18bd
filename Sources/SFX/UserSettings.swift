import Foundation
import SFXHaptics
import SFXMedia

/// The user's settings file, `$XDG_CONFIG_HOME/sfx/sfx.conf` (default `~/.config/sfx/sfx.conf`),
/// read by the `sfx` command and the daemon; a library sets the same fields in code.
///
/// ```
/// [output]
/// device = default
///
/// [alert]
/// vibrate-with-alert = when-muted     # never | when-muted | always
///
/// [haptics]
/// backend = auto                      # auto | evdev | gpio | sysfs | command
/// input-device = /dev/input/event5    # evdev: this device instead of the first with FF_RUMBLE
/// gpio = gpiochip0:17:active-low      # gpio: chip, line, optional active-low
/// led = vibrator                      # sysfs: the LED-class vibrator's name
/// command = /usr/local/bin/buzz       # command: a program, run without a shell
/// ```
public struct UserSettings: Sendable {
    public var device: String?
    public var alertVibration: AlertVibration?
    public var hapticBackend: HapticBackendKind?
    public var inputDevice: String?
    public var gpio: GPIOLineConfiguration?
    public var led: String?
    public var command: [String]?

    public init() {}

    public static func url(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        xdgDirectory("XDG_CONFIG_HOME", default: ".config", environment: environment).appending(path: "sfx/sfx.conf")
    }

    /// Reads the settings file; no file gives the defaults. A bad value is one line naming the
    /// file, the key and what it may be.
    public static func load(environment: [String: String] = ProcessInfo.processInfo.environment) throws(SettingsError) -> UserSettings {
        let url = url(environment: environment)
        var st = stat()
        guard stat(url.path, &st) == 0 || errno != ENOENT else { return UserSettings() }
        let ini: IniFile
        do {
            ini = try IniFile(contentsOf: url)
        } catch let error as MediaError {
            throw SettingsError(error, path: url.path)
        } catch {
            throw SettingsError("cannot read \(url.path) (\(error)); fix or remove it")
        }
        func bad(_ key: String, _ value: String, _ allowed: String) -> SettingsError {
            SettingsError("\(url.path): \(key) = \(value) is not valid; use \(allowed)")
        }
        var settings = UserSettings()
        settings.device = ini["output", "device"]
        if let value = ini["alert", "vibrate-with-alert"] {
            guard let mode = AlertVibration(rawValue: value) else {
                throw bad("vibrate-with-alert", value, AlertVibration.allCases.map(\.rawValue).joined(separator: ", "))
            }
            settings.alertVibration = mode
        }
        if let value = ini["haptics", "backend"], value != "auto" {
            guard let kind = HapticBackendKind(rawValue: value) else {
                throw bad("backend", value, "auto, " + HapticBackendKind.allCases.map(\.rawValue).joined(separator: ", "))
            }
            settings.hapticBackend = kind
        }
        settings.inputDevice = ini["haptics", "input-device"]
        if let value = ini["haptics", "gpio"] {
            do {
                settings.gpio = try GPIOLineConfiguration(parsing: value)
            } catch {
                throw bad("gpio", value, "CHIP:LINE[:active-low], e.g. gpiochip0:17")
            }
        }
        settings.led = ini["haptics", "led"]
        settings.command = ini["haptics", "command"].map { $0.split(separator: " ").map(String.init) }
        return settings
    }

    /// The settings laid over an engine configuration (what is not set stays as it is).
    public func apply(to configuration: inout SoundEngine.Configuration) {
        if let device { configuration.output.device = device }
        if let alertVibration { configuration.alertVibration = alertVibration }
        if let hapticBackend { configuration.hapticBackend = hapticBackend }
        apply(to: &configuration.haptics)
    }

    /// The haptic part of the settings laid over a haptic configuration.
    public func apply(to haptics: inout HapticConfiguration) {
        if let inputDevice { haptics.inputDevice = inputDevice }
        if let gpio { haptics.gpio = gpio }
        if let led { haptics.ledName = led }
        if let command { haptics.command = command }
    }
}

extension SettingsError {
    /// The settings file could not be read: one line that speaks of a settings file.
    init(_ error: MediaError, path: String) {
        switch error.reason {
        case .notRegularFile(let kind):
            self.init("\(path) is \(kind), not a settings file; remove it or put a settings file (a text file) there")
        case .unreadable, .missingFile:
            self.init(error.description)
        case .failed(let detail):
            self.init("cannot read the settings file \(path): \(detail)")
        default:
            self.init("cannot read the settings file \(path) (\(error.description)); fix or remove it")
        }
    }
}
