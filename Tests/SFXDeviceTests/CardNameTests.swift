// A device named by card index resolves to the card's stable name, against an asound tree of the
// test's own laid out like /proc/asound.
import Foundation
import XCTest
import SFXCardSupport
import SFXDevice

final class CardNameTests: XCTestCase {
    private var root: URL!

    override func setUpWithError() throws {
        root = try CardDirectory.makeTemporary(prefix: "sfx-asound-")
        for (index, id) in [(0, "PCH"), (1, "Speaker"), (3, "HDMI")] {
            let card = root.appending(path: "card\(index)")
            try FileManager.default.createDirectory(at: card, withIntermediateDirectories: true)
            try Data("\(id)\n".utf8).write(to: card.appending(path: "id"))
        }
        try Data("not a card\n".utf8).write(to: root.appending(path: "cards"))
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: root)
    }

    private func stable(_ name: String) -> String? { CardName.resolve(name, asoundRoot: root.path)?.stableName }

    func testAnIndexBecomesTheCardsId() {
        XCTAssertEqual(stable("hw:1,0"), "hw:CARD=Speaker,DEV=0")
        XCTAssertEqual(stable("hw:1"), "hw:CARD=Speaker,DEV=0")
        XCTAssertEqual(stable("plughw:1"), "plughw:CARD=Speaker,DEV=0")
        XCTAssertEqual(stable("plughw:3,7"), "plughw:CARD=HDMI,DEV=7")
        XCTAssertEqual(stable("hw:0,0,1"), "hw:CARD=PCH,DEV=0,SUBDEV=1")
        XCTAssertEqual(stable("hw:CARD=1,DEV=2"), "hw:CARD=Speaker,DEV=2")
        XCTAssertEqual(stable("front:CARD=0,DEV=0"), "front:CARD=PCH,DEV=0")
        XCTAssertEqual(stable("sysdefault:1"), "sysdefault:CARD=Speaker", "a definition that takes CARD alone keeps it alone")
    }

    func testAnIdStaysAndFindsItsIndex() throws {
        let speaker = try XCTUnwrap(CardName.resolve("hw:CARD=Speaker,DEV=0", asoundRoot: root.path))
        XCTAssertEqual(speaker.cardIndex, 1)
        XCTAssertEqual(speaker.cardID, "Speaker")
        XCTAssertEqual(speaker.device, 0)
        XCTAssertEqual(speaker.stableName, "hw:CARD=Speaker,DEV=0")
        XCTAssertEqual(stable("hw:Speaker"), "hw:CARD=Speaker,DEV=0")
        XCTAssertEqual(stable("hw:CARD=\"HDMI\",DEV=3"), "hw:CARD=HDMI,DEV=3")
        XCTAssertEqual(CardName.cardIndex(id: "HDMI", asoundRoot: root.path), 3)
        XCTAssertEqual(CardName.cards(asoundRoot: root.path).map(\.id), ["PCH", "Speaker", "HDMI"])
    }

    func testNamesWithoutAPresentCardResolveToNothing() {
        XCTAssertNil(stable("default"))
        XCTAssertNil(stable("pipewire"))
        XCTAssertNil(stable("hw:2,0"), "no card 2")
        XCTAssertNil(stable("hw:CARD=USB,DEV=0"), "no card of that id")
        XCTAssertNil(stable("hw:1,x"), "DEV is a number")
        XCTAssertNil(stable("hw:"))
        XCTAssertNil(stable("hw:FOO=1"))
    }

    /// The card moves to another index (a USB speaker plugged in again): its stable name finds it there.
    func testTheStableNameFollowsTheCardToItsNewIndex() throws {
        let before = try XCTUnwrap(CardName.resolve("hw:1,0", asoundRoot: root.path))
        try FileManager.default.moveItem(at: root.appending(path: "card1"), to: root.appending(path: "card4"))
        XCTAssertNil(CardName.resolve("hw:1,0", asoundRoot: root.path))
        let after = try XCTUnwrap(CardName.resolve(before.stableName, asoundRoot: root.path))
        XCTAssertEqual(after.cardIndex, 4)
        XCTAssertEqual(after.stableName, before.stableName)
    }
}
