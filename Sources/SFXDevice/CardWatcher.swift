import CSFXUdev
import FoundationEssentials
import Glibc
import Synchronization

/// One event of the kernel's `sound` subsystem as a source reports it (libudev's device, or a
/// test's synthetic one): the strings udev gives, "" where it has none.
public struct SoundDeviceEvent: Sendable, Equatable {
    /// "add", "remove", "change" (others, such as "bind", are passed on too).
    public var action: String
    /// "card1" (the card), "pcmC1D0p", "controlC1" (its devices).
    public var sysname: String
    /// "/devices/pci0000:00/…/sound/card1".
    public var devpath: String
    /// "/dev/snd/pcmC1D0p"; "" for the card itself.
    public var devnode: String
    /// The card's `id` attribute (its stable name), when the source could read it ("" on remove).
    public var id: String

    public init(action: String, sysname: String, devpath: String = "", devnode: String = "", id: String = "") {
        self.action = action
        self.sysname = sysname
        self.devpath = devpath
        self.devnode = devnode
        self.id = id
    }
}

/// Where `CardWatcher` gets its events: a descriptor that is readable when events wait, and a
/// nonblocking read of them. `UdevCardEvents` is the kernel's (through libudev);
/// `SyntheticCardEvents` is a test's.
public protocol CardEventSource: AnyObject, Sendable {
    /// Readable (poll POLLIN) while `receive()` has events.
    var descriptor: Int32 { get }
    /// The events waiting now, oldest first; empty when none (never blocks).
    func receive() -> [SoundDeviceEvent]
}

/// A card appearing, going or changing, as the engine acts on it.
public struct CardChange: Sendable, Equatable, CustomStringConvertible {
    public enum Action: String, Sendable {
        case add, remove, change
    }

    public var action: Action
    /// The card's index (N of cardN, controlCN, pcmCNDMp).
    public var cardIndex: Int
    /// The card's stable name: the event's `id` attribute, else `<asoundRoot>/cardN/id` (nil when
    /// neither says: a removed card's is gone with it).
    public var cardID: String?
    /// The udev device: "card1", "pcmC1D0p", "controlC1".
    public var sysname: String
    /// "/dev/snd/pcmC1D0p", or nil for the card itself.
    public var devnode: String?
    /// Whether this is the card device (`cardN`) rather than one of its PCMs or controls.
    public var isCard: Bool { sysname.hasPrefix("card") }

    public init(action: Action, cardIndex: Int, cardID: String?, sysname: String, devnode: String?) {
        self.action = action
        self.cardIndex = cardIndex
        self.cardID = cardID
        self.sysname = sysname
        self.devnode = devnode
    }

    /// The change an event means, or nil for one that is no card's (timer, seq), an action other
    /// than add/remove/change, or a name without a card index.
    public init?(_ event: SoundDeviceEvent, asoundRoot: String = "/proc/asound") {
        guard let action = Action(rawValue: event.action), let index = CardChange.cardIndex(sysname: event.sysname) else { return nil }
        self.action = action
        cardIndex = index
        cardID = event.id.isEmpty ? (action == .remove ? nil : CardName.cardID(index: index, asoundRoot: asoundRoot)) : event.id
        sysname = event.sysname
        devnode = event.devnode.isEmpty ? nil : event.devnode
    }

    /// N of "cardN", "controlCN", "pcmCNDMp"/"pcmCNDMc", "hwCNDM", "midiCNDM"; nil for others.
    public static func cardIndex(sysname: String) -> Int? {
        if sysname.hasPrefix("card") { return Int(sysname.dropFirst(4)) }
        for prefix in ["controlC", "pcmC", "hwC", "midiC"] where sysname.hasPrefix(prefix) {
            return Int(sysname.dropFirst(prefix.count).prefix { $0.isNumber })
        }
        return nil
    }

    /// Whether the change is about the card that `device` names: by id ("hw:CARD=Speaker,DEV=0",
    /// the change's `cardID`) or by index ("hw:1"). False for a name that names no card
    /// ("default", "pipewire"), for which any card's arrival may be worth a try.
    public func concerns(device: String) -> Bool {
        guard let parsed = CardName.parse(device) else { return false }
        if let index = Int(parsed.card) { return index == cardIndex }
        return parsed.card == cardID
    }

    public var description: String {
        "\(action.rawValue) card \(cardIndex)\(cardID.map { " (\($0))" } ?? "") \(devnode ?? sysname)"
    }
}

