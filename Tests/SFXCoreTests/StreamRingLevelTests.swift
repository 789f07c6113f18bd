// A stream's levels for a player's meters: measured by the producer per chunk as it writes,
// read for the chunks just before the released frame. Expectations are computed here from the
// samples written.
import XCTest
@testable import SFXCore

final class StreamRingLevelTests: XCTestCase {
    func testLevelsAreThoseOfTheChunksJustPlayed() {
        let ring = StreamRing(capacity: 4096, channels: 2)
        let chunk = StreamRing.levelChunk
        // Chunk k: left a constant ±(k+1)/100 alternating in sign, right half of it.
        func left(_ frame: Int) -> Float { Float(frame / chunk + 1) / 100 * (frame % 2 == 0 ? 1 : -1) }
        var frame = 0
        func write(_ count: Int) {
            let samples = (frame..<frame + count).flatMap { [left($0), left($0) / 2] }
            XCTAssertEqual(samples.withUnsafeBufferPointer { ring.write($0.baseAddress!, frames: count) }, count)
            frame += count
        }
        XCTAssertEqual(ring.level(channel: 0, before: 0).peak, 0)
        // Odd write sizes, so chunks are filled across several writes.
        for count in [100, 300, 37, 900, 1] { write(count) }   // 1,338 frames: chunks 0…4 whole, 5 partial
        // Nothing released yet: a meter at frame 0 reads nothing.
        XCTAssertEqual(ring.level(channel: 0, before: 0).rms, 0)
        // At frame 1,024 the four chunks before it are chunks 0…3.
        let at1024 = ring.level(channel: 0, before: 1024)
        XCTAssertEqual(at1024.peak, 0.04, accuracy: 1e-7)
        let expected = ((1...4).map { Float($0 * $0) / 10_000 }.reduce(0, +) / 4).squareRoot()
        XCTAssertEqual(at1024.rms, expected, accuracy: 1e-6)
        XCTAssertEqual(ring.level(channel: 1, before: 1024).peak, 0.02, accuracy: 1e-7)
        // A frame inside chunk 5, which is not whole yet: chunks 1…4.
        XCTAssertEqual(ring.level(channel: 0, before: 1300).peak, 0.05, accuracy: 1e-7)
        // Beyond what was written: no further than the written frames.
        XCTAssertEqual(ring.level(channel: 0, before: 100_000).peak, 0.05, accuracy: 1e-7)
    }

    func testAChunkSlotIsResetWhenTheRingComesRound() {
        let ring = StreamRing(capacity: 1024, channels: 1)
        let loud = [Float](repeating: 0.9, count: 1024), quiet = [Float](repeating: 0.1, count: 1024)
        // Many rings' worth of frames, the consumer releasing behind the producer as a mixer does.
        var written = 0
        for round in 0..<40 {
            let source = round == 39 ? quiet : loud
            var done = 0
            while done < 1024 {
                let n = source.withUnsafeBufferPointer { ring.write($0.baseAddress! + done, frames: 1024 - done) }
                done += n
                written += n
                ring.released.store(written, ordering: .releasing)
            }
        }
        let level = ring.level(channel: 0, before: written)
        XCTAssertEqual(level.peak, 0.1, accuracy: 1e-7, "the last chunks are the quiet ones, with nothing left of the loud")
        XCTAssertEqual(level.rms, 0.1, accuracy: 1e-6)
    }
}
