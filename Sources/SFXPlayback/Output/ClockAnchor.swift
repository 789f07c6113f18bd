import Glibc
import Synchronization

/// Where the output is in time, as the output thread last measured it: the mixer frame at the
/// DAC (`dacFrame`) at one CLOCK_MONOTONIC instant (`nanoseconds`), published for any thread to
/// read without a lock (`EngineClock`).
///
/// The pair is written together under a sequence count (a seqlock): the writer makes the count
/// odd, stores both, makes it even again; a reader retries while the count is odd (yielding the
/// processor, in case it preempted the writer) or moved during its read. The writer (the output
/// thread) never waits; a reader retries at most while one store is under way. Atomics only: nothing here allocates or locks.
final class ClockAnchor: Sendable {
    private let sequence = Atomic<Int>(0)
    private let frame = Atomic<Int>(0)
    private let time = Atomic<Int>(0)
    /// The mixer frame the next period rendered begins at (the end of what was mixed).
    let mixedFrame = Atomic<Int>(0)

    /// Output thread only.
    func publish(dacFrame: Int, nanoseconds: Int) {
        let s = sequence.load(ordering: .relaxed)
        sequence.store(s &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        frame.store(dacFrame, ordering: .relaxed)
        time.store(nanoseconds, ordering: .relaxed)
        sequence.store(s &+ 2, ordering: .releasing)
    }

    /// The last anchor, or nil before the device first said where its DAC is.
    func read() -> (dacFrame: Int, nanoseconds: Int)? {
        while true {
            let before = sequence.load(ordering: .acquiring)
            if before & 1 != 0 { sched_yield(); continue }
            let f = frame.load(ordering: .relaxed)
            let t = time.load(ordering: .relaxed)
            atomicMemoryFence(ordering: .acquiring)
            if sequence.load(ordering: .relaxed) == before { return before == 0 ? nil : (f, t) }
        }
    }
}