/// Watches for sound cards coming and going, on a thread of its own, and calls `handler` with
/// each `CardChange` there (never on a real-time thread; the handler may block briefly, open
/// devices, or post to the engine).
///
///     let watcher = try CardWatcher { change in
///         if change.action != .remove, change.cardID == "Speaker" { reopenSoon() }
///     }
///     …
///     watcher.stop()
///
/// The kernel's events come through libudev (`UdevCardEvents`): a netlink monitor filtered to
/// the `sound` subsystem. A USB card plugged in gives `add` for the card, then for its control
/// and PCM devices (whose devnodes can be opened once udev has set them up); unplugged, `remove`
/// for each. Reopen on any add or change of the card wanted (with back-off: a device node may lag
/// its event), and by its id, which stays, not its index, which may not (`CardName`).
public final class CardWatcher: @unchecked Sendable {
    public typealias Handler = @Sendable (CardChange) -> Void

    /// What the thread holds (not the watcher: dropping the last reference to the watcher
    /// stops the thread).
    private final class Loop: @unchecked Sendable {
        let source: any CardEventSource
        let handler: Handler
        let asoundRoot: String
        let wake: (read: Int32, write: Int32)
        let stopped = Atomic<Bool>(false)

        init(source: any CardEventSource, handler: @escaping Handler, asoundRoot: String, wake: (read: Int32, write: Int32)) {
            self.source = source
            self.handler = handler
            self.asoundRoot = asoundRoot
            self.wake = wake
        }

        func run() {
            defer { close(wake.read) }
            while !stopped.load(ordering: .acquiring) {
                var fds = [pollfd(fd: source.descriptor, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
                let ready = poll(&fds, 2, -1)
                if ready < 0 { if errno == EINTR { continue } else { return } }
                if stopped.load(ordering: .acquiring) || fds[1].revents != 0 { return }
                if fds[0].revents & Int16(POLLNVAL | POLLERR | POLLHUP) != 0 && fds[0].revents & Int16(POLLIN) == 0 { return }
                for event in source.receive() {
                    if stopped.load(ordering: .acquiring) { return }
                    if let change = CardChange(event, asoundRoot: asoundRoot) { handler(change) }
                }
            }
        }
    }

    private let loop: Loop
    private let thread: pthread_t

    /// Watches the kernel's events (`UdevCardEvents(group:)`); throws `CardWatcherError` when
    /// libudev or its netlink socket cannot be had.
    public convenience init(group: UdevCardEvents.Group = .preferred, asoundRoot: String = "/proc/asound",
                            handler: @escaping Handler) throws(CardWatcherError) {
        try self.init(source: UdevCardEvents(group: group), asoundRoot: asoundRoot, handler: handler)
    }

    /// Watches `source`'s events (a test's `SyntheticCardEvents`); card ids not in an event are
    /// read from `asoundRoot` (laid out like /proc/asound).
    public init(source: any CardEventSource, asoundRoot: String = "/proc/asound", handler: @escaping Handler) throws(CardWatcherError) {
        var fds: [Int32] = [-1, -1]
        guard makePipe(&fds) else {
            throw CardWatcherError("cannot make the card watcher's wake-up pipe (\(String(cString: strerror(errno))))")
        }
        let loop = Loop(source: source, handler: handler, asoundRoot: asoundRoot, wake: (fds[0], fds[1]))
        let box = Unmanaged.passRetained(loop)
        var handle = pthread_t()
        let made = pthread_create(&handle, nil, { raw in
            let loop = Unmanaged<Loop>.fromOpaque(raw!).takeRetainedValue()
            loop.run()
            return nil
        }, box.toOpaque())
        guard made == 0 else {
            box.release()
            close(fds[0]); close(fds[1])
            throw CardWatcherError("cannot start the card watcher's thread (\(String(cString: strerror(made))))")
        }
        self.loop = loop
        thread = handle
    }

    /// Ends the thread (after the handler call under way, if any) and, unless called from the
    /// handler, waits for it. Idempotent; dropping the watcher does it too.
    public func stop() {
        guard !loop.stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = write(loop.wake.write, &byte, 1)
        // From the handler (the watcher's own thread) it cannot wait for itself.
        if pthread_equal(thread, pthread_self()) != 0 { pthread_detach(thread) } else { pthread_join(thread, nil) }
        close(loop.wake.write)
    }

    deinit {
        stop()
    }
}

/// Why cards cannot be watched: one line with the fix.
public struct CardWatcherError: Error, CustomStringConvertible, Sendable, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The kernel's `sound` events through libudev (loaded on first use): a netlink monitor filtered
/// to the subsystem, nonblocking.
public final class UdevCardEvents: CardEventSource, @unchecked Sendable {
    /// Which netlink multicast group to listen on.
    public enum Group: String, Sendable {
        /// Events after udevd has handled them (device nodes made, permissions set): what a desktop has.
        case udev
        /// The kernel's own events, before udev: for machines without udevd (containers), where
        /// the `udev` group stays silent.
        case kernel

