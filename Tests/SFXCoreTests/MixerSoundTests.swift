// What the mixer's output sounds like, sample by sample, against the closed-form expectations
// described at the top of TestSupport.swift.
import Foundation
import XCTest
@testable import SFXCore

final class MixerSoundTests: XCTestCase {
    func testMonoCueFollowsConstantPowerPanLawWithStartFade() {
        let cue = monoCue(frames: 300) { _ in 0.5 }
        for pan in [-1.0, -0.5, 0, 0.3, 1] {
            let out = renderScript([at(0, play(1, cue, gain: 0.8, pan: Float(pan)))], frames: 400)
            let (l, r) = panLaw(pan)
            assertChannel(out, 0, frames: 0..<400) { k in k < 300 ? 0.5 * 0.8 * l * fadeIn(k) : 0 }
            assertChannel(out, 1, frames: 0..<400) { k in k < 300 ? 0.5 * 0.8 * r * fadeIn(k) : 0 }
        }
        // The centre is −3 dB on each side.
        let centre = renderScript([at(0, play(1, cue))], frames: 100)
        XCTAssertEqual(20 * log10(Double(centre.samples[2 * 50]) / 0.5), -3.01, accuracy: 0.01)
    }

    func testStereoCueFollowsBalanceLaw() {
        let cue = stereoCue(frames: 200) { _ in (0.3, -0.6) }
        for pan in [-1.0, -0.25, 0, 0.6, 1] {
            let out = renderScript([at(0, play(1, cue, gain: 0.5, pan: Float(pan)))], frames: 250)
            assertChannel(out, 0, frames: 0..<250) { k in k < 200 ? 0.3 * 0.5 * min(1, 1 - pan) * fadeIn(k) : 0 }
            assertChannel(out, 1, frames: 0..<250) { k in k < 200 ? -0.6 * 0.5 * min(1, 1 + pan) * fadeIn(k) : 0 }
        }
    }

    func testMonoOutputDownmixesStereoCuesAndIgnoresPan() {
        let stereoTone = stereoCue(frames: 100) { i in (0.4, sin(Double(i) * 0.1) * 0.2) }
        let monoTone = monoCue(frames: 100) { i in 0.25 * cos(Double(i) * 0.05) }
        let out = renderScript(
            [at(0, play(1, stereoTone, gain: 0.9, pan: 0.7)), at(0, play(2, monoTone, gain: 0.6, pan: -1))],
            frames: 120, format: mono)
        assertChannel(out, 0, frames: 0..<120) { k in
            guard k < 100 else { return 0 }
            return ((0.4 + sin(Double(k) * 0.1) * 0.2) / 2 * 0.9 + 0.25 * cos(Double(k) * 0.05) * 0.6) * fadeIn(k)
        }
    }

    func testSameCueOverlapsItselfAndVoicesAdd() {
        let sine = monoCue(frames: 480) { i in 0.3 * sin(2 * .pi * 440 * Double(i) / 48_000) }
        let out = renderScript([at(0, play(1, sine)), at(37, play(2, sine, pan: 1))], frames: 600)
        let centre = panLaw(0), right = panLaw(1)
        func voice(_ k: Int) -> Double { k >= 0 && k < 480 ? 0.3 * sin(2 * .pi * 440 * Double(k) / 48_000) * fadeIn(k) : 0 }
        assertChannel(out, 0, frames: 0..<600) { t in voice(t) * centre.left + voice(t - 37) * right.left }
        assertChannel(out, 1, frames: 0..<600) { t in voice(t) * centre.right + voice(t - 37) * right.right }
    }

    func testLoopsRepeatTheCueAndFinishAfterTheLastRepeat() {
        let ramp = monoCue(frames: 90) { i in Double(i) / 200 }
        let out = renderScript([at(5, play(1, ramp, loops: 2))], frames: 400, format: mono)
        assertChannel(out, 0, frames: 0..<400) { t in
            let k = t - 5
            return k >= 0 && k < 270 ? Double(k % 90) / 200 * fadeIn(k) : 0
        }
        let events = terminalEvents(out)[VoiceID(1)]
        XCTAssertEqual(events?.count, 1)
        XCTAssertEqual(events?.first?.event, .finished(VoiceID(1)))
        XCTAssertEqual(events?.first?.frame, 5 + 270)
    }

