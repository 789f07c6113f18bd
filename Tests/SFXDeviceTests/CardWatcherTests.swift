// CardWatcher turns the sound subsystem's events into CardChanges on its own thread: driven by
// synthetic udev events (this machine has no udevd and no /dev/snd), and its libudev source
// opened on netlink as far as the machine allows.
import Foundation
import Glibc
import Synchronization
import XCTest
import SFXCardSupport
import SFXDevice

final class CardWatcherTests: XCTestCase {
    /// Collects the changes a watcher reports, and waits for a number of them.
    private final class Collector: @unchecked Sendable {
        private let changes = Mutex<[CardChange]>([])
        private let threads = Mutex<Set<String>>([])
        private let arrived = DispatchSemaphore(value: 0)

        func add(_ change: CardChange) {
            changes.withLock { $0.append(change) }
            threads.withLock { _ = $0.insert(Thread.isMainThread ? "main" : "other") }
            arrived.signal()
        }

        func wait(for count: Int, seconds: Double = 5) -> [CardChange] {
            for _ in 0..<count { _ = arrived.wait(timeout: .now() + seconds) }
            return changes.withLock { $0 }
        }

        var onMainThread: Bool { threads.withLock { $0.contains("main") } }
    }

    private var root: URL!

    override func setUpWithError() throws {
        root = try CardDirectory.makeTemporary(prefix: "sfx-watch-")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: root)
    }

    func testAPluggedCardIsReportedWithItsIndexIdAndDevices() throws {
        let source = SyntheticCardEvents()
        let collector = Collector()
        let watcher = try CardWatcher(source: source, asoundRoot: root.path) { collector.add($0) }
        defer { watcher.stop() }
        source.sendCard("add", index: 2, id: "Speaker")
        let changes = collector.wait(for: 3)
        XCTAssertEqual(changes.map(\.action), [.add, .add, .add])
        XCTAssertEqual(changes.map(\.cardIndex), [2, 2, 2])
        XCTAssertEqual(changes.map(\.sysname), ["card2", "controlC2", "pcmC2D0p"])
        XCTAssertEqual(changes.map(\.devnode), [nil, "/dev/snd/controlC2", "/dev/snd/pcmC2D0p"])
        XCTAssertEqual(changes[0].cardID, "Speaker", "the card's id attribute")
        XCTAssertTrue(changes[0].isCard)
        XCTAssertFalse(changes[2].isCard)
        XCTAssertFalse(collector.onMainThread, "the handler runs on the watcher's thread")
        XCTAssertTrue(changes[0].concerns(device: "hw:CARD=Speaker,DEV=0"))
        XCTAssertTrue(changes[0].concerns(device: "plughw:2"))
        XCTAssertFalse(changes[0].concerns(device: "hw:CARD=PCH,DEV=0"))
        XCTAssertFalse(changes[0].concerns(device: "hw:1,0"))
        XCTAssertFalse(changes[0].concerns(device: "default"))
        XCTAssertEqual(changes[0].description, "add card 2 (Speaker) card2")
        XCTAssertEqual(changes[2].description, "add card 2 /dev/snd/pcmC2D0p", "a PCM device's event has no id, and this tree no card 2")
    }

    /// An event without the id (a PCM device's) takes it from the asound tree; a removal has none.
    func testTheIdComesFromTheAsoundTreeAndARemovalHasNone() throws {
        try FileManager.default.createDirectory(at: root.appending(path: "card1"), withIntermediateDirectories: true)
        try Data("USB\n".utf8).write(to: root.appending(path: "card1/id"))
        let source = SyntheticCardEvents()
        let collector = Collector()
        let watcher = try CardWatcher(source: source, asoundRoot: root.path) { collector.add($0) }
        defer { watcher.stop() }
        source.send(SoundDeviceEvent(action: "change", sysname: "pcmC1D0p", devnode: "/dev/snd/pcmC1D0p"))
        source.send(SoundDeviceEvent(action: "remove", sysname: "card1"))
        let changes = collector.wait(for: 2)
        XCTAssertEqual(changes, [CardChange(action: .change, cardIndex: 1, cardID: "USB", sysname: "pcmC1D0p", devnode: "/dev/snd/pcmC1D0p"),
                                 CardChange(action: .remove, cardIndex: 1, cardID: nil, sysname: "card1", devnode: nil)])
    }

    func testEventsOfNoCardAreLeftOut() throws {
        let source = SyntheticCardEvents()
        let collector = Collector()
        let watcher = try CardWatcher(source: source, asoundRoot: root.path) { collector.add($0) }
        defer { watcher.stop() }
        source.send(SoundDeviceEvent(action: "add", sysname: "timer", devnode: "/dev/snd/timer"))
        source.send(SoundDeviceEvent(action: "add", sysname: "seq", devnode: "/dev/snd/seq"))
        source.send(SoundDeviceEvent(action: "bind", sysname: "card0"))
        source.send(SoundDeviceEvent(action: "remove", sysname: "card0"))
        let changes = collector.wait(for: 1)
        XCTAssertEqual(changes.map(\.sysname), ["card0"])
        XCTAssertEqual(changes.map(\.action), [.remove])
        XCTAssertEqual(CardChange.cardIndex(sysname: "pcmC12D3c"), 12)
        XCTAssertEqual(CardChange.cardIndex(sysname: "hwC0D0"), 0)
        XCTAssertNil(CardChange.cardIndex(sysname: "timer"))
    }

    /// stop() ends the thread: nothing is reported after it, and it may be called again (or from the handler).
    func testStopEndsTheWatcher() throws {
        let source = SyntheticCardEvents()
        let collector = Collector()
        let watcher = try CardWatcher(source: source, asoundRoot: root.path) { collector.add($0) }
        source.sendCard("add", index: 0)
        XCTAssertEqual(collector.wait(for: 3).count, 3)
        watcher.stop()
        watcher.stop()
        source.sendCard("remove", index: 0)
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(collector.wait(for: 0).count, 3)

        let stoppedInside = DispatchSemaphore(value: 0)
        let box = Mutex<CardWatcher?>(nil)
        let own = try CardWatcher(source: source, asoundRoot: root.path) { _ in
            box.withLock { $0?.stop() }
            stoppedInside.signal()
        }
        box.withLock { $0 = own }
        source.send(SoundDeviceEvent(action: "add", sysname: "card5"))
        XCTAssertEqual(stoppedInside.wait(timeout: .now() + 5), .success)
        box.withLock { $0 = nil }

        // Dropped without stop(), a watcher stops: its handler is not called again.
        var dropped: CardWatcher? = try CardWatcher(source: source, asoundRoot: root.path) { collector.add($0) }
        XCTAssertNotNil(dropped)
        dropped = nil
        source.sendCard("add", index: 7)
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(collector.wait(for: 0).count, 3)
    }

    /// The libudev source: libudev.so.1 loads and a netlink monitor on the `kernel` group opens here
    /// (no udevd is needed for that); the `udev` group opens too, but only udevd sends on it, so on a
    /// machine without udevd it stays silent. Neither has anything to say in the test's time (no card
    /// comes or goes), and the watcher over it starts and stops.
    func testTheUdevMonitorOpensOnNetlink() throws {
        for group in [UdevCardEvents.Group.kernel, .udev] {
            let source: UdevCardEvents
            do {
                source = try UdevCardEvents(group: group)
            } catch {
                // A sandbox may refuse netlink sockets: the line says so, and the watcher's users fall back to retrying.
                let line = String(describing: error)
                XCTAssertTrue(line.hasPrefix("sound cards cannot be followed: "), line)
                XCTAssertTrue(line.contains("netlink") || line.contains("libudev"), line)
                continue
            }
            XCTAssertGreaterThanOrEqual(source.descriptor, 0)
            XCTAssertEqual(source.group, group)
            XCTAssertEqual(source.receive(), [], "no card comes or goes")
            let watcher = try CardWatcher(source: source) { _ in }
            watcher.stop()
        }
        XCTAssertEqual(UdevCardEvents.Group.preferred,
                       FileManager.default.fileExists(atPath: "/run/udev/control") ? .udev : .kernel)
    }

    /// The kernel's own events reach a `kernel`-group monitor here (this container has no udevd
    /// but netlink works): with no sound device to plug, the same source watching the `net`
    /// subsystem gets the "change" that writing to /sys/class/net/lo/uevent makes the kernel
    /// send (root only), parsed by libudev into the event's fields.
    func testTheKernelsEventsArriveThroughLibudev() throws {
        let trigger = "/sys/class/net/lo/uevent"
        guard access(trigger, W_OK) == 0 else { throw XCTSkip("\(trigger) is not writable (root only)") }
        let source = try UdevCardEvents(group: .kernel, subsystem: "net")
        XCTAssertEqual(source.subsystem, "net")
        try Data("change".utf8).write(to: URL(filePath: trigger))
        var events: [SoundDeviceEvent] = []
        let deadline = Date() + 5
        while Date() < deadline, !events.contains(where: { $0.sysname == "lo" }) {
            var ready = pollfd(fd: source.descriptor, events: Int16(POLLIN), revents: 0)
            if poll(&ready, 1, 100) > 0 { events += source.receive() }
        }
        let lo = try XCTUnwrap(events.first { $0.sysname == "lo" }, "\(events)")
        XCTAssertEqual(lo.action, "change")
        XCTAssertEqual(lo.devpath, "/devices/virtual/net/lo")
        XCTAssertEqual(lo.devnode, "")
        XCTAssertNil(CardChange(lo), "no card's")
    }
}
