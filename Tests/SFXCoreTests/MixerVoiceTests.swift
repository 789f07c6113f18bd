// Voice management: stealing, instance caps, rejections, terminal events and cue release. The
// expected victims follow the documented rule (lowest priority first, then oldest); expected
// event frames are the command frame plus the documented fade length.
import XCTest
@testable import SFXCore

final class MixerVoiceTests: XCTestCase {
    let long = monoCue(frames: 10_000) { _ in 0.1 }

    func testStealsLowestPriorityThenOldestAndRejectsWhenOutranked() {
        var configuration = testConfiguration(maxVoices: 3)
        configuration.tailVoices = 3
        let out = renderScript([
            at(0, play(1, long, priority: .low)),
            at(10, play(2, long, priority: .normal)),
            at(20, play(3, long, priority: .normal)),
            at(30, play(4, long, priority: .normal)),     // steals 1: lowest priority
            at(40, play(5, long, priority: .normal)),     // steals 2: oldest of the normals
            at(50, play(6, long, priority: .low)),        // outranked by every playing voice
            at(60, play(7, long, priority: .critical)),   // steals 3
        ], frames: 1000, configuration: configuration)
        let events = terminalEvents(out)
        XCTAssertEqual(events[VoiceID(1)]?.map(\.event), [.stolen(VoiceID(1))])
        XCTAssertEqual(events[VoiceID(1)]?.first?.frame, 30 + 100)
        XCTAssertEqual(events[VoiceID(2)]?.map(\.event), [.stolen(VoiceID(2))])
        XCTAssertEqual(events[VoiceID(3)]?.map(\.event), [.stolen(VoiceID(3))])
        XCTAssertEqual(events[VoiceID(6)]?.map(\.event), [.rejected(VoiceID(6), .noVoiceAvailable)])
        XCTAssertEqual(events[VoiceID(6)]?.first?.frame, 50)
        XCTAssertNil(events[VoiceID(4)])
        XCTAssertNil(events[VoiceID(5)])
        XCTAssertNil(events[VoiceID(7)])
        XCTAssertEqual(out.stolenCount, 3)
        XCTAssertEqual(out.rejectedCount, 1)

        // The stolen voice fades out over stopFadeFrames while the new one fades in: until the
        // next play, the sum at frame 30 + j is voices 2 and 3, the stealer's fade-in and the tail.
        let centre = panLaw(0).left
        assertChannel(out, 0, frames: 30..<40) { t in
            let j = t - 30
            return 0.1 * centre * (1 + 1 + fadeIn(j) + (1 - Double(j + 1) / 100))
        }
    }

    func testEqualPriorityStealsTheOldestAndTailsThatRunOutAreCut() {
        var configuration = testConfiguration(maxVoices: 2)
        configuration.tailVoices = 1
        let out = renderScript([
            at(0, play(1, long)), at(1, play(2, long)),
            at(2, play(3, long)),    // steals 1 into the only tail slot
            at(3, play(4, long)),    // steals 2; the tail slot is taken, so voice 1 is cut now
        ], frames: 400, configuration: configuration)
        let events = terminalEvents(out)
        XCTAssertEqual(events[VoiceID(1)]?.map(\.event), [.stolen(VoiceID(1))])
        XCTAssertEqual(events[VoiceID(1)]?.first?.frame, 3)
        XCTAssertEqual(events[VoiceID(2)]?.map(\.event), [.stolen(VoiceID(2))])
        XCTAssertEqual(events[VoiceID(2)]?.first?.frame, 103)
    }

    func testInstanceCapStealsTheOldestInstanceOfThatCue() {
        let other = monoCue(frames: 10_000) { _ in 0.2 }
        let out = renderScript([
            at(0, play(1, long, maxInstances: 2)),
            at(5, play(2, other, maxInstances: 2)),
            at(10, play(3, long, maxInstances: 2)),
            at(20, play(4, long, maxInstances: 2)),    // third instance of `long`: steals 1
            at(30, play(5, long, maxInstances: 2)),    // steals 3
        ], frames: 300)
        let events = terminalEvents(out)
        XCTAssertEqual(events[VoiceID(1)]?.map(\.event), [.stolen(VoiceID(1))])
        XCTAssertEqual(events[VoiceID(1)]?.first?.frame, 120)
        XCTAssertEqual(events[VoiceID(3)]?.map(\.event), [.stolen(VoiceID(3))])
        XCTAssertEqual(events[VoiceID(3)]?.first?.frame, 130)
        XCTAssertEqual(Set(events.keys), [VoiceID(1), VoiceID(3)])
        // Afterwards two instances of `long` and the other cue play: 0.1·2 + 0.2 at the centre.
        assertChannel(out, 0, frames: 200..<300) { _ in (0.1 * 2 + 0.2) * panLaw(0).left }
    }

    func testRejectsMismatchedFormatDuplicateVoiceAndFinishesEmptyCuesAtOnce() {
        let wrongRate = Cue(name: "44k", format: AudioFormat(sampleRate: 44_100, channels: 1), interleaved: [0.5, 0.5])
        let empty = Cue(name: "empty", format: mono, interleaved: [Float]())
        let out = renderScript([
            at(0, play(1, wrongRate)), at(0, play(2, long)), at(3, play(2, long)), at(4, play(3, empty)),
        ], frames: 10)
        XCTAssertEqual(out.events.map(\.event), [
            .rejected(VoiceID(1), .formatMismatch), .rejected(VoiceID(2), .duplicateVoice), .finished(VoiceID(3)),
        ])
        XCTAssertEqual(out.events.map(\.frame), [0, 3, 4])
        XCTAssertEqual(PlayRejection.formatMismatch.description,
                       "the cue's sample rate differs from the mixer's; resample it when loading")
    }

