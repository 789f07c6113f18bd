// The lock-free ring: capacity rounding, full and empty behaviour, and one million items moved
// between two threads, checked to arrive complete and in order (the values are their own
// sequence numbers, so the expectation is simply 0, 1, 2, …).
import Foundation
import XCTest
@testable import SFXCore

final class SPSCRingTests: XCTestCase {
    func testCapacityIsAPowerOfTwoAndFullRingRefusesPushes() {
        XCTAssertEqual(SPSCRing<Int>(capacity: 5).capacity, 8)
        XCTAssertEqual(SPSCRing<Int>(capacity: 0).capacity, 1)
        let ring = SPSCRing<Int>(capacity: 4)
        XCTAssertNil(ring.pop())
        for i in 0..<4 { XCTAssertTrue(ring.push(i)) }
        XCTAssertFalse(ring.push(99))
        XCTAssertEqual(ring.count, 4)
        XCTAssertEqual(ring.pop(), 0)
        XCTAssertTrue(ring.push(4))
        XCTAssertEqual((0..<4).compactMap { _ in ring.pop() }, [1, 2, 3, 4])
        XCTAssertNil(ring.pop())
    }

    func testCarriesMixerCommands() {
        let ring = SPSCRing<MixerCommand>(capacity: 2)
        XCTAssertTrue(ring.push(.stop(VoiceID(3), fadeFrames: 12)))
        guard case .stop(let voice, let fade)? = ring.pop() else { return XCTFail("expected a stop") }
        XCTAssertEqual(voice, VoiceID(3))
        XCTAssertEqual(fade, 12)
    }

    func testTwoThreadsMoveAMillionItemsInOrder() {
        let count = 1_000_000
        let ring = SPSCRing<Int>(capacity: 1024)
        let producer = Thread {
            var next = 0
            while next < count {
                if ring.push(next) { next += 1 }
            }
        }
        producer.start()
        var expected = 0
        var outOfOrder = 0
        let deadline = Date().addingTimeInterval(120)
        while expected < count && Date() < deadline {
            if let value = ring.pop() {
                if value != expected { outOfOrder += 1 }
                expected += 1
            }
        }
        XCTAssertEqual(expected, count)
        XCTAssertEqual(outOfOrder, 0)
        XCTAssertNil(ring.pop())
    }
}
