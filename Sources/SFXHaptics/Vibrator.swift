import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// Plays vibration patterns on one haptic backend: the object the engine and the `sfx` command use.
///
/// ```swift
/// let vibrator = try Vibrator()                  // the first available backend, switched off
/// Vibrator.installSignalCleanup()                // Ctrl-C or SIGTERM leaves the actuator off
/// vibrator.vibrate()                             // one 400 ms buzz, returns at once
/// vibrator.vibrate(.doubleClick)                 // replaces whatever was playing
/// vibrator.cancel()                              // stops now; the actuator is off
/// ```
///
/// `vibrate(_:)` returns at once; patterns play one at a time on the vibrator's own queue (an
/// ordinary thread: vibration is not real-time work). A new vibration replaces the running one,
/// which stops within microseconds. The actuator is left off at every exit: when the vibrator is
/// created, at the end of a pattern, on `cancel()`, on `close()` and deinit, and — once
/// `installSignalCleanup()` has run — on SIGINT and SIGTERM.
///
/// Failures while playing (a pad unplugged mid-pattern, say) go to `errorHandler` and
/// `lastError`, each one line naming the device and the fix.
public final class Vibrator: @unchecked Sendable {
    /// The backend this vibrator drives.
    public let backend: any HapticBackend

    private let queue = DispatchQueue(label: "sfx.haptics.vibrator", qos: .userInitiated)
    private let state = Mutex(State())

    private struct State {
        var current: HapticStopSignal?
        var isClosed = false
        var lastError: HapticError?
        var errorHandler: (@Sendable (HapticError) -> Void)?
    }

    /// Opens `backend` (which switches its actuator off) and takes charge of it.
    public init(backend: any HapticBackend) throws(HapticError) {
        try backend.open()
        self.backend = backend
        Self.openVibrators.withLock { $0[ObjectIdentifier(self)] = WeakVibrator(vibrator: self) }
    }

    /// Opens the backend of `kind`, or with `kind` nil the first available one in detection order.
    public convenience init(configuration: HapticConfiguration = HapticConfiguration(), backend kind: HapticBackendKind? = nil) throws(HapticError) {
        try self.init(backend: configuration.availableBackend(kind))
    }

    deinit {
        close()
    }

    /// Called on the vibrator's queue with each failure while playing.
    public var errorHandler: (@Sendable (HapticError) -> Void)? {
        get { state.withLock { $0.errorHandler } }
        set { state.withLock { $0.errorHandler = newValue } }
    }

    /// The most recent failure while playing, if any.
    public var lastError: HapticError? {
        state.withLock { $0.lastError }
    }

    /// Plays `pattern`, replacing any running one; returns at once.
    public func vibrate(_ pattern: VibrationPattern = .default) {
        let stop = HapticStopSignal()
        let accepted = state.withLock { state in
            guard !state.isClosed else { return false }
            state.current?.signal()
            state.current = stop
            return true
        }
        guard accepted else {
            report(HapticError("the vibrator is closed — create a new one to vibrate"))
            return
        }
        queue.async { [weak self, backend] in
            do throws(HapticError) {
                try backend.play(pattern, until: stop)
            } catch {
                self?.report(error)
            }
        }
    }

    /// Stops the running pattern, if any; the actuator is off when it returns to the queue.
    public func cancel() {
        state.withLock { state in
            state.current?.signal()
            state.current = nil
        }
    }

    /// Blocks until every pattern asked for so far has ended (a repeating one ends only when
    /// cancelled or replaced).
    public func waitUntilIdle() {
        queue.sync {}
    }

    /// Stops, switches the actuator off and releases the device. Later `vibrate` calls report an
    /// error. Called by deinit; safe to call more than once.
    public func close() {
        let wasOpen = state.withLock { state in
            defer { state.isClosed = true }
            state.current?.signal()
            state.current = nil
            return !state.isClosed
        }
        guard wasOpen else { return }
        queue.sync { backend.close() }
        Self.openVibrators.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(self)) }
    }

    private func report(_ error: HapticError) {
        let handler = state.withLock { state in
            state.lastError = error
            return state.errorHandler
        }
        handler?(error)
    }

    // MARK: Leaving the actuator off on SIGINT and SIGTERM

    private struct WeakVibrator {
        weak var vibrator: Vibrator?
    }

    private static let openVibrators = Mutex<[ObjectIdentifier: WeakVibrator]>([:])
    private static let signalSources = Mutex<[any DispatchSourceSignal]>([])

    /// Makes SIGINT and SIGTERM close every open vibrator (so every actuator is off) before the
    /// process ends the way the signal would have ended it. Call once, early; later calls do
    /// nothing. The signals are then handled through Dispatch: a program with its own handlers
    /// for them should call `closeAll()` from those instead.
    public static func installSignalCleanup() {
        signalSources.withLock { sources in
            guard sources.isEmpty else { return }
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler {
                    closeAll()
                    // Dispatch runs this on a worker that blocks the signal: raised while
                    // blocked it would stay pending on this thread for ever. Unblocked here, at
                    // its default action, it ends the process as it would have without us.
                    signal(number, SIG_DFL)
                    var only = sigset_t()
                    sigemptyset(&only)
                    sigaddset(&only, number)
                    pthread_sigmask(SIG_UNBLOCK, &only, nil)
                    raise(number)
                }
                source.resume()
                sources.append(source)
            }
        }
    }

    /// Closes every open vibrator, leaving every actuator off.
    public static func closeAll() {
        let vibrators = openVibrators.withLock { $0.values.compactMap(\.vibrator) }
        for vibrator in vibrators { vibrator.close() }
    }
}
