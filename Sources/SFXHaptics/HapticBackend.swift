import FoundationEssentials
import SFXSystem
import Glibc

/// One way to make a device vibrate: evdev rumble, a GPIO line, a sysfs vibrator, a command or a
/// callback. `Vibrator` drives exactly one backend and never knows which.
///
/// A backend's life is `open()` (which leaves the actuator **off**: a GPIO line has no kernel
/// timer, so a line left high by a crashed program is switched off here), any number of
/// `play(_:until:)`, then `close()` (which leaves it off again and releases the device).
///
/// Backends that switch an actuator on and off conform to `SwitchedHapticBackend` and get `play`
/// from it; a backend that runs whole patterns itself (the command backend) implements `play`.
///
/// `open`, `play` and `close` are called from one thread at a time (the Vibrator's queue);
/// `availability()` may be called at any time and touches no open device.
public protocol HapticBackend: AnyObject, Sendable {
    /// Which backend this is.
    var kind: HapticBackendKind { get }
    /// Whether it can vibrate here and on what, or the reason it cannot with the fix.
    func availability() -> HapticAvailability
    /// Prepares the device and switches the actuator off.
    func open() throws(HapticError)
    /// Plays `pattern` until it ends or `stop` is signalled, and leaves the actuator off.
    func play(_ pattern: VibrationPattern, until stop: HapticStopSignal) throws(HapticError)
    /// Switches the actuator off and releases the device. Safe to call more than once.
    func close()
}

/// A backend driven segment by segment: on at an amplitude for a time, then off.
///
/// `milliseconds` is the length of the segment being started: backends whose kernel interface has
/// its own timer (evdev replay length, the LED transient trigger, timed_output) hand it over, so
/// the actuator stops even if this process dies mid-pattern.
public protocol SwitchedHapticBackend: HapticBackend {
    /// Starts the actuator at `amplitude` (0 < amplitude ≤ 1) for at most `milliseconds`.
    func switchOn(amplitude: Double, milliseconds: Int) throws(HapticError)
    /// Stops the actuator.
    func switchOff() throws(HapticError)
}

/// The backends, in auto-detection order.
public enum HapticBackendKind: String, Sendable, CaseIterable {
    case evdev, gpio, sysfs, command, callback
}

/// Whether a backend can vibrate here; when not, `reason` is one line with the fix.
public enum HapticAvailability: Sendable, Equatable {
    /// Ready; the text names what it drives ("/dev/input/event3", "gpiochip0 line 17").
    case available(String)
    case unavailable(reason: String)

    public var isAvailable: Bool {
        if case .available = self { true } else { false }
    }
}

extension SwitchedHapticBackend {
    /// Walks the pattern's segments: on segments switch on for their length, off segments switch
    /// off, and the actuator is off when the pattern ends, is stopped, or a call fails.
    public func play(_ pattern: VibrationPattern, until stop: HapticStopSignal) throws(HapticError) {
        var isOn = false
        do {
            for segment in pattern.playbackOrder {
                if stop.isSignalled { break }
                if segment.isOn {
                    try switchOn(amplitude: segment.amplitude, milliseconds: segment.milliseconds)
                    isOn = true
                } else if isOn {
                    try switchOff()
                    isOn = false
                }
                if !stop.wait(milliseconds: segment.milliseconds) { break }
            }
        } catch {
            try? switchOff()
            throw error
        }
        if isOn { try switchOff() }
    }
}

/// Tells a playing pattern to stop; it also serves as the pattern's interruptible clock.
///
/// `wait(milliseconds:)` sleeps until the time is up (returning true) or `signal()` is called
/// (returning false at once), so a cancelled pattern stops within microseconds, not at the end of
/// its current segment.
public final class HapticStopSignal: @unchecked Sendable {
    private let condition = MonotonicCondition()
    private var signalled = false

    public init() {}

    /// Asks the pattern to stop. Wakes a waiting `wait(milliseconds:)`.
    public func signal() {
        condition.withLock {
            signalled = true
            condition.broadcast()
        }
    }

    public var isSignalled: Bool { condition.withLock { signalled } }

    /// Waits `milliseconds`; false when stopped first.
    public func wait(milliseconds: Int) -> Bool {
        let deadline = MonotonicCondition.now() + Double(milliseconds) / 1000
        return condition.withLock {
            while !signalled {
                if !condition.wait(untilMonotonic: deadline) { return !signalled }
            }
            return false
        }
    }
}
