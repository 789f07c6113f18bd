import Glibc
import CSFXSystem

/// Threads of the engine's own (the output loop, event delivery, readers, watchers), started
/// with pthreads rather than Foundation's `Thread`, which FoundationEssentials does not have.
public enum Threads {
    /// Starts `body` on a new detached thread named `name` (at most 15 bytes, as the kernel
    /// keeps them: `top -H`, `/proc/PID/task/*/comm`), with a stack of `stackSize` bytes.
    /// A thread that cannot be created is a fault of the process (out of memory or of threads):
    /// it stops with the reason, as `Thread.start` would.
    public static func start(name: String, stackSize: Int = 1 << 19, _ body: @escaping @Sendable () -> Void) {
        final class Start { let name: String; let body: @Sendable () -> Void
            init(name: String, body: @escaping @Sendable () -> Void) { self.name = name; self.body = body } }
        let context = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, max(Int(PTHREAD_STACK_MIN), stackSize))
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let result = pthread_create(&thread, &attributes, { context in
            let start = Unmanaged<AnyObject>.fromOpaque(context!).takeRetainedValue() as! Start
            _ = sfx_name_thread(start.name)
            start.body()
            return nil
        }, context)
        if result != 0 {
            Unmanaged<AnyObject>.fromOpaque(context).release()
            fatalError("sfx: cannot start the thread \(name): \(String(cString: strerror(result)))")
        }
    }

    /// Sleeps `seconds` (resumed after a signal until the time is up).
    public static func sleep(seconds: Double) {
        guard seconds > 0 else { return }
        var wait = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
        var left = timespec()
        while nanosleep(&wait, &left) != 0 && errno == EINTR { wait = left }
    }
}
