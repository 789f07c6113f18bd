import FoundationEssentials
import Glibc
import SFX

/// The library's `SettingError`s name a setting as Swift code spells it (`minDuration`,
/// `output.periodFrames`): right for a Swift caller, not for someone at a shell. Here each is
/// turned into a usage error (exit 64) that names the flag it came from and the value typed,
/// so that no message of the command names a Swift property.
enum SettingFlags {
    /// The flag behind each setting the commands set from an option.
    static let flags: [String: String] = [
        "sampleRate": "rate", "output.sampleRate": "rate",
        "channels": "channels", "output.channels": "channels",
        "periodFrames": "period", "output.periodFrames": "period",
        "periodCount": "periods", "output.periodCount": "periods",
        "bitRate": "bitrate", "quality": "quality",
        "maxDuration": "max", "minDuration": "min",
        "volume": "volume", "gain": "volume", "pan": "pan", "rate": "speed", "loops": "loops",
        "fade": "fade", "idleTimeout": "idle-timeout", "seek": "start",
    ]

    /// `body`'s result; a `SettingError` it throws (alone or in a `RecorderError`) becomes
    /// `usageError`'s.
    static func mapping(_ arguments: ParsedArguments, _ body: () throws -> Int32) throws -> Int32 {
        do {
            return try body()
        } catch {
            if let setting = error as? SettingError { throw usageError(setting, arguments) }
            if let recorder = error as? RecorderError, case .setting(let setting) = recorder { throw usageError(setting, arguments) }
            throw error
        }
    }

    /// `error` as a usage error of `arguments`' command: the flag (and what was typed for it)
    /// instead of the property, in the reason too ("no more than maxDuration (0.5 seconds)").
    static func usageError(_ error: SettingError, _ arguments: ParsedArguments) -> UsageError {
        func flag(_ setting: String) -> String {
            if let name = flags[setting] { return "--\(name)" }
            // Not set from an option (a value the command chose): named in words, not as code.
            return words(setting.split(separator: ".").last.map(String.init) ?? setting)
        }
        let name = flag(error.setting)
        var allowed = error.allowed
        // Word by word, so that a flag put in is never matched again ("rate" in "--rate").
        let word = /[A-Za-z][A-Za-z0-9.]*[A-Za-z0-9]/
        for match in allowed.matches(of: word).reversed() {
            let range = match.range
            guard allowed[range].contains(where: { $0.isUppercase || $0 == "." }),
                  let option = flags[String(allowed[range])] else { continue }
            allowed.replaceSubrange(range, with: "--\(option)")
        }
        let typed = flags[error.setting].flatMap { arguments.value($0) } ?? error.value
        return UsageError(message: "invalid value '\(typed)' for '\(name)': use \(allowed)", command: arguments.spec)
    }

    /// "realtimePriority" → "realtime priority".
    static func words(_ camel: String) -> String {
        var text = ""
        for character in camel {
            if character.isUppercase, !text.isEmpty { text += " " }
            text += character.lowercased()
        }
        return text
    }
}
