// A crossfade at the end of a stream (MixerCommand.crossfadeAtEnd): the new stream starts on the
// frame that makes its fade end on the old stream's last frame, whatever the render blocks,
// through a pause of the old voice, with the end known only from the producer's finish (the fade
// then what is left), and at once when the old voice is gone. Expected frames come from the
// streams' constant levels and the fade's length.
import XCTest
@testable import SFXCore

final class StreamCrossfadeAtEndTests: XCTestCase {
    /// The rings of a test: a request holds its ring unretained, as the engine's callers keep it.
    var rings: [StreamRing] = []

    func ring(level: Float, frames: Int, finished: Bool = true) -> StreamRing {
        let ring = StreamRing(capacity: 8192, channels: 1)
        rings.append(ring)
        let samples = [Float](repeating: level, count: frames)
        samples.withUnsafeBufferPointer { _ = ring.write($0.baseAddress!, frames: frames) }
        if finished { ring.finish() }
        return ring
    }

    func render(_ mixer: Mixer, frames: Int, chunk: Int) -> [Float] {
        var out: [Float] = []
        while out.count < frames {
            var block = [Float](repeating: 0, count: min(chunk, frames - out.count))
            block.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress!, frameCount: $0.count) }
            out += block
        }
        return out
    }

    func request(_ id: UInt64, _ ring: StreamRing, fade: Int = 0, from: UInt64? = nil) -> StreamRequest {
        var request = StreamRequest(voice: VoiceID(id), stream: ring, group: .effects, fadeInFrames: fade)
        request.crossfadeFrom = from.map { VoiceID($0) }
        return request
    }

    /// The old stream (0.5) alone, then old·cos + new·sin over `fade` frames ending on its last
    /// frame `end`, then the new stream (0.25) alone.
    func check(_ out: [Float], end: Int, fade: Int, file: StaticString = #filePath, line: UInt = #line) {
        let start = end - fade
        XCTAssertEqual(out[start - 1], 0.5, accuracy: 1e-6, "the old stream alone before", file: file, line: line)
        for j in 0..<fade {
            let up = Float(j + 1) / Float(fade), down = 1 - up
            let want = 0.5 * sin(down * .pi / 2) + 0.25 * sin(up * .pi / 2)
            if abs(out[start + j] - want) > 1e-5 {
                return XCTFail("fade frame \(j): \(out[start + j]) instead of \(want)", file: file, line: line)
            }
        }
        XCTAssertEqual(out[end], 0.25, accuracy: 1e-6, "the new stream alone from the old one's end", file: file, line: line)
    }

    func testTheFadeEndsOnTheOldStreamsLastFrameWhateverTheBlocks() {
        for chunk in [64, 37, 1000] {
            let mixer = Mixer(format: mono, configuration: testConfiguration())
            mixer.apply(.playStream(request(1, ring(level: 0.5, frames: 2_000))))
            var out = render(mixer, frames: 100, chunk: chunk)
            mixer.apply(.crossfadeAtEnd(request(2, ring(level: 0.25, frames: 3_000), fade: 500, from: 1), expectedEnd: .max))
            XCTAssertEqual(mixer.scheduledCount, 1, "waiting for the frame")
            out += render(mixer, frames: 3_000, chunk: chunk)
            check(out, end: 2_000, fade: 500)
        }
    }

    func testAnExpectedEndServesUntilTheProducerFinishes() {
        let mixer = Mixer(format: mono, configuration: testConfiguration())
        let old = ring(level: 0.5, frames: 2_000, finished: false)
        mixer.apply(.playStream(request(1, old)))
        mixer.apply(.crossfadeAtEnd(request(2, ring(level: 0.25, frames: 3_000), fade: 500, from: 1), expectedEnd: 2_000))
        let out = render(mixer, frames: 2_500, chunk: 128)
        check(out, end: 2_000, fade: 500)
    }

    /// Paused for a while, the old voice holds its place: the fade still ends on its last frame.
    func testAPauseOfTheOldVoiceDelaysTheFade() {
        let mixer = Mixer(format: mono, configuration: testConfiguration())
        mixer.apply(.playStream(request(1, ring(level: 0.5, frames: 2_000))))
        mixer.apply(.crossfadeAtEnd(request(2, ring(level: 0.25, frames: 3_000), fade: 500, from: 1), expectedEnd: .max))
        var out = render(mixer, frames: 400, chunk: 64)
        mixer.apply(.pause(VoiceID(1)))
        out += render(mixer, frames: 700, chunk: 64)
        mixer.apply(.resume(VoiceID(1)))
        var ends: [Int] = []
        while out.count < 6_000 {
            out += render(mixer, frames: 64, chunk: 64)
            mixer.drainEvents { event, frame in if event == .stopped(VoiceID(1)) || event == .finished(VoiceID(1)) { ends.append(frame) } }
        }
        let end = try! XCTUnwrap(ends.first)
        XCTAssertGreaterThan(end, 2_600, "later by the time it held")
        check(out, end: end, fade: 500)
    }

    /// The end known only 200 frames before it (a producer that finishes late): the fade is the
    /// 200 frames left, still ending on the last one.
    func testAnEndKnownLateShortensTheFade() {
        let mixer = Mixer(format: mono, configuration: testConfiguration())
        let old = ring(level: 0.5, frames: 2_000, finished: false)
        mixer.apply(.playStream(request(1, old)))
        mixer.apply(.crossfadeAtEnd(request(2, ring(level: 0.25, frames: 3_000), fade: 500, from: 1), expectedEnd: .max))
        var out = render(mixer, frames: 1_800, chunk: 100)
        XCTAssertEqual(mixer.scheduledCount, 1)
        old.finish()
        out += render(mixer, frames: 700, chunk: 100)
        check(out, end: 2_000, fade: 200)
    }

    func testWithTheOldVoiceGoneTheNewOneStartsAtOnce() {
        let mixer = Mixer(format: mono, configuration: testConfiguration())
        mixer.apply(.crossfadeAtEnd(request(2, ring(level: 0.25, frames: 3_000), fade: 500, from: 9), expectedEnd: .max))
        XCTAssertEqual(mixer.scheduledCount, 0)
        let out = render(mixer, frames: 200, chunk: 64)
        XCTAssertEqual(out[0], 0.25 * Float(fadeIn(0)), accuracy: 1e-6, "the start fade alone, not the 500-frame fade")
        XCTAssertEqual(out[150], 0.25, accuracy: 1e-6)
    }
}
