// A Playlist on the virtual card: two WAV files play gaplessly (the card's output is their
// concatenation, frame for frame), the item-changed callback names each item, next/previous
// move between items, and a file at another rate joins in resampled, without a gap.
import Foundation
import Synchronization
import XCTest
import SFXCore
import SFXCardSupport
import SFX
import SFXMedia
@testable import SFXPlayback

final class PlaylistTests: XCTestCase {
    /// A file of `frames` frames whose frame i is `value(i)`.
    func writeFile(_ setup: EngineOnCard, _ name: String, frames: Int, rate: Int = 48_000, _ value: (Int) -> Float) throws -> URL {
        let url = setup.card.directory.appending(path: name)
        try WAVAudio(sampleRate: rate, channels: 1, samples: (0..<frames).map(value)).write(to: url)
        return url
    }

    func heard(_ setup: EngineOnCard) throws -> [Float] {
        let left = try setup.recording().channel(0)
        guard let onset = left.firstIndex(where: { abs($0) > 1e-7 }) else { return [] }
        return Array(left[onset...])
    }

    func second(_ i: Int) -> Float { -0.4 * PlayerTests.signal(i + 7_777) }

    func testTwoWAVFilesPlayGaplesslyAndEachItemIsAnnounced() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let a = try writeFile(setup, "a.wav", frames: 30_000) { PlayerTests.signal($0) }
        let b = try writeFile(setup, "b.wav", frames: 20_000, second)
        let list = try Playlist(engine: setup.engine, items: [a, b])
        let changes = Mutex<[Int]>([])
        let finished = Mutex<Bool?>(nil)
        list.onItemChanged = { index in changes.withLock { $0.append(index) } }
        list.didFinish = { ok in finished.withLock { $0 = ok } }
        try list.play()
        XCTAssertTrue(eventually(timeout: 20) { finished.withLock { $0 } != nil })
        XCTAssertEqual(finished.withLock { $0 }, true)
        XCTAssertEqual(changes.withLock { $0 }, [0, 1])
        XCTAssertEqual(list.currentIndex, 1)
        setup.engine.close()
        let heard = try heard(setup)
        let expected = (0..<30_000).map { PlayerTests.signal($0) } + (0..<20_000).map(second)
        XCTAssertGreaterThanOrEqual(heard.count, expected.count)
        for k in 20..<min(heard.count, expected.count) where heard[k] != expected[k] {
            return XCTFail("frame \(k) (item \(k < 30_000 ? 0 : 1)): \(heard[k]) instead of \(expected[k])")
        }
        XCTAssertTrue(heard[expected.count...].allSatisfy { $0 == 0 }, "nothing after the last item")
    }

    /// A 44.1 kHz second item is resampled to the mixer's 48 kHz and follows at once: the
    /// stream's length is the first item's plus round(n × 48000 / 44100), with no silence between.
    func testAnItemAtAnotherRateFollowsResampledWithoutAGap() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let a = try writeFile(setup, "a.wav", frames: 24_000) { PlayerTests.signal($0) }
        let b = try writeFile(setup, "b.wav", frames: 22_050, rate: 44_100) { 0.3 + 0.1 * Float(sin(Double($0) / 30)) }
        let list = try Playlist(engine: setup.engine, items: [a, b])
        let finished = Mutex<Bool?>(nil)
        list.didFinish = { ok in finished.withLock { $0 = ok } }
        try list.play()
        XCTAssertTrue(eventually(timeout: 20) { finished.withLock { $0 } != nil })
        setup.engine.close()
        let heard = try heard(setup)
        let last = heard.lastIndex { abs($0) > 1e-7 } ?? 0
        XCTAssertEqual(last + 1, 24_000 + 24_000, "the items' frames at 48 kHz, back to back")
        XCTAssertEqual(Array(heard[20..<24_000]), (20..<24_000).map { PlayerTests.signal($0) })
        // The second item is its own whole-file decode at 48 kHz, starting on the frame after the
        // first's last (stated tolerance 1e-4: the same libsoxr filter fed in other blocks).
        let whole = try AudioDecoder(format: AudioFormat(sampleRate: 48_000, channels: 2)).decode(contentsOf: b)
        XCTAssertEqual(whole.frameCount, 24_000)
        var worst: Float = 0
        for k in 0..<24_000 { worst = max(worst, abs(heard[24_000 + k] - whole.samples[2 * k])) }
        XCTAssertLessThan(worst, 1e-4)
    }

    func testNextPreviousAndRepeat() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let items = try (0..<3).map { n in try writeFile(setup, "\(n).wav", frames: 240_000) { _ in 0.1 * Float(n + 1) } }
        let list = try Playlist(engine: setup.engine, items: items)
        XCTAssertThrowsError(try Playlist(engine: setup.engine, items: []))
        XCTAssertThrowsError(try Playlist(engine: setup.engine, items: [URL(string: "https://example.com/a.ogg")!]))
        try list.play()
        XCTAssertEqual(list.currentIndex, 0)
        try list.next()
        XCTAssertEqual(list.currentIndex, 1)
        try list.next()
        XCTAssertEqual(list.currentIndex, 2)
        try list.previous()
        XCTAssertEqual(list.currentIndex, 1)
        list.repeats = true
        try list.next(); try list.next()
        XCTAssertEqual(list.currentIndex, 0, "past the last, the first again")
        try list.previous()
        XCTAssertEqual(list.currentIndex, 2)
        XCTAssertTrue(list.isPlaying)
        list.repeats = false
        try list.next()
        XCTAssertFalse(list.isPlaying, "next past the last without repeat stops")
    }
}

