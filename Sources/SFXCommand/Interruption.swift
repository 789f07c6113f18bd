import FoundationEssentials
import Glibc
import SFXSystem
import Synchronization

/// Ctrl-C (SIGINT) and SIGTERM: run a handler once, on SFXSystem's signal thread, instead of
/// dying.
///
/// The signals keep their default action (the program ends by the signal) until `onInterrupt`,
/// and from its return the handler runs (`SignalRelay`): nothing falls between. They used to be
/// set to be ignored first, and a SIGINT in that moment was dropped: `sfx play --loops -1` then
/// played on (1 run in 150 with SIGINT 4–16 ms after the start).
final class Interruption: @unchecked Sendable {
    private let fired = Atomic<Bool>(false)

    var happened: Bool { fired.load(ordering: .acquiring) }

    func onInterrupt(_ handler: @escaping @Sendable () -> Void) {
        SignalRelay.register { [self] _ in
            if !fired.exchange(true, ordering: .acquiringAndReleasing) { handler() }
        }
    }
}
