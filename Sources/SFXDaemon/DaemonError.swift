/// Why the daemon could not start, or a client could not reach it: one line naming the thing
/// and the fix.
public struct DaemonError: Error, Sendable, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
