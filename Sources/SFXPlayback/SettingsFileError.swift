/// A problem with sfx's settings or state files (a file unreadable, malformed, or not the
/// user's): one line naming the file and the fix. A value out of range is a `SettingError`.
public struct SettingsFileError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The old name, beside `SettingError` (one setting's value out of range) it read as the same.
@available(*, deprecated, renamed: "SettingsFileError")
public typealias SettingsError = SettingsFileError
