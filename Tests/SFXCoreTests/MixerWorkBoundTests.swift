// The bound on the real-time thread's work: `apply(from:limit:)` takes at most `limit` commands
// and leaves the rest queued, in order; voices are found by id and given slots without scanning,
// and that bookkeeping stays right through any order of starts, stops and ends.
import XCTest
@testable import SFXCore

final class MixerWorkBoundTests: XCTestCase {
    let dc = monoCue(frames: 10_000) { _ in 0.2 }

    /// Three commands with a budget of one a render: the second applies at the second render
    /// (frame 64), the third at the third (frame 128), in the order they were queued.
    func testCommandsBeyondTheLimitApplyInTheNextRenderInOrder() {
        let mixer = Mixer(format: mono, configuration: testConfiguration())
        let ring = SPSCRing<MixerCommand>(capacity: 8)
        XCTAssertTrue(ring.push(play(1, dc)))
        XCTAssertTrue(ring.push(play(2, dc)))
        XCTAssertTrue(ring.push(.setGain(VoiceID(1), 0.25)))
        var samples = [Float](repeating: .nan, count: 256)
        var left: [Int] = []
        var applied: [Int] = []
        samples.withUnsafeMutableBufferPointer { buffer in
            for block in 0..<4 {
                applied.append(mixer.apply(from: ring, limit: 1))
                left.append(ring.count)
                mixer.render(into: buffer.baseAddress! + block * 64, frameCount: 64)
            }
        }
        XCTAssertEqual(applied, [1, 1, 1, 0])
        XCTAssertEqual(left, [2, 1, 0, 0])
        // Mono output: a mono cue's channel gain is the voice's gain.
        func expected(_ t: Int) -> Double {
            let one = 0.2 * fadeIn(t) * (t < 128 ? 1 : glide(1, 0.25, t - 128))
            let two = t < 64 ? 0 : 0.2 * fadeIn(t - 64)
            return one + two
        }
        for t in 0..<256 {
            XCTAssertEqual(Double(samples[t]), expected(t), accuracy: 1e-5, "frame \(t)")
        }
        // The same as the three commands scheduled at those frames, bit for bit.
        let scheduled = renderScript([at(0, play(1, dc)), at(64, play(2, dc)), at(128, .setGain(VoiceID(1), 0.25))],
                                     frames: 256, format: mono)
        XCTAssertTrue(scheduled.samples.elementsEqual(samples) { $0.bitPattern == $1.bitPattern })
    }

    func testALimitLargerThanTheQueueTakesEverything() {
        let mixer = Mixer(format: stereo, configuration: testConfiguration())
        let ring = SPSCRing<MixerCommand>(capacity: 16)
        for v in 0..<10 { XCTAssertTrue(ring.push(play(UInt64(v), dc))) }
        XCTAssertEqual(mixer.apply(from: ring, limit: 256), 10)
        XCTAssertEqual(ring.count, 0)
        XCTAssertEqual(mixer.playingVoiceCount, 10)
        XCTAssertEqual(mixer.apply(from: ring, limit: 0), 0)
    }

