// Player.crossfade on the virtual card, with two independent noise files: the card's output
// through the fade is old·cos + new·sin of the same angle frame by frame (the envelope ramps
// the mixer documents), so the power of the two uncorrelated inputs stays constant (within
// 0.5 dB, measured over 50 ms windows), and the old player ends with the fade.
import Foundation
import Synchronization
import XCTest
import SFXCore
import SFXCardSupport
import SFX
@testable import SFXPlayback

final class PlayerCrossfadeTests: XCTestCase {
    /// Uniform noise in ±0.3, from a fixed seed (a 64-bit LCG), so every run hears the same.
    static func noise(seed: UInt64, frames: Int) -> [Float] {
        var x = seed
        return (0..<frames).map { _ in
            x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(Double(x >> 11) / Double(1 << 53) * 0.6 - 0.3)
        }
    }

    func testCrossfadeGainsAreCosAndSinAndThePowerStaysConstant() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let a = Self.noise(seed: 1, frames: 96_000), b = Self.noise(seed: 2, frames: 96_000)
        let urlA = setup.card.directory.appending(path: "a.wav"), urlB = setup.card.directory.appending(path: "b.wav")
        try WAVAudio(sampleRate: 48_000, channels: 1, samples: a).write(to: urlA)
        try WAVAudio(sampleRate: 48_000, channels: 1, samples: b).write(to: urlB)
        let first = try setup.engine.makePlayer(contentsOf: urlA)
        let second = try setup.engine.makePlayer(contentsOf: urlB)
        let firstEnded = Mutex<Bool?>(nil), secondEnded = Mutex<Bool?>(nil)
        first.didFinish = { ok in firstEnded.withLock { $0 = ok } }
        second.didFinish = { ok in secondEnded.withLock { $0 = ok } }
        XCTAssertThrowsError(try first.crossfade(to: first, duration: .seconds(1)))
        XCTAssertThrowsError(try first.crossfade(to: second, duration: .seconds(61)))
        try first.play()
        XCTAssertTrue(eventually(timeout: 10) { first.currentTime > 0.2 })
        let fade = 24_000                                   // 0.5 s
        try first.crossfade(to: second, duration: .milliseconds(500))
        XCTAssertFalse(first.isPlaying)
        XCTAssertTrue(second.isPlaying)
        XCTAssertTrue(eventually(timeout: 20) { secondEnded.withLock { $0 } != nil })
        XCTAssertNil(firstEnded.withLock { $0 }, "the faded-out player ends without didFinish, as after stop()")
        setup.engine.close()
        let left = try setup.recording().channel(0)
        let onset = try XCTUnwrap(left.firstIndex { abs($0) > 1e-7 })
        let heard = Array(left[onset...])
        // The first file alone up to the frame where the fade began.
        let start = try XCTUnwrap((20..<heard.count).first { heard[$0] != a[$0] })
        XCTAssertGreaterThan(start, 9_000)
        XCTAssertGreaterThanOrEqual(heard.count, start + 96_000)
        // Frame j of the fade: the new voice's envelope (j+1)/N, the old one's 1 − (j+1)/N, each
        // heard as sin(π/2 · envelope): old × cos θ + new × sin θ.
        var worst: Float = 0
        for j in 0..<fade {
            let up = Float(j + 1) / Float(fade), down = 1 - Float(j + 1) / Float(fade)
            let want = a[start + j] * sin(down * .pi / 2) + b[j] * sin(up * .pi / 2)
            worst = max(worst, abs(heard[start + j] - want))
        }
        XCTAssertLessThan(worst, 1e-5, "the fade's samples are old·cos + new·sin")
        for k in fade..<96_000 where heard[start + k] != b[k] {
            return XCTFail("after the fade, frame \(k) of the second file: \(heard[start + k]) instead of \(b[k])")
        }
        // Power in 50 ms windows, from before the fade to after it, against one file's power.
        func power(_ x: ArraySlice<Float>) -> Double { x.reduce(0) { $0 + Double($1) * Double($1) } / Double(x.count) }
        let reference = power(a[...])
        var deviations: [Double] = []
        for w in stride(from: start - 4_800, to: start + fade + 4_800, by: 2_400) {
            deviations.append(10 * log10(power(heard[w..<(w + 2_400)]) / reference))
        }
        let largest = deviations.map(abs).max() ?? 0
        print(String(format: "crossfade power: largest deviation %.3f dB over %d windows of 50 ms", largest, deviations.count))
        XCTAssertLessThan(largest, 0.5, "\(deviations)")
    }

    /// A linear fade (what a plain fade-out and fade-in would give) dips by 3 dB at the middle:
    /// the check above would catch it. Here: the measured dip of the middle window is near 0 dB
    /// with the equal-power fade, where the linear one would give about −3 dB.
    func testTheLinearDipTheCheckCatches() {
        let a = Self.noise(seed: 3, frames: 2_400), b = Self.noise(seed: 4, frames: 2_400)
        let mixed = zip(a, b).map { 0.5 * $0 + 0.5 * $1 }
        let dip = 10 * log10(mixed.reduce(0) { $0 + Double($1 * $1) } / a.reduce(0) { $0 + Double($1 * $1) })
        XCTAssertLessThan(dip, -2.5, "a linear crossfade's middle is −3 dB: outside 0.5 dB")
    }
}
