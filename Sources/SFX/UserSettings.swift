import FoundationEssentials
import Glibc
import SFXHaptics
import SFXMedia
import SFXSystem

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
///
/// [http]
/// timeout = 30                        # seconds without a byte before a stream or upload gives up
/// max-download = 512M                 # the most a streamed URL may download (K, M, G)
/// max-duration = 4h                   # the longest a streamed URL may play (s, min, h)
/// ```
public struct UserSettings: Sendable {
    public var device: String?
    public var alertVibration: AlertVibration?
    /// `[alert] sound`, `vibrate`, `flash`, `caption`, `quiet-hours`, `quiet-priority`,
    /// `flash-led`, `flash-command`: the alert policy and flash backend, when any is set.
    public var alertPolicy: AlertPolicy?
    public var flashLED: String?
    public var flashCommand: [String]?
    public var hapticBackend: HapticBackendKind?
    public var inputDevice: String?
    public var gpio: GPIOLineConfiguration?
    public var led: String?
    public var command: [String]?
    /// `[http] timeout`: seconds with nothing sent or received before a stream or an upload
    /// fails (unset: 15 s for streams, 30 s for uploads).
    public var httpTimeout: Double?
    /// `[http] max-download` and `max-duration`: what streaming a URL may take.
    public var downloadLimits = DownloadLimits()

    public init() {}

    public static func url(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        xdgDirectory("XDG_CONFIG_HOME", default: ".config", environment: environment).appending(path: "sfx/sfx.conf")
    }

    /// Problems in the file that leave the rest usable, each naming the file and line: unknown
    /// sections and keys, keys given twice, and invalid values (also in `invalid`).
    public var warnings: [String] = []
    /// Invalid values by key (`vibrate-with-alert`, `backend`, `gpio`): the setting stays unset,
    /// and a command that needs it fails with this (`check(_:)`), while the others run.
    public var invalid: [String: SettingsFileError] = [:]

    /// The keys each section may hold.
    public static let knownKeys: [String: [String]] = [
        "output": ["device"],
        "alert": ["vibrate-with-alert", "sound", "vibrate", "flash", "caption", "quiet-hours", "quiet-priority", "flash-led", "flash-command"],
        "haptics": ["backend", "input-device", "gpio", "led", "command"],
        "http": ["timeout", "max-download", "max-duration"],
    ]
    /// The keys an alert depends on (its vibration too).
    public static let alertKeys = ["vibrate-with-alert", "backend", "gpio"]
    /// The keys vibrating depends on.
    public static let hapticKeys = ["backend", "gpio"]

    /// Throws the invalid value of the first of `keys` that has one.
    public func check(_ keys: [String]) throws(SettingsFileError) {
        for key in keys { if let error = invalid[key] { throw error } }
    }

    /// Reads the settings file; no file gives the defaults. A file that cannot be read throws;
    /// an invalid value does not (see `invalid` and `warnings`), so that a bad haptics line does
    /// not stop `sfx play`.
    ///
    /// The file is opened through its directories one by one from `$XDG_CONFIG_HOME` (or
    /// `$HOME`) down, each checked on its descriptor (`OwnedDirectory`): a directory or file on
    /// the way that belongs to another user is refused, as is a `sfx/` directory or `sfx.conf`
    /// others can write, with one line naming it. So root running with another user's HOME
    /// (`sudo -E`) never runs her `[haptics] command`; no rename between the check and the read
    /// can swap in another file.
    public static func load(environment: [String: String] = ProcessInfo.processInfo.environment) throws(SettingsFileError) -> UserSettings {
        // Paths as text, not URL: URL's path cost every command a fifth of a millisecond.
        let base: String
        let components: [String]
        if let value = environment["XDG_CONFIG_HOME"], value.hasPrefix("/") {
            (base, components) = (value, ["sfx"])
        } else {
            (base, components) = (environment["HOME"] ?? homeDirectory(), [".config", "sfx"])
        }
        let fd: Int32
        let path: String
        do {
            guard let directory = try OwnedDirectory.open(basePath: base, components: components, create: false, privateCount: 1,
                                                          role: components.count == 1 ? "XDG_CONFIG_HOME" : "HOME",
                                                          modeFix: "make it yours alone (chmod 700)"),
                  let opened = try directory.openOwnedFile("sfx.conf", what: "a settings file") else { return UserSettings() }
            fd = opened
            path = directory.path(of: "sfx.conf")
        } catch {
            throw SettingsFileError("\(error)")
        }
        defer { close(fd) }
        let ini: IniFile
        do {
            ini = IniFile(parsing: String(decoding: try readSettings(fd, path: path), as: UTF8.self))
        } catch let error as SettingsFileError {
            throw error
        } catch {
            throw SettingsFileError("cannot read \(path) (\(error)); fix or remove it")
        }
        return UserSettings(ini, path: path)
    }

