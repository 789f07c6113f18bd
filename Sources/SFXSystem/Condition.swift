import Glibc

/// A mutex and condition variable whose timed waits run on CLOCK_MONOTONIC, so that setting the
/// wall clock neither lengthens nor cuts them (Foundation's NSCondition waits until a Date).
///
///     condition.withLock { while !done { if !condition.wait(seconds: 0.5) { break } } }
public final class MonotonicCondition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }

    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Wakes one waiter (call with the lock held, or after changing what it waits for under it).
    public func signal() { pthread_cond_signal(condition) }
    /// Wakes every waiter.
    public func broadcast() { pthread_cond_broadcast(condition) }

    /// Waits (the lock held) until woken.
    public func wait() { pthread_cond_wait(condition, mutex) }

    /// Waits (the lock held) until woken or `seconds` have passed; false when the time ran out.
    /// A waiter checks what it waits for in a loop: wake-ups may be spurious.
    @discardableResult
    public func wait(seconds: Double) -> Bool {
        wait(untilMonotonic: MonotonicCondition.now() + max(0, seconds))
    }

    /// Waits (the lock held) until woken or CLOCK_MONOTONIC reaches `deadline` (seconds).
    public func wait(untilMonotonic deadline: Double) -> Bool {
        let whole = deadline.rounded(.down)
        var until = timespec(tv_sec: Int(whole), tv_nsec: Int((deadline - whole) * 1e9))
        return pthread_cond_timedwait(condition, mutex, &until) != ETIMEDOUT
    }

    /// CLOCK_MONOTONIC in seconds.
    public static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
