/// A problem with sfx's settings or state files: one line naming the file and the fix.
public struct SettingsError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