    /// The bytes of the opened settings file, at most `IniFile.maximumFileBytes`.
    private static func readSettings(_ fd: Int32, path: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw SettingsFileError("cannot read the settings file \(path) (\(String(cString: strerror(errno)))); check the disk") }
            if n == 0 { return bytes }
            bytes += chunk[0..<n]
            if bytes.count > IniFile.maximumFileBytes {
                throw SettingsFileError("\(path) is larger than \(IniFile.maximumFileBytes / 1_000_000) MB, too large for a settings file; give the right file")
            }
        }
    }

    /// The settings in `ini`, read from `path` (named in warnings).
    public init(_ ini: IniFile, path: String) {
        func line(of key: String, in group: String) -> Int {
            ini.entries.last { $0.group == group && $0.key == key }?.line ?? 0
        }
        func bad(_ group: String, _ key: String, _ value: String, _ allowed: String) {
            let error = SettingsFileError("\(path):\(line(of: key, in: group)): \(key) = \(value) is not valid; use \(allowed)")
            invalid[key] = error
            warnings.append(error.description)
        }
        for group in ini.groups where Self.knownKeys[group.name] == nil {
            let at = ini.entries.first { $0.group == group.name }?.line
            warnings.append("\(path)\(at.map { ":\($0)" } ?? ""): unknown section [\(group.name)]; sections are "
                            + Self.knownKeys.keys.sorted().map { "[\($0)]" }.joined(separator: ", "))
        }
        for entry in ini.entries {
            guard let keys = Self.knownKeys[entry.group], !keys.contains(entry.key) else { continue }
            warnings.append("\(path):\(entry.line): unknown key '\(entry.key)' in [\(entry.group)], ignored; "
                            + "[\(entry.group)] takes \(keys.joined(separator: ", "))")
        }
        for duplicate in ini.duplicates where Self.knownKeys[duplicate.group]?.contains(duplicate.key) == true {
            warnings.append("\(path):\(duplicate.lines.map(String.init).joined(separator: ",")): \(duplicate.key) is set "
                            + "\(duplicate.lines.count) times in [\(duplicate.group)]; the last one holds, remove the others")
        }
        device = ini["output", "device"]
        if let value = ini["alert", "vibrate-with-alert"] {
            if let mode = AlertVibration(rawValue: value) {
                alertVibration = mode
            } else {
                bad("alert", "vibrate-with-alert", value, AlertVibration.allCases.map(\.rawValue).joined(separator: ", "))
            }
        }
        var policy = AlertPolicy(vibration: alertVibration ?? .whenMuted)
        var policySet = false
        for (key, path) in [("sound", \AlertPolicy.sound), ("vibrate", \AlertPolicy.vibrate), ("flash", \AlertPolicy.flash), ("caption", \AlertPolicy.caption)] {
            guard let value = ini["alert", key] else { continue }
            if let rule = AlertChannelRule(rawValue: value) {
                policy[keyPath: path] = rule
                policySet = true
            } else {
                bad("alert", key, value, AlertChannelRule.allCases.map(\.rawValue).joined(separator: ", "))
            }
        }
        if let value = ini["alert", "quiet-hours"] {
            if let window = QuietHours(text: value) { policy.quietHours = window; policySet = true } else { bad("alert", "quiet-hours", value, "HH:MM-HH:MM, e.g. 22:00-07:00") }
        }
        if let value = ini["alert", "quiet-priority"] {
            if let priority = AlertPriority(name: value) { policy.quietHoursPriority = priority; policySet = true } else { bad("alert", "quiet-priority", value, "low, normal, high, critical") }
        }
        if policySet { alertPolicy = policy }
        flashLED = ini["alert", "flash-led"]
        flashCommand = ini["alert", "flash-command"].map { $0.split(separator: " ").map(String.init) }
        if let value = ini["haptics", "backend"], value != "auto" {
            if let kind = HapticBackendKind(rawValue: value) {
                hapticBackend = kind
            } else {
                bad("haptics", "backend", value, "auto, " + HapticBackendKind.allCases.map(\.rawValue).joined(separator: ", "))
            }
        }
        inputDevice = ini["haptics", "input-device"]
        if let value = ini["haptics", "gpio"] {
            do {
                gpio = try GPIOLineConfiguration(parsing: value)
            } catch {
                bad("haptics", "gpio", value, "CHIP:LINE[:active-low], e.g. gpiochip0:17")
            }
        }
        led = ini["haptics", "led"]
        command = ini["haptics", "command"].map(Self.commandWords)
        if let value = ini["http", "timeout"] {
            if let seconds = DownloadLimits.parseSeconds(value), seconds <= 86_400 {
                httpTimeout = seconds
            } else {
                bad("http", "timeout", value, "seconds (up to a day), e.g. 30 or 2min")
            }
        }
        if let value = ini["http", "max-download"] {
            if let bytes = DownloadLimits.parseBytes(value) {
                downloadLimits.maximumBytes = bytes
            } else {
                bad("http", "max-download", value, "a size in bytes, or with K, M or G, e.g. 512M")
            }
        }
        if let value = ini["http", "max-duration"] {
            if let seconds = DownloadLimits.parseSeconds(value) {
                downloadLimits.maximumDuration = seconds
            } else {
                bad("http", "max-duration", value, "a duration in seconds, or with s, min or h, e.g. 4h")
            }
        }
    }

    /// A command as the settings file and `--command` write it: words split at spaces and tabs,
    /// run without a shell.
    public static func commandWords(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
    }

    /// The settings laid over an engine configuration (what is not set stays as it is).
    public func apply(to configuration: inout SoundEngine.Configuration) {
        if let device { configuration.output.device = device }
        if let alertVibration { configuration.alertVibration = alertVibration }
        if let alertPolicy { configuration.alertPolicy = alertPolicy }
        if let flashLED { configuration.flashBackend = LEDFlashBackend(name: flashLED) }
        if let flashCommand, !flashCommand.isEmpty { configuration.flashBackend = CommandFlashBackend(arguments: flashCommand) }
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

extension SettingsFileError {
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