final class PlaylistCrossfadeTests: XCTestCase {
    /// With `crossfade`, the first item hands over to the second at its end: the card hears
    /// old·cos + new·sin over the fade, which ends exactly on the first item's last frame (the
    /// mixer starts it on its frame), the second item whole after it, and both items are announced.
    func testItemsCrossfadeEqualPowerWhenAsked() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let a = PlayerCrossfadeTests.noise(seed: 5, frames: 48_000), b = PlayerCrossfadeTests.noise(seed: 6, frames: 48_000)
        let urlA = setup.card.directory.appending(path: "a.wav"), urlB = setup.card.directory.appending(path: "b.wav")
        try WAVAudio(sampleRate: 48_000, channels: 1, samples: a).write(to: urlA)
        try WAVAudio(sampleRate: 48_000, channels: 1, samples: b).write(to: urlB)
        let list = try Playlist(engine: setup.engine, items: [urlA, urlB])
        list.crossfade = .milliseconds(250)
        let changes = Mutex<[Int]>([])
        let finished = Mutex<Bool?>(nil)
        list.onItemChanged = { index in changes.withLock { $0.append(index) } }
        list.didFinish = { ok in finished.withLock { $0 = ok } }
        try list.play()
        XCTAssertTrue(eventually(timeout: 20) { finished.withLock { $0 } != nil })
        XCTAssertEqual(finished.withLock { $0 }, true)
        XCTAssertEqual(changes.withLock { $0 }, [0, 1])
        setup.engine.close()
        let left = try setup.recording().channel(0)
        let onset = try XCTUnwrap(left.firstIndex { abs($0) > 1e-7 })
        let heard = Array(left[onset...])
        let start = try XCTUnwrap((20..<heard.count).first { heard[$0] != a[$0] })
        // The fade's length: where the second item alone begins (b[k] from then on), its last
        // frame included (envelopes 1 and 0 exactly: the second item alone).
        let alone = try XCTUnwrap((1_000..<24_000).first { f in (0..<64).allSatisfy { heard[start + f + $0] == b[f + $0] } })
        let fade = alone + 1
        XCTAssertEqual(fade, 12_000, "the whole 250 ms")
        XCTAssertEqual(start + fade, 48_000, "ending on the first item's last frame")
        var worst: Float = 0
        for j in 0..<fade {
            let up = Float(j + 1) / Float(fade), down = 1 - Float(j + 1) / Float(fade)
            worst = max(worst, abs(heard[start + j] - (a[start + j] * sin(down * .pi / 2) + b[j] * sin(up * .pi / 2))))
        }
        XCTAssertLessThan(worst, 1e-5, "old·cos + new·sin over \(fade) frames")
        XCTAssertEqual(Array(heard[(start + alone)..<(start + 48_000)]), Array(b[alone...]))
    }
}
