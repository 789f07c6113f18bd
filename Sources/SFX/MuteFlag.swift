import Foundation

/// sfx's own mute switch, kept in a file per user so the `sfx` command, the library and the
/// daemon agree: `$XDG_STATE_HOME/sfx/muted` (default `~/.local/state/sfx/muted`). The file
/// holding `1` means muted; no file, or `0`, means not.
public struct MuteFlag: Sendable, Equatable {
    public let url: URL

    public init(url: URL) { self.url = url }

    /// The flag of the user whose environment this is.
    public static func user(environment: [String: String] = ProcessInfo.processInfo.environment) -> MuteFlag {
        MuteFlag(url: xdgDirectory("XDG_STATE_HOME", default: ".local/state", environment: environment)
            .appending(path: "sfx/muted"))
    }

    public var isMuted: Bool {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return false }
        return text.trimmingCharacters(in: .whitespacesAndNewlines) == "1"
    }

    /// Sets the flag, creating its directory; one clear line when the file cannot be written.
    public func set(_ muted: Bool) throws {
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data((muted ? "1\n" : "0\n").utf8).write(to: url, options: .atomic)
        } catch {
            throw SettingsError("cannot write the mute flag \(url.path) (\(error.localizedDescription)); check that its directory is writable or set XDG_STATE_HOME")
        }
    }
}

/// An XDG base directory (`XDG_STATE_HOME`, `XDG_CONFIG_HOME`, …): the variable when it holds an
/// absolute path, else `$HOME/<fallback>`.
func xdgDirectory(_ variable: String, default fallback: String, environment: [String: String]) -> URL {
    if let value = environment[variable], value.hasPrefix("/") { return URL(filePath: value) }
    return URL(filePath: environment["HOME"] ?? NSHomeDirectory()).appending(path: fallback)
}

/// A problem with sfx's settings or state files: one line naming the file and the fix.
public struct SettingsError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Why the output counts as muted, as `SoundEngine.muteState()` reports it.
public enum MuteReason: Sendable, Hashable, CustomStringConvertible {
    /// sfx's own flag (`sfx mute on`).
    case flag
    /// The output's mixer control (Master or PCM) has its playback switch off.
    case mixerSwitchOff(control: String)
    /// The output's mixer control is at its minimum volume.
    case mixerVolumeZero(control: String)
    /// There is no usable output: the device is gone.
    case noOutput
    /// The sound server the output goes to silences sfx: the sink, or sfx's own stream, muted
    /// or at zero volume (`why`).
    case soundServer(server: String, why: String)

    public var description: String {
        switch self {
        case .flag: "sfx's mute flag is on (`sfx mute off` clears it)"
        case .mixerSwitchOff(let control): "the output's \(control) switch is off"
        case .mixerVolumeZero(let control): "the output's \(control) volume is at zero"
        case .noOutput: "there is no usable output device"
        case .soundServer(let server, let why): "muted at the sound server (\(server)): \(why)"
        }
    }
}

/// Whether the output is muted, and every reason it is.
public struct MuteState: Sendable, Equatable, CustomStringConvertible {
    public var reasons: [MuteReason]
    /// False when the device has no mixer control: then only the flag and the device's presence count.
    public var mixerAvailable: Bool

    public var isMuted: Bool { !reasons.isEmpty }

    public var description: String {
        let base = isMuted ? "muted: " + reasons.map(\.description).joined(separator: "; ") : "not muted"
        return mixerAvailable ? base : base + " (the output has no mixer control, so its switch and volume are not known)"
    }
}
