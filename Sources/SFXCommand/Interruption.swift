import Foundation
import Glibc
import Synchronization

/// Ctrl-C (SIGINT) and SIGTERM: run a handler once, on a dispatch queue, instead of dying.
final class Interruption: @unchecked Sendable {
    private let fired = Atomic<Bool>(false)
    /// Kept alive while the program runs; set once, from the main thread.
    private var sources: [DispatchSourceSignal] = []

    var happened: Bool { fired.load(ordering: .acquiring) }

    func onInterrupt(_ handler: @escaping @Sendable () -> Void) {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                if !fired.exchange(true, ordering: .acquiringAndReleasing) { handler() }
            }
            source.resume()
            sources.append(source)
        }
    }
}