    func testEndlessLoopPlaysUntilStopped() {
        let ramp = monoCue(frames: 30) { i in Double(i) / 100 }
        let out = renderScript([at(0, play(1, ramp, loops: -1)), at(1000, .stop(VoiceID(1), fadeFrames: 100))],
                               frames: 1200, format: mono)
        assertChannel(out, 0, frames: 0..<1200) { k in
            let envelope = k < 1000 ? fadeIn(k) : max(0, 1 - Double(k - 1000 + 1) / 100)
            return Double(k % 30) / 100 * envelope
        }
        XCTAssertEqual(terminalEvents(out)[VoiceID(1)]?.map(\.event), [.stopped(VoiceID(1))])
        XCTAssertEqual(terminalEvents(out)[VoiceID(1)]?.first?.frame, 1100)
    }

    func testStopFadesLinearlyAndNeverCutsShorterThanTheStartFade() {
        let cue = monoCue(frames: 2000) { _ in 0.5 }
        let out = renderScript([
            at(0, play(1, cue)), at(300, .stop(VoiceID(1), fadeFrames: 200)),
            at(0, play(2, cue, pan: 1)), at(400, .stop(VoiceID(2), fadeFrames: 0)),
        ], frames: 700)
        func envelope1(_ k: Int) -> Double { k < 300 ? fadeIn(k) : max(0, 1 - Double(k - 300 + 1) / 200) }
        func envelope2(_ k: Int) -> Double { k < 400 ? fadeIn(k) : max(0, 1 - Double(k - 400 + 1) / 10) }
        assertChannel(out, 0, frames: 0..<700) { k in
            0.5 * panLaw(0).left * envelope1(k) + 0.5 * panLaw(1).left * envelope2(k)
        }
        assertChannel(out, 1, frames: 0..<700) { k in
            0.5 * panLaw(0).right * envelope1(k) + 0.5 * panLaw(1).right * envelope2(k)
        }
        let events = terminalEvents(out)
        XCTAssertEqual(events[VoiceID(1)]?.first?.frame, 500)
        XCTAssertEqual(events[VoiceID(2)]?.first?.frame, 410, "a stop with no fade still fades over startFadeFrames")
    }

    func testStopDuringStartFadeFadesFromWhereTheEnvelopeIs() {
        let cue = monoCue(frames: 500) { _ in 0.8 }
        let out = renderScript([at(0, play(1, cue)), at(4, .stop(VoiceID(1), fadeFrames: 20))], frames: 40, format: mono)
        // After 4 frames the envelope stands at 0.4; it then falls to 0 over 20 frames.
        assertChannel(out, 0, frames: 0..<40) { k in
            0.8 * (k < 4 ? fadeIn(k) : max(0, 0.4 * (1 - Double(k - 4 + 1) / 20)))
        }
    }

    func testGainAndPanChangesGlideInTheChannelGainDomain() {
        let cue = monoCue(frames: 1000) { _ in 0.5 }
        let out = renderScript([
            at(0, play(1, cue, gain: 1, pan: -0.5)),
            at(300, .setGain(VoiceID(1), 0.25)),
            at(500, .setPan(VoiceID(1), 0.5)),
        ], frames: 1000)
        for (channel, law) in [(0, { (p: Double) in panLaw(p).left }), (1, { (p: Double) in panLaw(p).right })] {
            assertChannel(out, channel, frames: 0..<1000) { k in
                if k < 300 { return 0.5 * law(-0.5) * fadeIn(k) }
                if k < 500 { return 0.5 * glide(law(-0.5), 0.25 * law(-0.5), k - 300) }
                return 0.5 * glide(0.25 * law(-0.5), 0.25 * law(0.5), k - 500)
            }
        }
    }

    func testGroupGainMuteAndMasterGainGlide() {
        let cue = monoCue(frames: 1000) { _ in 0.4 }
        let out = renderScript([
            at(0, play(1, cue, group: .ui)),
            at(0, play(2, cue, gain: 0.5, group: .music)),
            at(200, .setGroupGain(.ui, 0.5)),
            at(400, .setGroupMuted(.music, true)),
            at(600, .setMasterGain(2)),
            at(800, .setGroupMuted(.music, false)),
        ], frames: 1000, format: mono)
        assertChannel(out, 0, frames: 0..<1000) { k in
            let ui = k < 200 ? 1 : glide(1, 0.5, k - 200)
            let music = k < 400 ? 1 : k < 800 ? glide(1, 0, k - 400) : glide(0, 1, k - 800)
            let master = k < 600 ? 1 : glide(1, 2, k - 600)
            return (0.4 * ui + 0.4 * 0.5 * music) * fadeIn(k) * master
        }
    }

