/// What a `CallbackBackend` tells its handler: start the actuator, or stop it.
public enum HapticEvent: Sendable, Equatable {
    /// Vibrate at `amplitude` (0 < amplitude ≤ 1); the segment lasts `milliseconds`.
    case on(amplitude: Double, milliseconds: Int)
    case off
}

/// Vibration through a Swift closure, for programs that own the actuator themselves — a game that
/// rumbles its pads through its own input library, or a test.
///
/// The handler runs on the Vibrator's queue, once per change: `.off` when opened and closed,
/// `.on` at each on segment, `.off` at each off segment and at the end. Keep it short.
public final class CallbackBackend: SwitchedHapticBackend {
    public let kind = HapticBackendKind.callback
    private let handler: @Sendable (HapticEvent) -> Void

    public init(_ handler: @escaping @Sendable (HapticEvent) -> Void) {
        self.handler = handler
    }

    public func availability() -> HapticAvailability {
        .available("a Swift callback")
    }

    public func open() {
        handler(.off)
    }

    public func switchOn(amplitude: Double, milliseconds: Int) {
        handler(.on(amplitude: amplitude, milliseconds: milliseconds))
    }

    public func switchOff() {
        handler(.off)
    }

    public func close() {
        handler(.off)
    }
}
