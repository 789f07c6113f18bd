/// A problem with the virtual sound card, told in one line that names the thing and the fix.
public struct CardError: Error, CustomStringConvertible, Sendable, Equatable {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
