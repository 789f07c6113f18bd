// Following a card by its name: the virtual card unplugged and plugged in again at another index,
// reopened by its stable name when the watcher reports it back.
import Foundation
import Glibc
import XCTest
import SFXCardSupport
import SFXDevice

final class CardFollowingTests: XCTestCase {
    private func opens(_ name: String) -> ALSAError? { Self.opens(name) }

    private static func opens(_ name: String) -> ALSAError? {
        do {
            let device = try PCMPlayback(PlaybackRequest(device: name, periodFrames: 480, periodCount: 3))
            device.close()
            return nil
        } catch {
            return error
        }
    }

    func testTheVirtualCardOpensByItsIdOrItsIndexNow() throws {
        let card = try VirtualCard()
        defer { try? card.remove() }
        card.makeCurrent()
        XCTAssertEqual(card.cardIndex, 0)
        XCTAssertEqual(card.cardID, "sfxcard")
        XCTAssertNil(opens(card.pcmName(card: "0")))
        XCTAssertNil(opens(card.pcmName(card: "sfxcard")))
        XCTAssertEqual(opens(card.pcmName(card: "1"))?.code, ENODEV, "no card 1")
        XCTAssertEqual(opens(card.pcmName(card: "Speaker"))?.code, ENODEV, "no card of that id")
        XCTAssertNil(opens(card.pcmName), "the card's other names are as they were")
        XCTAssertNil(opens(card.hardwarePCMName))
        XCTAssertEqual(PCMRoute.plugins(of: card.pcmName(card: "0")), ["plug", "sfxcard"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: card.asoundRoot.path), "no tree until asked for")
        let root = card.makeAsoundTree()
        XCTAssertEqual(CardName.cards(asoundRoot: root.path).map(\.id), ["sfxcard"])
        func mode(_ url: URL) -> mode_t { var info = stat(); _ = lstat(url.path, &info); return info.st_mode & 0o7777 }
        XCTAssertEqual([mode(root), mode(root.appending(path: "card0")), mode(root.appending(path: "card0/id"))], [0o700, 0o700, 0o600])
    }

    /// A card configured by index is resolved to its stable name at start; unplugged, it is gone
    /// (ENODEV, transient); plugged in again at another index, the name by index no longer opens
    /// and the stable name does, the index it now has found in the asound tree.
    func testACardReopenedByNameAfterItsIndexChanged() throws {
        let card = try VirtualCard()
        defer { try? card.remove() }
        card.makeCurrent()
        card.cardID = "Speaker"
        card.makeAsoundTree()
        let configured = "sfxcard_card:0"
        let resolved = try XCTUnwrap(CardName.resolve(configured, asoundRoot: card.asoundRoot.path))
        XCTAssertEqual(resolved.stableName, "sfxcard_card:CARD=Speaker", "DEV only when given, but for hw and plughw")
        XCTAssertNil(opens(resolved.stableName))

        card.disconnect()
        let lost = try XCTUnwrap(opens(resolved.stableName))
        XCTAssertEqual(lost.code, ENODEV)
        XCTAssertTrue(lost.isTransient)
        XCTAssertNil(CardName.resolve(configured, asoundRoot: card.asoundRoot.path), "card 0 is gone from the tree")

        card.reconnect(index: 3)
        XCTAssertEqual(card.cardIndex, 3)
        XCTAssertEqual(opens(configured)?.code, ENODEV, "by its old index it is not there")
        XCTAssertNil(opens(resolved.stableName), "by its name it is")
        XCTAssertNil(opens("sfxcard_card:3"))
        XCTAssertEqual(CardName.cardIndex(id: "Speaker", asoundRoot: card.asoundRoot.path), 3)
        XCTAssertTrue(try card.events().contains { $0.kind == .reconnect }, "the log parses: reconnect index=3 is a reconnect")
    }

    /// The watcher's report of the card coming back (synthetic udev events, as the kernel sends for
    /// a USB card) is what reopens it: the handler opens the stable name once the card is back.
    func testTheWatchersAddEventReopensTheCardByName() throws {
        let card = try VirtualCard()
        defer { try? card.remove() }
        card.makeCurrent()
        card.cardID = "Speaker"
        card.makeAsoundTree()
        let stable = try XCTUnwrap(CardName.resolve("sfxcard_card:0", asoundRoot: card.asoundRoot.path)).stableName
        card.disconnect()
        let source = SyntheticCardEvents()
        let reopened = DispatchSemaphore(value: 0)
        let results = LockedList()
        let watcher = try CardWatcher(source: source, asoundRoot: card.asoundRoot.path) { change in
            guard change.action != .remove, change.cardID == "Speaker" else { return }
            results.append("\(change.sysname): \(Self.opens(stable).map(\.description) ?? "opened")")
            reopened.signal()
        }
        defer { watcher.stop() }
        source.sendCard("remove", index: 0)
        card.reconnect(index: 2)
        source.sendCard("add", index: 2)
        for _ in 0..<3 { XCTAssertEqual(reopened.wait(timeout: .now() + 5), .success) }
        XCTAssertEqual(results.items, ["card2: opened", "controlC2: opened", "pcmC2D0p: opened"])
    }
}

private final class LockedList: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func append(_ item: String) { lock.withLock { list.append(item) } }
    var items: [String] { lock.withLock { list } }
}
