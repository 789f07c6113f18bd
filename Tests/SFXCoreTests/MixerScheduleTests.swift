import XCTest
@testable import SFXCore

/// Plays at a frame (`MixerCommand.playAt`): the voice's first frame is that output frame,
/// whatever the render blocks, exactly as a `.play` applied at that frame time.
final class MixerScheduleTests: XCTestCase {
    let cue = monoCue(frames: 300) { _ in 0.25 }
    let other = monoCue(frames: 200) { i in 0.1 * sin(Double(i) * 0.05) }

    func playAt(_ id: UInt64, _ cue: Cue, _ frame: Int, gain: Float = 1, pan: Float = 0,
                group: SoundGroup = .effects) -> MixerCommand {
        .playAt(PlayRequest(voice: VoiceID(id), cue: cue, gain: gain, pan: pan, group: group), frame: frame)
    }

    /// Renders with every command applied at frame 0 and the renders in `chunk`-frame calls.
    func renderAhead(_ commands: [MixerCommand], frames: Int, chunk: Int) -> (samples: [Float], events: [(MixerEvent, Int)], mixer: Mixer) {
        let mixer = Mixer(format: stereo, configuration: testConfiguration())
        for command in commands { mixer.apply(command) }
        var samples = [Float](repeating: .nan, count: frames * 2)
        var events: [(MixerEvent, Int)] = []
        var done = 0
        while done < frames {
            let count = min(chunk, frames - done)
            samples.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress! + done * 2, frameCount: count) }
            mixer.drainEvents { events.append(($0, $1)) }
            done += count
        }
        return (samples, events, mixer)
    }

    func testAPlayAtAFrameIsThePlayAppliedAtThatFrameBitForBitWhateverTheBlocks() {
        let starts = [1, 63, 64, 65, 500, 777, 1_000]
        let commands = starts.enumerated().map { playAt(UInt64($0.offset + 1), $0.offset % 2 == 0 ? cue : other, $0.element,
                                                        gain: 0.3, pan: Float($0.offset) * 0.2 - 0.6) }
        let reference = renderInChunks(starts.enumerated().map {
            at($0.element, play(UInt64($0.offset + 1), $0.offset % 2 == 0 ? cue : other, gain: 0.3, pan: Float($0.offset) * 0.2 - 0.6))
        }, frames: 1_600, chunks: [64])
        for chunk in [1, 7, 64, 256, 480, 1_600] {
            let got = renderAhead(commands, frames: 1_600, chunk: chunk)
            XCTAssertTrue(got.samples.elementsEqual(reference.samples) { $0.bitPattern == $1.bitPattern }, "chunks of \(chunk)")
            XCTAssertEqual(got.mixer.scheduledCount, 0)
        }
    }

    func testTheFirstFrameOfTheVoiceIsItsFrameByTheLaws() {
        let got = renderAhead([playAt(1, cue, 321)], frames: 700, chunk: 256)
        let (l, r) = panLaw(0)
        for frame in 0..<321 { XCTAssertEqual(got.samples[frame * 2], 0, "silent before, frame \(frame)") }
        for k in 0..<20 {
            XCTAssertEqual(Double(got.samples[(321 + k) * 2]), 0.25 * l * fadeIn(k), accuracy: 1e-6, "frame \(321 + k)")
            XCTAssertEqual(Double(got.samples[(321 + k) * 2 + 1]), 0.25 * r * fadeIn(k), accuracy: 1e-6)
        }
        XCTAssertEqual(got.events.first?.0, .finished(VoiceID(1)))
        XCTAssertEqual(got.events.first?.1, 621, "it ends 300 frames after it began")
    }

    func testAFramePastStartsAtOnceAndSaysHowLate() {
        let mixer = Mixer(format: stereo, configuration: testConfiguration())
        var buffer = [Float](repeating: 0, count: 200 * 2)
        buffer.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress!, frameCount: 200) }
        mixer.apply(playAt(1, cue, 150))
        mixer.apply(playAt(2, cue, 200))   // exactly now: on time
        var events: [MixerEvent] = []
        mixer.drainEvents { event, _ in events.append(event) }
        XCTAssertEqual(events, [.late(VoiceID(1), frames: 50)])
        XCTAssertEqual(mixer.playingVoiceCount, 2, "both started at once")
        XCTAssertEqual(mixer.scheduledCount, 0)
    }

    func testTheScheduleHoldsItsCapacityAndRejectsOneMore() {
        let mixer = Mixer(format: stereo, configuration: testConfiguration())
        for n in 0..<Mixer.scheduleCapacity { mixer.apply(playAt(UInt64(n + 1), cue, 10_000 + n)) }
        mixer.apply(playAt(999, cue, 20_000))
        var events: [MixerEvent] = []
        mixer.drainEvents { event, _ in events.append(event) }
        XCTAssertEqual(events, [.rejected(VoiceID(999), .scheduleFull)])
        XCTAssertEqual(mixer.scheduledCount, Mixer.scheduleCapacity)
        XCTAssertTrue(PlayRejection.scheduleFull.description.contains("64 plays"), PlayRejection.scheduleFull.description)
    }

    func testStopsAndReleasesCancelWaitingPlays() {
        let mixer = Mixer(format: stereo, configuration: testConfiguration())
        mixer.apply(playAt(1, cue, 1_000))
        mixer.apply(playAt(2, cue, 1_000, group: .music))
        mixer.apply(playAt(3, other, 1_000))
        mixer.apply(playAt(4, cue, 2_000))
        mixer.apply(.stop(VoiceID(1), fadeFrames: 0))
        mixer.apply(.stopGroup(.music, fadeFrames: 0))
        mixer.apply(.releaseCue(other.key))
        var events: [MixerEvent] = []
        mixer.drainEvents { event, _ in events.append(event) }
        XCTAssertEqual(events, [.stopped(VoiceID(1)), .stopped(VoiceID(2)), .rejected(VoiceID(3), .cueReleasing), .cueReleased(other.key)])
        XCTAssertEqual(mixer.scheduledCount, 1)
        mixer.apply(.stopAll(fadeFrames: 0))
        mixer.drainEvents { event, _ in events.append(event) }
        XCTAssertEqual(events.last, .stopped(VoiceID(4)))
        XCTAssertEqual(mixer.scheduledCount, 0)
    }

    /// A snapshot holds the waiting plays: restored before their frame, the mixer starts them
    /// again, bit for bit (rewind mode counts on it).
    func testASnapshotHoldsTheSchedule() {
        let mixer = Mixer(format: stereo, configuration: testConfiguration())
        mixer.apply(playAt(1, cue, 300))
        var first = [Float](repeating: 0, count: 600 * 2), again = first
        first.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress!, frameCount: 100) }
        let snapshot = MixerSnapshot(shapedLike: mixer)
        snapshot.save(mixer)
        first.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress! + 200, frameCount: 500) }
        XCTAssertEqual(mixer.scheduledCount, 0)
        snapshot.restore(into: mixer)
        XCTAssertEqual(mixer.scheduledCount, 1)
        again.withUnsafeMutableBufferPointer {
            mixer.render(into: $0.baseAddress! + 200, frameCount: 333)
            mixer.render(into: $0.baseAddress! + 200 + 333 * 2, frameCount: 167)
        }
        XCTAssertTrue(first[200...].elementsEqual(again[200...]) { $0.bitPattern == $1.bitPattern })
        XCTAssertNotEqual(first[600], 0, "the voice sounds from frame 300")
    }
}
