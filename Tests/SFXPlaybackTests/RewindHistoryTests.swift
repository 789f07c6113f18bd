import XCTest
import SFXCore
import SFX
@testable import SFXPlayback

/// What rewind mode may restore. Commands apply to the mixer once, so a snapshot taken before a
/// command was applied must never be restored: the command's voice would be gone, without an
/// event, and its completion would never come (16 threads of plays through the C API left
/// hundreds waiting until sfx_close). Frames cannot tell such a snapshot from a good one.
final class RewindHistoryTests: XCTestCase {
    let format = AudioFormat(sampleRate: 48_000, channels: 2)

    func testASnapshotFromBeforeACommandIsNeverRestoredEvenAtTheSameFrame() {
        let mixer = Mixer(format: format, configuration: Mixer.Configuration(sampleRate: 48_000, maxVoices: 4))
        let history = RewindHistory(mixer: mixer, snapshots: 4, events: 64)
        let cue = Cue(name: "blip", format: AudioFormat(sampleRate: 48_000, channels: 1), interleaved: [Float](repeating: 0.1, count: 4_800))
        XCTAssertTrue(history.save(mixer))                       // snapshot 0, frame 0: before the play
        mixer.apply(.play(PlayRequest(voice: VoiceID(1), cue: cue)))
        history.commandsApplied()
        XCTAssertEqual(history.latest(atOrBefore: 0), 0, "by its frame alone, snapshot 0 would do")
        XCTAssertNil(history.restorable(atOrBefore: 0), "but it is from before the play")
        XCTAssertTrue(history.save(mixer))                       // snapshot 1, frame 0: after it
        XCTAssertEqual(history.restorable(atOrBefore: 0), 1)
        history.restore(1, into: mixer)
        XCTAssertEqual(mixer.activeVoiceCount, 1, "the restored mixer still plays the voice")
        withExtendedLifetime(cue) {}
    }

    func testWhenTheSnapshotAfterACommandCannotBeSavedNothingIsRestorable() {
        let mixer = Mixer(format: format, configuration: Mixer.Configuration(sampleRate: 48_000, maxVoices: 4))
        let history = RewindHistory(mixer: mixer, snapshots: 2, events: 64)
        var buffer = [Float](repeating: 0, count: 2 * 128)
        let cue = Cue(name: "blip", format: AudioFormat(sampleRate: 48_000, channels: 1), interleaved: [Float](repeating: 0.1, count: 4_800))
        for _ in 0..<2 {
            XCTAssertTrue(history.save(mixer))
            buffer.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress!, frameCount: 128) }
        }
        XCTAssertTrue(history.isFull)
        mixer.apply(.play(PlayRequest(voice: VoiceID(1), cue: cue)))
        history.commandsApplied()
        XCTAssertFalse(history.save(mixer), "every slot is still needed")
        XCTAssertNil(history.restorable(atOrBefore: mixer.frameTime), "both snapshots are from before the play")
        withExtendedLifetime(cue) {}
    }
}