    func testEveryPlayEndsWithExactlyOneTerminalEvent() {
        var random = SplitMix64(state: 7)
        let cues = (1...4).map { n in monoCue(frames: 50 * n) { i in sin(Double(i * n) * 0.1) * 0.1 } }
        var script: [ScheduledCommand] = []
        var nextVoice: UInt64 = 1
        for frame in stride(from: 0, to: 20_000, by: 13) {
            switch random.next() % 10 {
            case 0...4:
                script.append(at(frame, play(
                    nextVoice, cues[Int(random.next() % 4)], loops: Int(random.next() % 4) - 1,
                    group: SoundGroup(rawValue: UInt8(random.next() % 8))!,
                    priority: VoicePriority(rawValue: UInt8(random.next() % 256)),
                    maxInstances: Int(random.next() % 4))))
                nextVoice += 1
            case 5, 6:
                script.append(at(frame, .stop(VoiceID(random.next() % nextVoice), fadeFrames: Int(random.next() % 300))))
            case 7:
                script.append(at(frame, .stopGroup(SoundGroup(rawValue: UInt8(random.next() % 8))!, fadeFrames: 50)))
            case 8:
                script.append(at(frame, .releaseCue(cues[Int(random.next() % 4)].key)))
            default:
                script.append(at(frame, .setGain(VoiceID(random.next() % nextVoice), 0.5)))
            }
        }
        script.append(at(20_000, .stopAll(fadeFrames: 0)))
        var configuration = testConfiguration(maxVoices: 6)
        configuration.tailVoices = 2
        let out = OfflineRenderer.render(
            script, format: stereo, configuration: configuration, length: .untilFinished(maximumFrames: 30_000))
        let events = terminalEvents(out)
        XCTAssertEqual(Set(events.keys), Set((1..<nextVoice).map(VoiceID.init(rawValue:))))
        XCTAssertTrue(events.values.allSatisfy { $0.count == 1 }, "\(events.filter { $0.value.count != 1 })")
        XCTAssertGreaterThan(out.stolenCount, 0)
        XCTAssertGreaterThan(out.rejectedCount, 0)
        XCTAssertLessThan(out.frameCount, 30_000)
    }

    func testReleaseCueReportsOnceTheLastVoiceOfItHasEnded() {
        let cue = monoCue(frames: 5000) { _ in 0.3 }
        let out = renderScript([
            at(0, play(1, cue)),
            at(50, play(2, cue)),
            at(60, .stop(VoiceID(2), fadeFrames: 400)),   // already fading, longer than the release fade
            at(100, .releaseCue(cue.key)),
            at(150, play(3, cue)),                         // too late: the cue is going away
            at(400, play(4, cue)),                         // after the release: a new play is fine
            at(400, .releaseCue(cue.key)),                 // and a second release works as well
        ], frames: 1000)
        XCTAssertEqual(out.events.map(\.event), [
            .rejected(VoiceID(3), .cueReleasing),
            .stopped(VoiceID(1)), .stopped(VoiceID(2)), .cueReleased(cue.key),
            .stopped(VoiceID(4)), .cueReleased(cue.key),
        ])
        // Voice 1 fades over stopFadeFrames; voice 2 keeps its fade but is shortened to the release's.
        XCTAssertEqual(out.events.map(\.frame), [150, 200, 200, 200, 500, 500])
        assertChannel(out, 0, frames: 200..<400) { _ in 0 }
        // A cue nobody plays is released at once.
        let idle = monoCue(frames: 10) { _ in 0 }
        XCTAssertEqual(renderScript([at(7, .releaseCue(idle.key))], frames: 10).events.map(\.frame), [7])
    }

    func testEventOverflowIsCounted() {
        var configuration = testConfiguration(maxVoices: 0)
        configuration.eventCapacity = 4
        let mixer = Mixer(format: stereo, configuration: configuration)
        for v in 0..<10 { mixer.apply(play(UInt64(v), long)) }
        var drained: [MixerEvent] = []
        mixer.drainEvents { event, _ in drained.append(event) }
        XCTAssertEqual(drained, (0..<4).map { .rejected(VoiceID(UInt64($0)), .noVoiceAvailable) })
        XCTAssertEqual(mixer.droppedEventCount, 6)
        XCTAssertEqual(mixer.rejectedCount, 10)
        mixer.drainEvents { _, _ in XCTFail("drained twice") }
    }

    func testOfflineRendererStopsWhenAllVoicesHaveEnded() {
        let cue = monoCue(frames: 1234) { _ in 0.2 }
        let once = OfflineRenderer.render(
            [at(100, play(1, cue, loops: 1))], format: mono, length: .untilFinished(maximumFrames: 1_000_000))
        XCTAssertEqual(once.frameCount, 100 + 2 * 1234)
        XCTAssertEqual(once.samples.count, once.frameCount)
        let forever = OfflineRenderer.render(
            [at(0, play(1, cue, loops: -1))], format: stereo, length: .untilFinished(maximumFrames: 5000))
        XCTAssertEqual(forever.frameCount, 5000)
        XCTAssertEqual(forever.samples.count, 10_000)
        XCTAssertTrue(forever.events.isEmpty)
    }
}
