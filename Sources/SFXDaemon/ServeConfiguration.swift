import FoundationEssentials
import SFXSystem
import Glibc
import SFXMedia

/// The daemon's own file, `$XDG_CONFIG_HOME/sfx/serve.conf` (default `~/.config/sfx/serve.conf`),
/// read at start and again on SIGHUP:
///
/// ```
/// [sounds]
/// coin = /home/me/sounds/coin.ogg      # preloaded; `sfx play coin` plays it
/// door = /srv/kiosk/door.flac
/// ```
///
/// The output device, alert vibration and haptics come from `sfx.conf`, as for the command.
public struct ServeConfiguration: Sendable, Equatable {
    /// Custom sounds to preload: name → file.
    public var sounds: [String: String] = [:]
    /// Problems that leave the rest usable, each naming the line.
    public var warnings: [String] = []

    public init() {}

    public static func url(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let base: URL
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            base = URL(filePath: config)
        } else {
            base = URL(filePath: environment["HOME"] ?? homeDirectory()).appending(path: ".config")
        }
        return base.appending(path: "sfx/serve.conf")
    }

    /// Reads `url`; a missing file gives no custom sounds. Throws when it exists and cannot be read.
    public static func load(_ url: URL) throws(DaemonError) -> ServeConfiguration {
        guard FileManager.default.fileExists(atPath: url.path) else { return ServeConfiguration() }
        let file: IniFile
        do {
            file = try IniFile(contentsOf: url)
        } catch {
            throw DaemonError("\(url.path) cannot be read (\(error)); fix or remove it")
        }
        var configuration = ServeConfiguration()
        for entry in file.entries {
            switch entry.group {
            case "sounds":
                if entry.key.isEmpty || entry.key.contains("=") || entry.key.contains("/") {
                    configuration.warnings.append("\(url.path):\(entry.line): '\(entry.key)' is not a sound name; use letters, digits and dashes")
                } else {
                    configuration.sounds[entry.key] = entry.value
                }
            default:
                configuration.warnings.append("\(url.path):\(entry.line): unknown section [\(entry.group)]; serve.conf has [sounds] only")
            }
        }
        return configuration
    }
}
