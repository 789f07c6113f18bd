import FoundationEssentials
import Dispatch
import Glibc
import Synchronization

/// Ctrl-C (SIGINT) and SIGTERM: run a handler once, on a dispatch queue, instead of dying.
///
/// Until Dispatch has put its signal handler in place, a moment after `onInterrupt`, the signals
/// keep their default action (the program ends by the signal); from then on the handler runs.
/// Nothing falls between (see `DispatchSignalSources`). They used to be set to be ignored first,
/// and a SIGINT in that moment was dropped: `sfx play --loops -1` then played on (1 run in 150
/// with SIGINT 4–16 ms after the start).
final class Interruption: @unchecked Sendable {
    private let fired = Atomic<Bool>(false)
    /// Kept alive while the program runs; set once, from the main thread.
    private var sources: [DispatchSourceSignal] = []

    var happened: Bool { fired.load(ordering: .acquiring) }

    func onInterrupt(_ handler: @escaping @Sendable () -> Void) {
        sources = DispatchSignalSources.make(for: [SIGINT, SIGTERM]) { [self] _ in
            if !fired.exchange(true, ordering: .acquiringAndReleasing) { handler() }
        }
    }
}

/// Dispatch signal sources, with the signals' action left alone. On Linux, libdispatch puts its
/// own signal handler in place when a source is registered, on its manager thread, a moment
/// after `resume`: ignoring the signals first, as Darwin's documentation advises, would drop any
/// that came in between; left alone, such a signal ends the program as it would have before.
/// `make` returns once the handler is in place (at most 200 ms later), so that what the caller
/// starts next (a vibration command, a sound) is already covered: a SIGINT that came while a
/// loaded machine had not yet run the manager thread ended `sfx vibrate` by the signal, its
/// command left running.
enum DispatchSignalSources {
    static func make(for numbers: [Int32], handler: @escaping @Sendable (Int32) -> Void) -> [any DispatchSourceSignal] {
        let sources = numbers.map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
        var pause = timespec(tv_sec: 0, tv_nsec: 500_000)
        for _ in 0..<400 where !numbers.allSatisfy(hasHandler) {
            nanosleep(&pause, nil)
        }
        return sources
    }

    /// Whether the signal's action is a handler now, not the default one.
    private static func hasHandler(_ number: Int32) -> Bool {
        var action = sigaction()
        guard sigaction(number, nil, &action) == 0 else { return true }
        return unsafeBitCast(action.__sigaction_handler, to: UInt.self) != 0
    }
}
