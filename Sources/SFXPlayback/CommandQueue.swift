import FoundationEssentials
import Dispatch
import Glibc
import Synchronization
import SFXCore

/// The many-producer side of the real-time thread's command ring: producers take turns on a
/// mutex; the real-time thread, the only consumer, never locks.
///
/// While the engine has no device and holds plays for it (`NoDevicePolicy.queue`), commands
/// wait here, in order, instead (`hold`), up to `queueLimit` plays; `release` sends them on once
/// the device is open.
final class CommandQueue: Sendable {
    private let ring: SPSCRing<MixerCommand>
    private let producer = Mutex(Held())
    private let output: OutputThread
    /// Plays that may wait for a device (`NoDevicePolicy.queue`); 0: commands never wait.
    let queueLimit: Int
    /// Wakes the event thread from a long sleep, so what a command causes is handed on promptly.
    let nudge = Nudge()

    private struct Held {
        /// Commands wait while there is no device (set by `hold`, cleared by `release`).
        var holding = false
        var commands: [MixerCommand] = []
        var plays = 0
        /// Why there is no device (the one-line reason), for the refusals beyond the limit.
        var reason = ""
    }

    /// What became of a command.
    enum Outcome {
        /// On the ring, for the output thread.
        case queued
        /// Waiting for the device (`hold`).
        case held
        /// The ring is full.
        case full
        /// A play beyond `queueLimit` while plays wait for the device; the reason there is none.
        case overLimit(String)
    }

    init(ring: SPSCRing<MixerCommand>, output: OutputThread, queueLimit: Int = 0) {
        self.ring = ring
        self.output = output
        self.queueLimit = queueLimit
    }

    /// Queues a command; false when the queue is full (or, for a play, when as many as may
    /// already wait for the device). Wakes the output thread when it sleeps with the device
    /// closed for idleness.
    @discardableResult
    func send(_ command: MixerCommand) -> Bool {
        switch submit(command) {
        case .queued, .held: true
        case .full, .overLimit: false
        }
    }

    /// Queues a command, or holds it while commands wait for the device (every command after
    /// the first one held waits too, so that they keep their order).
    func submit(_ command: MixerCommand) -> Outcome {
        let outcome = producer.withLock { held -> Outcome in
            if held.holding || !held.commands.isEmpty {
                if command.startsVoice {
                    guard held.plays < queueLimit else { return .overLimit(held.reason) }
                    held.plays += 1
                }
                held.commands.append(command)
                return .held
            }
            return ring.push(command) ? .queued : .full
        }
        if case .queued = outcome { wakeOutput() }
        return outcome
    }

    /// Commands wait from now on (the device is not there; `reason` says why), when plays may
    /// wait for it at all (`queueLimit` > 0).
    func hold(reason: String) {
        guard queueLimit > 0 else { return }
        producer.withLock { held in
            held.holding = true
            held.reason = reason
        }
    }

    /// The device is open: the commands that waited go to the output thread, in order, as far
    /// as the ring has room (the rest at the next `release`); new ones follow them. Returns
    /// whether any still wait.
    @discardableResult
    func release() -> Bool {
        let (sent, left) = producer.withLock { held -> (Int, Bool) in
            held.holding = false
            var sent = 0
            while sent < held.commands.count, ring.push(held.commands[sent]) { sent += 1 }
            held.commands.removeFirst(sent)
            held.plays = held.commands.reduce(0) { $0 + ($1.startsVoice ? 1 : 0) }
            return (sent, !held.commands.isEmpty)
        }
        if sent > 0 { wakeOutput() }
        return left
    }

    /// Whether commands wait for the device.
    var isHolding: Bool { producer.withLock { $0.holding || !$0.commands.isEmpty } }

    private func wakeOutput() {
        if output.deviceOpen.load(ordering: .relaxed) == 0 { output.wake.signal() }
        if output.wantsKicks.load(ordering: .relaxed) { output.kick() }
        nudge.poke()
    }
}

extension MixerCommand {
    /// A play: what `NoDevicePolicy.queue`'s limit counts.
    var startsVoice: Bool {
        switch self {
        case .play, .playStream, .playAt, .playStreamAt, .crossfadeAtEnd: true
        default: false
        }
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