    /// Starts, stops, gain changes and natural ends in a random order, with ids chosen to collide
    /// in the id table (multiples of 2^40 and neighbours), checked against a plain model: a play
    /// whose id sounds is rejected as a duplicate and any other is not, a stop reaches the voice
    /// it names and no other, every play ends exactly once, and the voice counts agree.
    func testVoicesAreFoundByIdThroughAnyChurn() {
        var configuration = testConfiguration(maxVoices: 48)
        configuration.tailVoices = 16
        configuration.eventCapacity = 4096
        let mixer = Mixer(format: stereo, configuration: configuration)
        let cues = [monoCue(frames: 150) { _ in 0.01 }, monoCue(frames: 40) { _ in 0.01 }, stereoCue(frames: 400) { _ in (0.01, 0.01) }]
        let ids: [UInt64] = (0..<40).map { k in k % 2 == 0 ? UInt64(k) << 40 : UInt64(k) << 40 | 1 }
        var sounding: Set<UInt64> = []
        var stopping: Set<UInt64> = []
        var plays: [UInt64: Int] = [:]
        var ends: [UInt64: Int] = [:]
        var random = SplitMix64(state: 7)
        let output = UnsafeMutablePointer<Float>.allocate(capacity: 64 * 2)
        defer { output.deallocate() }
        func collect() {
            mixer.drainEvents { event, _ in
                switch event {
                case .rejected(let voice, let why):
                    XCTAssertEqual(why, .duplicateVoice)
                    XCTAssertTrue(sounding.contains(voice.rawValue), "\(voice) rejected while not sounding")
                case .stopped(let voice):
                    XCTAssertTrue(stopping.contains(voice.rawValue), "\(voice) stopped without a stop")
                    fallthrough
                case .finished(let voice), .stolen(let voice):
                    XCTAssertTrue(sounding.remove(voice.rawValue) != nil, "\(voice) ended twice")
                    stopping.remove(voice.rawValue)
                    ends[voice.rawValue, default: 0] += 1
                case .cueReleased, .effectReleased, .late:
                    XCTFail("no cue or effect is released, no play is late")
                }
            }
        }
        for step in 0..<20_000 {
            let id = ids[Int(random.next() % UInt64(ids.count))]
            switch random.next() % 4 {
            case 0, 1:
                mixer.apply(play(id, cues[step % 3], gain: 0.5))
                if !sounding.contains(id) {
                    sounding.insert(id)
                    plays[id, default: 0] += 1
                }
            case 2:
                mixer.apply(.stop(VoiceID(id), fadeFrames: Int(random.next() % 80)))
                if sounding.contains(id) { stopping.insert(id) }
            default:
                mixer.apply(.setGain(VoiceID(id), 0.3))
            }
            collect()
            if step % 3 == 0 {
                mixer.render(into: output, frameCount: Int(random.next() % 64) + 1)
                collect()
            }
            XCTAssertEqual(mixer.activeVoiceCount, sounding.count, "step \(step)")
            if mixer.activeVoiceCount != sounding.count { break }
        }
        while mixer.activeVoiceCount > 0 {
            mixer.render(into: output, frameCount: 64)
            collect()
        }
        XCTAssertTrue(sounding.isEmpty)
        XCTAssertEqual(ends, plays, "every play ended exactly once")
        XCTAssertEqual(mixer.stolenCount, 0, "48 voices hold 40 ids")
        withExtendedLifetime(cues) {}
    }

    /// The lowest free slot is taken, so voices are summed in the order the laws state whatever
    /// came and went before. Voices 1, 2, 3 take slots 0, 1, 2; voice 1 ends; voice 4 takes slot
    /// 0, so the sum is (4 + 2) + 3, not (2 + 3) + 4 as an appended slot would give.
    func testTheLowestFreeSlotIsReused() {
        func level(_ seed: Int) -> (Int) -> Double { { i in 0.05 + Double((i * seed) % 97) * 1.37e-3 } }
        let cues = [monoCue(frames: 1000, level(3)), monoCue(frames: 1000, level(11)), monoCue(frames: 1000, level(29))]
        var configuration = testConfiguration()
        configuration.startFadeFrames = 0
        let out = renderScript([
            at(0, play(1, cues[0])), at(0, play(2, cues[1])), at(0, play(3, cues[2])),
            at(10, .stop(VoiceID(1), fadeFrames: 0)),
            at(20, play(4, cues[0])),
        ], frames: 120, format: mono, configuration: configuration)
        var ordersDiffer = false
        for t in 20..<120 {
            let four = Float(level(3)(t - 20)), two = Float(level(11)(t)), three = Float(level(29)(t))
            XCTAssertEqual(out.samples[t].bitPattern, ((0 + four) + two + three).bitPattern, "frame \(t)")
            ordersDiffer = ordersDiffer || ((four + two) + three) != ((two + three) + four)
        }
        XCTAssertTrue(ordersDiffer, "the values tell the two orders apart")
        withExtendedLifetime(cues) {}
    }
}
