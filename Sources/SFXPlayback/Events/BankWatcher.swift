import Glibc
import SFXSystem
import Synchronization

/// Watches directories with inotify and calls `changed` once things settle: 100 ms after the
/// last change to any file in them (editors save by writing a new file and renaming it over
/// the old one, in several steps). Runs on its own thread, never the real-time one.
final class BankWatcher: @unchecked Sendable {
    static let debounce: Int32 = 100

    private let descriptor: Int32
    private final class Flag: Sendable { let value = Atomic<Bool>(false) }
    private let stopping = Flag()

    init(file: String, directories: [String], changed: @escaping @Sendable () -> Void) throws(BankError) {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else {
            throw BankError(file: file, line: 0, reason: "cannot be watched: inotify_init1: \(String(cString: strerror(errno))); raise fs.inotify.max_user_instances, or load it with watch: false")
        }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_ATTRIB)
        for directory in directories where inotify_add_watch(fd, directory, mask) < 0 {
            let why = String(cString: strerror(errno))
            close(fd)
            throw BankError(file: file, line: 0, reason: "cannot watch \(directory): \(why); raise fs.inotify.max_user_watches, or load it with watch: false")
        }
        descriptor = fd
        let stopping = self.stopping
        Threads.start(name: "sfx-bank-watch") {
            var buffer = [UInt8](repeating: 0, count: 8192)
            var pending = false
            while !stopping.value.load(ordering: .acquiring) {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&poller, 1, pending ? Self.debounce : 200)
                if ready > 0 {
                    while read(fd, &buffer, buffer.count) > 0 { pending = true }
                } else if ready == 0, pending {
                    pending = false
                    changed()
                }
            }
            close(fd)
        }
    }

    /// Ends the thread (within 200 ms) and closes the descriptor.
    func stop() { stopping.value.store(true, ordering: .releasing) }
}
