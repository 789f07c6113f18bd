import SFX

/// The user's settings file as a command reads it: a value the command needs that is invalid
/// fails the command; every other problem (unknown keys, repeats, invalid values of other
/// sections) is a warning on stderr naming the line, unless --quiet.
enum CommandSettings {
    static func load(needing keys: [String] = [], quiet: Bool = false) throws -> UserSettings {
        let settings = try UserSettings.load()
        try settings.check(keys)
        if !quiet {
            for warning in settings.warnings { printError("warning: \(warning)") }
        }
        return settings
    }
}
