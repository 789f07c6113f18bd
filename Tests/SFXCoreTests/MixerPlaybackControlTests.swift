// Pause, resume, rate and fade-in of voices, and ducking of groups. Expectations follow the laws
// in Mixer's documentation, written down here without the mixer: a pause glides the voice's
// pause gain 1 → 0 over the 50-frame smoothing (frame j after the command gets 1 − (j+1)/50)
// while the cue still advances, then the voice holds its position; a resume glides 0 → 1 from
// there. At rate r the voice reads position k·r at output frame k, linearly interpolated.
import XCTest
@testable import SFXCore

final class MixerPlaybackControlTests: XCTestCase {
    /// A mono ramp whose value tells its position: frame i is i / 10,000.
    let ramp = monoCue(frames: 2000) { Double($0) / 10_000 }

    /// What a voice of `ramp` started at 0, paused at 100 and resumed at 300 plays at frame t.
    func pausedAndResumed(_ t: Int) -> Double {
        let value = { (i: Int) in Double(i) / 10_000 }
        if t < 100 { return value(t) * fadeIn(t) }
        if t < 150 { return value(t) * (1 - Double(t - 100 + 1) / 50) }
        if t < 300 { return 0 }
        return value(150 + t - 300) * glide(0, 1, t - 300)
    }

    func testVoicePauseRampsDownHoldsItsPositionAndResumesWithoutAGap() {
        let out = renderScript([at(0, play(1, ramp)), at(100, .pause(VoiceID(1))), at(300, .resume(VoiceID(1)))],
                               frames: 800, format: mono)
        assertChannel(out, 0, frames: 0..<800, pausedAndResumed)
        XCTAssertTrue(out.events.isEmpty, "a paused voice does not end")
    }

    func testGroupPauseAndPauseOfEverythingHoldVoicesTheSameWay() {
        let group = renderScript([at(0, play(1, ramp)), at(100, .setGroupPaused(.effects, true)),
                                  at(300, .setGroupPaused(.effects, false))], frames: 800, format: mono)
        assertChannel(group, 0, frames: 0..<800, pausedAndResumed)
        let all = renderScript([at(0, play(1, ramp)), at(100, .setAllPaused(true)), at(300, .setAllPaused(false))],
                               frames: 800, format: mono)
        assertChannel(all, 0, frames: 0..<800, pausedAndResumed)
    }

    func testAVoiceStartedInAPausedGroupWaitsAndAGroupResumeLeavesAVoicePauseAlone() {
        let out = renderScript([
            at(0, .setGroupPaused(.music, true)),
            at(10, play(1, ramp, group: .music)),
            at(20, play(2, ramp, group: .music)), at(30, .pause(VoiceID(2))),
            at(500, .setGroupPaused(.music, false)),
        ], frames: 1000, format: mono)
        assertChannel(out, 0, frames: 0..<500) { _ in 0 }
        // Voice 1 starts from its first frame at 500 (fade-in and pause gain both rising);
        // voice 2 stays paused by its own pause.
        assertChannel(out, 0, frames: 500..<1000) { t in
            let k = t - 500
            return Double(k) / 10_000 * fadeIn(k) * glide(0, 1, k)
        }
    }

    func testStoppingAPausedVoiceEndsIt() {
        let out = renderScript([at(0, play(1, ramp)), at(10, .pause(VoiceID(1))), at(200, .stop(VoiceID(1), fadeFrames: 0))],
                               frames: 400, format: mono)
        XCTAssertEqual(terminalEvents(out)[VoiceID(1)]?.map(\.event), [.stopped(VoiceID(1))])
    }

    func testRateTwoHalvesTheDurationAndRateHalfDoublesIt() {
        let fast = renderScript([at(0, .play(PlayRequest(voice: VoiceID(1), cue: ramp, rate: 2)))], frames: 3000, format: mono)
        XCTAssertEqual(terminalEvents(fast)[VoiceID(1)]?.map(\.frame), [1000])
        assertChannel(fast, 0, frames: 10..<1000) { k in Double(2 * k) / 10_000 }
        let slow = renderScript([at(0, .play(PlayRequest(voice: VoiceID(1), cue: ramp, rate: 0.5)))], frames: 5000, format: mono)
        XCTAssertEqual(terminalEvents(slow)[VoiceID(1)]?.map(\.frame), [4000])
        // Halfway between two frames the interpolation gives their mean: (k/2)/10,000 exactly.
        assertChannel(slow, 0, frames: 10..<3998) { k in Double(k) / 2 / 10_000 }
    }

