import FoundationEssentials
import SFXSystem
import Dispatch
import Glibc

/// Work that runs on a thread of its own while the caller does something else, and whose result
/// the caller waits for (`value()`). For start-up steps that do not need each other: the engine
/// finds the sound themes while its device opens. Not for the real-time thread.
final class SideTask<Value: Sendable, Failure: Error>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    /// Written once by the thread before `done` is signalled, read after waiting on it.
    private var result: Result<Value, Failure>?

    init(name: String, _ work: @escaping @Sendable () throws(Failure) -> Value) {
        Threads.start(name: name) { [self] in
            result = Result(catching: work)
            done.signal()
        }
    }

    /// Waits for the work to end and returns what it returned, or throws what it threw. Once.
    func value() throws(Failure) -> Value {
        done.wait()
        return try result!.get()
    }
}