        /// `udev` when udevd runs (/run/udev/control exists), else `kernel`.
        public static var preferred: Group {
            FileManager.default.fileExists(atPath: "/run/udev/control") ? .udev : .kernel
        }
    }

    public let group: Group
    /// The kernel subsystem watched: "sound" (another only in tests, where no sound device can
    /// come or go but a network device's uevent can be triggered).
    public let subsystem: String
    private let monitor: OpaquePointer
    private let lock = Mutex<Void>(())

    public init(group: Group = .preferred, subsystem: String = "sound") throws(CardWatcherError) {
        var error = [CChar](repeating: 0, count: 512)
        guard let monitor = sfx_udev_open(group.rawValue, subsystem, &error, error.count) else {
            let line = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw CardWatcherError("sound cards cannot be followed: \(line); a device unplugged is then reopened only by retrying")
        }
        self.group = group
        self.subsystem = subsystem
        self.monitor = monitor
    }

    deinit {
        sfx_udev_close(monitor)
    }

    public var descriptor: Int32 { sfx_udev_fd(monitor) }

    public func receive() -> [SoundDeviceEvent] {
        lock.withLock { _ in
            var events: [SoundDeviceEvent] = []
            var raw = sfx_udev_event()
            while sfx_udev_receive(monitor, &raw) == 1 {
                func text<T>(_ field: inout T) -> String {
                    withUnsafeBytes(of: &field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                }
                events.append(SoundDeviceEvent(action: text(&raw.action), sysname: text(&raw.sysname), devpath: text(&raw.devpath),
                                               devnode: text(&raw.devnode), id: text(&raw.id)))
            }
            return events
        }
    }
}

/// Events a test makes: `send` queues one and makes `descriptor` readable, as a netlink socket
/// is when the kernel has something to say.
public final class SyntheticCardEvents: CardEventSource, @unchecked Sendable {
    private let queue = Mutex<[SoundDeviceEvent]>([])
    private let pipe: (read: Int32, write: Int32)

    public init() {
        var fds: [Int32] = [-1, -1]
        precondition(makePipe(&fds), "pipe: \(String(cString: strerror(errno)))")
        pipe = (fds[0], fds[1])
    }

    deinit {
        close(pipe.read)
        close(pipe.write)
    }

    public var descriptor: Int32 { pipe.read }

    public func send(_ event: SoundDeviceEvent) {
        queue.withLock { $0.append(event) }
        var byte: UInt8 = 1
        _ = write(pipe.write, &byte, 1)
    }

    /// The events a USB card gives when plugged in (card, control, one playback PCM) or out.
    public func sendCard(_ action: String, index: Int, id: String = "", devpath: String? = nil) {
        let base = devpath ?? "/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0/sound/card\(index)"
        send(SoundDeviceEvent(action: action, sysname: "card\(index)", devpath: base, id: id))
        send(SoundDeviceEvent(action: action, sysname: "controlC\(index)", devpath: base + "/controlC\(index)",
                              devnode: "/dev/snd/controlC\(index)"))
        send(SoundDeviceEvent(action: action, sysname: "pcmC\(index)D0p", devpath: base + "/pcmC\(index)D0p",
                              devnode: "/dev/snd/pcmC\(index)D0p"))
    }

    public func receive() -> [SoundDeviceEvent] {
        var drain = [UInt8](repeating: 0, count: 256)
        while read(pipe.read, &drain, drain.count) > 0 {}
        return queue.withLock { events in
            defer { events.removeAll() }
            return events
        }
    }
}

/// A pipe whose ends are close-on-exec and nonblocking.
private func makePipe(_ fds: inout [Int32]) -> Bool {
    guard pipe(&fds) == 0 else { return false }
    for fd in fds {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }
    return true
}