    func testRateChangesWhilePlayingAndRateOneIsBitExact() {
        let out = renderScript([at(0, play(1, ramp)), at(100, .setRate(VoiceID(1), 2)), at(200, .setRate(VoiceID(1), 1))],
                               frames: 600, format: mono)
        assertChannel(out, 0, frames: 10..<600) { t in
            let position = t < 100 ? t : (t < 200 ? 100 + 2 * (t - 100) : 300 + (t - 200))
            return Double(position) / 10_000
        }
        let plain = renderScript([at(0, play(1, ramp))], frames: 600, format: mono)
        let unity = renderScript([at(0, .play(PlayRequest(voice: VoiceID(1), cue: ramp, rate: 1)))], frames: 600, format: mono)
        XCTAssertEqual(plain.samples, unity.samples)
    }

    func testFadeInOnPlay() {
        let level = monoCue(frames: 4000) { _ in 0.5 }
        let out = renderScript([at(0, .play(PlayRequest(voice: VoiceID(1), cue: level, fadeInFrames: 1000)))],
                               frames: 2000, format: mono)
        assertChannel(out, 0, frames: 0..<2000) { k in 0.5 * min(1, Double(k + 1) / 1000) }
    }

    func testAlertsDuckMusicByTwelveDecibelsAndTheMusicComesBack() {
        // The default rule, at the test's rate: 12 dB, 20 ms attack, 300 ms release.
        let music = monoCue(frames: 48_000) { _ in 0.2 }
        let alert = monoCue(frames: 4800) { _ in 0.1 }
        let rule = Ducking.alertsDuckMusic(sampleRate: 48_000)
        XCTAssertEqual(Double(rule.gain), pow(10, -12.0 / 20), accuracy: 1e-6)
        let out = renderScript([at(0, play(1, music, group: .music)), at(4800, play(2, alert, group: .alerts))],
                               frames: 40_000, format: mono)
        assertChannel(out, 0, frames: 1000..<4800) { _ in 0.2 }
        // Ducked from the alert's first frame, over the 960-frame attack.
        assertChannel(out, 0, frames: 4800..<(4800 + 960)) { t in
            0.2 * glide(1, Double(rule.gain), t - 4800, over: 960) + 0.1 * fadeIn(t - 4800)
        }
        assertChannel(out, 0, frames: (4800 + 960)..<9600) { _ in 0.2 * Double(rule.gain) + 0.1 }
        // Released from the frame after the alert's last, back to 0.2 over 300 ms.
        assertChannel(out, 0, frames: 9600..<(9600 + 14_400)) { t in 0.2 * glide(Double(rule.gain), 1, t - 9600, over: 14_400) }
        assertChannel(out, 0, frames: (9600 + 14_400)..<40_000) { _ in 0.2 }
    }

    func testConfiguredDuckingAndItsRemoval() {
        var configuration = testConfiguration()
        configuration.ducking = [Ducking(trigger: .ui, target: .effects, gain: 0.5, attackFrames: 0, releaseFrames: 0)]
        let bed = monoCue(frames: 10_000) { _ in 0.2 }
        let click = monoCue(frames: 1000) { _ in 0 }
        let out = renderScript([at(0, play(1, bed)), at(1000, play(2, click, group: .ui)),
                                at(3000, .setDucking(Ducking(trigger: .ui, target: .effects, gain: 1, attackFrames: 0, releaseFrames: 0))),
                                at(3000, play(3, click, group: .ui))],
                               frames: 5000, format: mono, configuration: configuration)
        assertChannel(out, 0, frames: 1000..<2000) { _ in 0.1 }
        assertChannel(out, 0, frames: 2100..<3000) { _ in 0.2 }
        assertChannel(out, 0, frames: 3000..<4000) { _ in 0.2 }
    }

    func testPauseRateFadeInAndDuckingDoNotDependOnHowRenderingIsSplit() {
        let music = monoCue(frames: 3000) { sin(Double($0) * 0.01) * 0.3 }
        let alert = monoCue(frames: 700) { sin(Double($0) * 0.05) * 0.2 }
        let script = [
            at(0, .play(PlayRequest(voice: VoiceID(1), cue: music, loops: -1, group: .music, fadeInFrames: 333))),
            at(100, .play(PlayRequest(voice: VoiceID(2), cue: alert, group: .alerts, rate: 1.37))),
            at(450, .pause(VoiceID(1))), at(701, .resume(VoiceID(1))), at(900, .setRate(VoiceID(1), 0.61)),
            at(1200, .setGroupPaused(.music, true)), at(1301, .setGroupPaused(.music, false)),
            at(1500, play(3, alert, group: .alerts)), at(1800, .setAllPaused(true)), at(1900, .setAllPaused(false)),
        ]
        let whole = renderInChunks(script, frames: 5000, chunks: [5000])
        for chunks in [[1], [7], [64], [13, 200, 3]] {
            let split = renderInChunks(script, frames: 5000, chunks: chunks)
            XCTAssertEqual(split.samples, whole.samples, "chunks \(chunks)")
            XCTAssertEqual(split.events, whole.events, "chunks \(chunks)")
        }
    }
}
