import Synchronization
import SFXDevice

/// Watches for sound cards while the engine has no device, so that a card plugged in (a USB
/// speaker switched on) is tried at once rather than at the next back-off: a `CardWatcher` on
/// the kernel's `sound` events (libudev, loaded then, not before), started when the device is
/// unavailable or lost and stopped once it plays again. An `add` or `change` of the card the
/// device names, by its stable name or its index, or of any card when the device names none (a
/// plugin, `default`), makes the output thread try it now (`OutputThread.retrySoon`); the
/// back-off goes on beside it, since a device node can lag its event. Without libudev, or a
/// netlink socket, the back-off alone reopens the device, as before; why is kept in `problem`.
final class DeviceWatch: Sendable {
    /// What the watcher reads its events from: the kernel's (nil), or a test's.
    typealias Source = @Sendable () throws(CardWatcherError) -> any CardEventSource

    private let device: String
    private let asoundRoot: String
    private let source: Source?
    private let output: OutputThread
    private let state = Mutex<(watcher: CardWatcher?, problem: String?)>((nil, nil))

    init(device: String, asoundRoot: String, source: Source?, output: OutputThread) {
        self.device = device
        self.asoundRoot = asoundRoot
        self.source = source
        self.output = output
    }

    /// Whether a change can make the device openable.
    func matters(_ change: CardChange) -> Bool {
        guard change.action != .remove else { return false }
        return CardName.parse(device) == nil || change.concerns(device: device)
    }

    /// Starts watching (idempotent). Not on the real-time thread.
    func start() {
        state.withLock { state in
            guard state.watcher == nil else { return }
            let handler: CardWatcher.Handler = { [weak self] change in
                guard let self, self.matters(change) else { return }
                self.output.retrySoon()
            }
            do throws(CardWatcherError) {
                if let source {
                    state.watcher = try CardWatcher(source: try source(), asoundRoot: asoundRoot, handler: handler)
                } else {
                    state.watcher = try CardWatcher(asoundRoot: asoundRoot, handler: handler)
                }
                state.problem = nil
            } catch {
                state.problem = error.description
            }
        }
    }

    /// Stops watching (idempotent).
    func stop() {
        let watcher = state.withLock { state in
            defer { state.watcher = nil }
            return state.watcher
        }
        watcher?.stop()
    }

    /// Why cards are not watched (no libudev, no netlink socket), if so.
    var problem: String? { state.withLock { $0.problem } }
    var isWatching: Bool { state.withLock { $0.watcher != nil } }
}
