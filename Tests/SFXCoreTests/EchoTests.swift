// How the expectations in these tests are computed
// ------------------------------------------------
// From the echo's law (EffectProcessor's header), in Double, without calling into the processor:
// D = round(delay·fs) frames; a mono impulse of 1 at frame 0 gives, in left + right, the taps
// wet·feedback^(k−1) at frames k·D (k = 1, 2, …), alternately left (k odd) and right (k even),
// and exact zeros everywhere else when damping is 0. With damping d the low-pass
// y = (1 − d)·x + d·y[−1] sits in the loop, so the second tap begins with wet·feedback·(1 − d)
// and continues wet·feedback·(1 − d)·dʲ. Rewind checks compare two renders bit for bit.
import Foundation
import XCTest
@testable import SFXCore

final class EchoTests: XCTestCase {
    let fs = 48_000

    func impulse(_ frames: Int, channels: Int = 1, at channel: Int = 0) -> [Float] {
        var input = [Float](repeating: 0, count: frames * channels)
        input[channel] = 1
        return input
    }

    func testTapsFollowTheLaw() {
        for (delay, feedback, wet) in [(0.01, 0.6, 0.7), (0.0213, 0.95, 1.0), (0.001, 0.3, 0.5)] as [(Float, Float, Float)] {
            let d = Int((Double(delay) * Double(fs)).rounded())
            let p = EffectProcessor(.echo(EchoSettings(delay: delay, feedback: feedback, wet: wet, damping: 0)),
                                    sampleRate: fs, rewindHeadroomFrames: 512)
            let frames = 12 * d + 7
            let out = renderEffect(p, impulse(frames), inputChannels: 1, outputChannels: 2, block: 100)
            for n in 0..<frames {
                let (l, r) = (Double(out[2 * n]), Double(out[2 * n + 1]))
                var (el, er) = (0.0, 0.0)
                if n > 0 && n % d == 0 {
                    let k = n / d
                    let tap = Double(wet) * pow(Double(feedback), Double(k - 1))
                    if k % 2 == 1 { el = tap } else { er = tap }
                }
                XCTAssertEqual(l, el, accuracy: 1e-6, "left frame \(n), delay \(delay)")
                XCTAssertEqual(r, er, accuracy: 1e-6, "right frame \(n), delay \(delay)")
                if el == 0 { XCTAssertEqual(l, 0, "left frame \(n) exactly silent") }
                if er == 0 { XCTAssertEqual(r, 0, "right frame \(n) exactly silent") }
            }
            // Mono output: left + right.
            let mono = renderEffect(EffectProcessor(.echo(EchoSettings(delay: delay, feedback: feedback, wet: wet, damping: 0)),
                                              sampleRate: fs, rewindHeadroomFrames: 512), impulse(frames), inputChannels: 1, outputChannels: 1)
            for n in 0..<frames { XCTAssertEqual(mono[n], out[2 * n] + out[2 * n + 1]) }
        }
    }

    func testFeedbackZeroGivesOneTap() {
        let p = EffectProcessor(.echo(EchoSettings(delay: 0.005, feedback: 0, wet: 0.8, damping: 0.5)), sampleRate: fs, rewindHeadroomFrames: 256)
        let out = renderEffect(p, impulse(4000), inputChannels: 1, outputChannels: 1)
        let d = 240
        for n in 0..<4000 { XCTAssertEqual(out[n], n == d ? 0.8 : 0, "frame \(n)") }
    }

    /// The damping low-pass acts in the loop only: the first tap is untouched, the second begins
    /// with wet·feedback·(1 − d) and decays as dʲ.
    func testDampingLowPassesTheLoop() {
        let (wet, feedback, damping): (Double, Double, Double) = (0.5, 0.8, 0.3)
        let p = EffectProcessor(.echo(EchoSettings(delay: 0.01, feedback: Float(feedback), wet: Float(wet), damping: Float(damping))),
                                sampleRate: fs, rewindHeadroomFrames: 256)
        let d = 480
        let out = renderEffect(p, impulse(2 * d + 20), inputChannels: 1, outputChannels: 2)
        XCTAssertEqual(Double(out[2 * d]), wet, accuracy: 1e-6)
        for j in 0..<20 {
            XCTAssertEqual(Double(out[2 * (2 * d + j) + 1]), wet * feedback * (1 - damping) * pow(damping, Double(j)), accuracy: 1e-6)
        }
    }

    /// A stereo input keeps its sides: a right impulse echoes first on the right, then the left.
    func testStereoInputKeepsItsSides() {
        let p = EffectProcessor(.echo(EchoSettings(delay: 0.01, feedback: 0.5, wet: 1, damping: 0)), sampleRate: fs, rewindHeadroomFrames: 256)
        let out = renderEffect(p, impulse(1500, channels: 2, at: 1), inputChannels: 2, outputChannels: 2)
        XCTAssertEqual(out[2 * 480], 0); XCTAssertEqual(out[2 * 480 + 1], 1)
        XCTAssertEqual(out[2 * 960], 0.5); XCTAssertEqual(out[2 * 960 + 1], 0)
    }

