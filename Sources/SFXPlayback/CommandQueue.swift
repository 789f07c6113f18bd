import Foundation
import Glibc
import Synchronization
import SFXCore

/// The many-producer side of the real-time thread's command ring: producers take turns on a
/// mutex; the real-time thread, the only consumer, never locks.
final class CommandQueue: Sendable {
    private let ring: SPSCRing<MixerCommand>
    private let producer = Mutex(())
    private let output: OutputThread
    /// Wakes the event thread from a long sleep, so what a command causes is handed on promptly.
    let nudge = Nudge()

    init(ring: SPSCRing<MixerCommand>, output: OutputThread) {
        self.ring = ring
        self.output = output
    }

    /// Queues a command; false when the queue is full. Wakes the output thread when it sleeps
    /// with the device closed for idleness.
    func send(_ command: MixerCommand) -> Bool {
        guard producer.withLock({ _ in ring.push(command) }) else { return false }
        if output.deviceOpen.load(ordering: .relaxed) == 0 { output.wake.signal() }
        if output.wantsKicks.load(ordering: .relaxed) { output.kick() }
        nudge.poke()
        return true
    }
}

/// A sleep that another thread may cut short: `poke` signals only while a sleeper that asked to
/// be woken is asleep (an atomic exchange otherwise), so sending commands costs no system call
/// while the event thread polls often anyway. A poke that races the end of a sleep leaves the
/// next sleep short, which is harmless.
final class Nudge: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let asleep = Atomic<Bool>(false)

    /// Sleeps `seconds`, or until poked when `wakeable`; returns whether it was poked.
    func sleep(seconds: Double, wakeable: Bool) -> Bool {
        if wakeable { asleep.store(true, ordering: .releasing) }
        let poked = semaphore.wait(timeout: .now() + seconds) == .success
        asleep.store(false, ordering: .releasing)
        return poked
    }

    func poke() {
        if asleep.exchange(false, ordering: .acquiringAndReleasing) { semaphore.signal() }
    }
}
