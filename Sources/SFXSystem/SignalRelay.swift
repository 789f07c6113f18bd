import Glibc
import CSFXSystem
import Synchronization

/// SIGINT and SIGTERM, handled outside the signal handler: once `register` has been called, each
/// that arrives runs the registered handlers, in order, on a thread of their own
/// (`sfx-signals`), instead of ending the program.
///
/// The handler is put in place by `sigaction` before `register` first returns, so a signal that
/// comes after it is never lost and one that came before it had its default action; nothing
/// falls between. (Dispatch's signal sources put their handler in place later, on its manager
/// thread, and waiting for that cost `sfx play` about 0.7 ms of its start.)
public enum SignalRelay {
    public typealias Handler = @Sendable (Int32) -> Void

    private struct State {
        var installed = false
        var handlers: [Handler] = []
    }

    private static let state = Mutex(State())

    /// Adds `handler` for SIGINT and SIGTERM from now on. False when the signals could not be
    /// routed (no descriptor left for the pipe): they keep their default action.
    @discardableResult
    public static func register(_ handler: @escaping Handler) -> Bool {
        state.withLock { state in
            if !state.installed {
                let descriptor = sfx_signal_relay_install()
                guard descriptor >= 0 else { return false }
                state.installed = true
                Threads.start(name: "sfx-signals", stackSize: 256 * 1024) { relay(from: descriptor) }
            }
            state.handlers.append(handler)
            return true
        }
    }

    private static func relay(from descriptor: Int32) {
        var number: UInt8 = 0
        while true {
            let count = read(descriptor, &number, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1 else { return }
            let handlers = state.withLock { $0.handlers }
            for handler in handlers { handler(Int32(number)) }
        }
    }
}