    /// The longest delay fits (2 s), and values out of range are brought into range.
    func testRanges() {
        let p = EffectProcessor(.echo(EchoSettings(delay: 5, feedback: 3, wet: 2, damping: 0)), sampleRate: fs, rewindHeadroomFrames: 0)
        let frames = 2 * 2 * fs + 1
        let out = renderEffect(p, impulse(frames), inputChannels: 1, outputChannels: 1, block: 1024)
        XCTAssertEqual(out[2 * fs], 1)        // delay 2 s, wet 1
        XCTAssertEqual(out[4 * fs], 0.95)     // feedback 0.95
        XCTAssertEqual(out.filter { $0 != 0 }.count, 2)
    }

    /// Save, render up to the headroom of noise, restore, render again: bit identical — early on,
    /// after the lines have wrapped several times, and through a stretch of silence.
    func testRewindIsBitIdentical() {
        let headroom = 2048
        for settings in [EchoSettings(delay: 0.01), EchoSettings(delay: 0.3, feedback: 0.9, wet: 1, damping: 0.7), EchoSettings(delay: 0.001, feedback: 0.95, damping: 0)] {
            let p = EffectProcessor(.echo(settings), sampleRate: fs, rewindHeadroomFrames: headroom)
            var noise = EffectNoise(seed: 11)
            assertRewindIdentical(p, input: noise.block(2 * headroom), inputChannels: 2, blocks: [headroom],
                                  expectOutput: Double(settings.delay) * Double(fs) < Double(headroom))
            _ = renderEffect(p, noise.block(2 * 150_000), inputChannels: 2, outputChannels: 2)   // a 0.3 s line wraps 4 times
            for blocks in [[headroom], [1, 1023, 1024], [500, 500, 500, 548], [3]] {
                let input = noise.block(2 * headroom)
                assertRewindIdentical(p, input: input, inputChannels: 2, blocks: blocks)
                _ = renderEffect(p, input, inputChannels: 2, outputChannels: 2)
            }
            let silenceThenNoise = [Float](repeating: 0, count: headroom) + noise.block(headroom)
            assertRewindIdentical(p, input: silenceThenNoise, inputChannels: 2, blocks: [512, 512, 1024])
        }
    }

    /// After an impulse of 1, the echo is idle once its taps are below −96 dBFS: the k-th tap is
    /// wet·feedback^(k−1), so after the first tap below 1.58e-5 plus one round trip of checking;
    /// then `processSilence` adds exact zeros.
    func testGoesIdleAfterTheTail() {
        let (wet, feedback): (Double, Double) = (0.5, 0.5)
        let d = 480
        let p = EffectProcessor(.echo(EchoSettings(delay: 0.01, feedback: Float(feedback), wet: Float(wet), damping: 0)), sampleRate: fs, rewindHeadroomFrames: 256)
        var out = renderEffect(p, impulse(256), inputChannels: 1, outputChannels: 1)
        var frames = 256
        while p.isSounding && frames < 10 * fs {
            var block = [Float](repeating: 0, count: 256)
            p.processSilence(frames: 256, addingInto: &block, outputChannels: 1)
            out += block
            frames += 256
        }
        // The first tap k with wet·feedback^(k−1) < 1.58e-5 and the line reads below 1.58e-5 / wet.
        var k = 1
        while wet * pow(feedback, Double(k - 1)) >= 1.5849e-5 { k += 1 }
        print("echo: idle after \(frames) frames; the first tap below −96 dB is tap \(k) at frame \(k * d)")
        XCTAssertFalse(p.isSounding)
        XCTAssertGreaterThanOrEqual(frames, (k - 1) * d)
        XCTAssertLessThanOrEqual(frames, (k + 1) * d + 512)
        var block = [Float](repeating: 0.25, count: 256)
        for _ in 0..<10 { p.processSilence(frames: 256, addingInto: &block, outputChannels: 1) }
        XCTAssertEqual(block, [Float](repeating: 0.25, count: 256))
    }

    /// 60 s of full-scale noise at the largest feedback: finite, and below Σ 0.95^k = 20 (× wet).
    func testStableUnderFullScaleNoise() {
        for settings in [EchoSettings(delay: 0.001, feedback: 0.95, wet: 1, damping: 0), EchoSettings(delay: 2, feedback: 0.95, wet: 1, damping: 0.99),
                         EchoSettings(delay: 0.25)] {
            let p = EffectProcessor(.echo(settings), sampleRate: fs, rewindHeadroomFrames: 256)
            var noise = EffectNoise(seed: 13)
            let block = noise.block(2 * 4801)
            var out = [Float](repeating: 0, count: 2 * 4801)
            var peak: Float = 0, finite = true
            for _ in 0..<(60 * fs / 4801) {
                for i in out.indices { out[i] = 0 }
                p.process(input: block, inputChannels: 2, frames: 4801, addingInto: &out, outputChannels: 2)
                for v in out { finite = finite && v.isFinite; peak = max(peak, abs(v)) }
            }
            print(String(format: "echo %.3f s, feedback %.2f: peak over 60 s of noise %.3f", settings.delay, settings.feedback, peak))
            XCTAssertTrue(finite)
            XCTAssertLessThan(peak, 20 * settings.wet)
        }
    }
}
