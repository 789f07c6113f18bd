// Streaming voices: a producer writes frames into a StreamRing between renders, as a reader
// thread does, and the voice must play exactly those frames, in order, whatever the ring's size;
// frames missing when they are due play as silence and count as underruns, and the voice goes on
// from where it was once they arrive. Expected samples are the frames written (a ramp), times the
// documented 10-frame start fade.
import XCTest
@testable import SFXCore

final class StreamVoiceTests: XCTestCase {
    /// Frame i of the test stream.
    func source(_ i: Int) -> Float { Float(i % 5000) / 10_000 }

    /// Writes frames `from..<to` of the source into `ring` (mono); returns how many fit.
    @discardableResult
    func produce(_ ring: StreamRing, from: Int, to: Int) -> Int {
        let frames = (from..<to).map(source)
        return frames.withUnsafeBufferPointer { ring.write($0.baseAddress!, frames: $0.count) }
    }

    func render(_ mixer: Mixer, frames: Int) -> [Float] {
        var out = [Float](repeating: 0, count: frames * mixer.format.channels)
        out.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress!, frameCount: frames) }
        return out
    }

    func events(_ mixer: Mixer) -> [(MixerEvent, Int)] {
        var result: [(MixerEvent, Int)] = []
        mixer.drainEvents { result.append(($0, $1)) }
        return result
    }

    func testAStreamThroughASmallRingPlaysEveryFrameInOrderAndFinishesAtItsEnd() {
        let mixer = Mixer(format: mono, configuration: testConfiguration())
        let ring = StreamRing(capacity: 256, channels: 1)
        let total = 20_000
        var written = produce(ring, from: 0, to: total)
        XCTAssertEqual(written, 256, "no more than the ring holds before anything is released")
        mixer.apply(.playStream(StreamRequest(voice: VoiceID(1), stream: ring, group: .effects)))
        var output: [Float] = []
        var ended: Int?
        while output.count < total + 500 {
            output += render(mixer, frames: 100)
            XCTAssertEqual(ring.releasedFrames, min(output.count, total))
            written += produce(ring, from: written, to: total)
            if written == total, ring.endFrame == nil { ring.finish() }
            for (event, frame) in events(mixer) {
                XCTAssertEqual(event, .finished(VoiceID(1)))
                ended = frame
            }
        }
        XCTAssertEqual(ended, total)
        for k in 0..<total {
            let want = source(k) * Float(fadeIn(k))
            if abs(output[k] - want) > 1e-6 { return XCTFail("frame \(k): \(output[k]) instead of \(want)") }
        }
        XCTAssertTrue(output[total...].allSatisfy { $0 == 0 })
        XCTAssertEqual(ring.underruns, 0)
    }

    func testAProducerThatFallsBehindGivesCountedSilenceAndThePlayGoesOnWhereItWas() {
        let mixer = Mixer(format: mono, configuration: testConfiguration())
        let ring = StreamRing(capacity: 4096, channels: 1)
        produce(ring, from: 0, to: 100)
        mixer.apply(.playStream(StreamRequest(voice: VoiceID(1), stream: ring, group: .effects)))
        let first = render(mixer, frames: 300)
        XCTAssertEqual(ring.underrunFrames, 200)
        XCTAssertEqual(ring.underruns, 4, "one per render block that ran short: 64–128, 128–192, 192–256, 256–300")
        XCTAssertTrue(first[100..<300].allSatisfy { $0 == 0 })
        XCTAssertEqual(ring.releasedFrames, 100)
        produce(ring, from: 100, to: 400)
        ring.finish()
        let second = render(mixer, frames: 400)
        for k in 0..<300 { XCTAssertEqual(second[k], source(100 + k), accuracy: 1e-6) }
        XCTAssertEqual(events(mixer).map(\.0), [.finished(VoiceID(1))])
    }

    func testReleaseIsLeftToTheCallerWhenConfiguredAndRereadingAnOldCursorIsPossible() {
        var configuration = testConfiguration()
        configuration.releasesStreamsAfterRender = false
        let mixer = Mixer(format: mono, configuration: configuration)
        let ring = StreamRing(capacity: 1024, channels: 1)
        produce(ring, from: 0, to: 2000)
        mixer.apply(.playStream(StreamRequest(voice: VoiceID(1), stream: ring, group: .effects)))
        _ = render(mixer, frames: 500)
        XCTAssertEqual(ring.releasedFrames, 0, "nothing released until the caller says so")
        XCTAssertEqual(ring.writableFrames, 0, "so the producer cannot overwrite frames that may be rendered again")
        mixer.releaseStreams()
        XCTAssertEqual(ring.releasedFrames, 500)
        XCTAssertEqual(ring.writableFrames, 500)
    }

    func testStereoStreamAtRateTwoPausedAndResumed() {
        let mixer = Mixer(format: stereo, configuration: testConfiguration())
        let ring = StreamRing(capacity: 8192, channels: 2)
        let frames = (0..<4000).flatMap { [source($0), -source($0)] }
        _ = frames.withUnsafeBufferPointer { ring.write($0.baseAddress!, frames: 4000) }
        ring.finish()
        mixer.apply(.playStream(StreamRequest(voice: VoiceID(1), stream: ring, group: .effects, rate: 2, paused: true)))
        XCTAssertTrue(render(mixer, frames: 200).allSatisfy { $0 == 0 }, "started paused: silent, position held")
        XCTAssertEqual(ring.releasedFrames, 0)
        mixer.apply(.resume(VoiceID(1)))
        let out = render(mixer, frames: 2100)
        for k in 50..<1990 {
            XCTAssertEqual(out[2 * k], source(2 * k), accuracy: 1e-6)
            XCTAssertEqual(out[2 * k + 1], -source(2 * k), accuracy: 1e-6)
        }
        XCTAssertEqual(events(mixer).map(\.0), [.finished(VoiceID(1))])
    }
}