    func testOutOfRangeGainAndPanAreClamped() {
        let cue = monoCue(frames: 100) { _ in 0.01 }
        let out = renderScript([
            at(0, play(1, cue, gain: .nan, pan: .infinity)),
            at(0, play(2, cue, gain: 1000, pan: .nan)),
            at(0, play(3, cue, gain: -3, pan: -7)),
        ], frames: 100)
        assertChannel(out, 0, frames: 0..<100) { k in 0.01 * 16 * panLaw(0).left * fadeIn(k) }
        assertChannel(out, 1, frames: 0..<100) { k in 0.01 * 16 * panLaw(0).right * fadeIn(k) }
    }
}

final class LimiterTests: XCTestCase {
    func testTwoHundredFiftySixFullScaleVoicesStayWithinOneAndFinite() {
        let square = monoCue(frames: 4800) { i in (i / 24) % 2 == 0 ? 1 : -1 }
        let sine = stereoCue(frames: 4800) { i in (sin(Double(i) * 0.03), cos(Double(i) * 0.05)) }
        var script: [ScheduledCommand] = []
        for v in 0..<256 {
            script.append(at(v % 7, play(UInt64(v), v % 2 == 0 ? square : sine, gain: 16, pan: Float(v % 3) - 1)))
        }
        script.append(at(2000, .setMasterGain(16)))
        let out = renderScript(script, frames: 5000, configuration: testConfiguration(maxVoices: 256))
        XCTAssertEqual(terminalEvents(out).count, 256)
        XCTAssertTrue(out.samples.allSatisfy(\.isFinite))
        XCTAssertLessThanOrEqual(out.samples.map(abs).max() ?? 0, 1)
        // The limiter holds the level near its threshold rather than silencing it.
        XCTAssertGreaterThan(out.samples[(1000 * 2)..<(4000 * 2)].map(abs).max() ?? 0, 0.8)
    }

    func testNonFiniteCueSamplesNeverReachTheOutput() {
        let broken = monoCue(frames: 100) { i in i % 3 == 0 ? .nan : i % 3 == 1 ? .infinity : 3e38 }
        let out = renderScript([at(0, play(1, broken, gain: 16)), at(0, play(2, broken, gain: 16))], frames: 200)
        XCTAssertTrue(out.samples.allSatisfy { $0.isFinite && abs($0) <= 1 })
        // NaN and infinity become silence without upsetting the limiter: a quiet cue afterwards is
        // heard unchanged once the release is over.
        let corrupt = monoCue(frames: 100) { i in i % 3 == 0 ? .nan : i % 3 == 1 ? -.infinity : 0.5 }
        let quiet = monoCue(frames: 100) { _ in 0.1 }
        let later = renderScript([at(0, play(1, corrupt)), at(48_000, play(2, quiet))], frames: 48_100, format: mono)
        XCTAssertTrue(later.samples.allSatisfy(\.isFinite))
        assertChannel(later, 0, frames: 48_010..<48_100) { _ in 0.1 }
    }

    func testQuietSignalsPassUnchangedAndLoudOnesAreHeldAtTheThreshold() {
        let justBelow = monoCue(frames: 2000) { i in 0.88 * sin(Double(i) * 0.01) }
        let quiet = renderScript([at(0, play(1, justBelow))], frames: 2000, format: mono)
        assertChannel(quiet, 0, frames: 0..<2000, accuracy: 1e-6) { k in 0.88 * sin(Double(k) * 0.01) * fadeIn(k) }

        let loud = monoCue(frames: 2000) { _ in 0.95 }
        let limited = renderScript([at(0, play(1, loud))], frames: 2000, format: mono)
        let threshold = Double(testConfiguration().limiterThreshold)
        // With instant attack, every frame past the fade-in sits exactly at the threshold.
        assertChannel(limited, 0, frames: 10..<2000, accuracy: 1e-6) { _ in threshold }
    }

    func testReleaseRecoversSmoothly() {
        let burst = monoCue(frames: 100) { _ in 1 }
        let tone = monoCue(frames: 9000) { _ in 0.5 }
        let out = renderScript([at(0, play(1, tone)), at(1000, play(2, burst, gain: 4))], frames: 9000, format: mono)
        let gains = (1200..<9000).map { Double(out.samples[$0]) / 0.5 }
        // After the burst the gain on the tone rises monotonically back to exactly 1.
        XCTAssertLessThan(gains.first!, 0.5)
        XCTAssertTrue(zip(gains, gains.dropFirst()).allSatisfy { $0 <= $1 })
        XCTAssertEqual(gains.last!, 1)
    }
}
