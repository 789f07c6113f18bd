// How the expectations in these tests are computed
// ------------------------------------------------
// The reverb's decay is measured as a room's would be: an impulse in, the impulse response out
// (left + right), band-passed to the 1 kHz octave (the "mid frequencies" decayTime is defined
// at; an RBJ band-pass of Q √2 applied three times), Schroeder's backward-integrated energy
// decay curve EDC(t) = Σ_{n ≥ t} h²[n], and a least-squares line through the part of it between
// −5 and −35 dB (T30), extrapolated to 60 dB. Everything measured is computed in Double here,
// without calling into the processor. Rewind checks compare two renders bit for bit.
import Foundation
import XCTest
@testable import SFXCore

/// Uniform noise in −amplitude … amplitude from a fixed 64-bit LCG: the same numbers every run.
struct EffectNoise {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next(_ amplitude: Float = 1) -> Float {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Float(Int64(bitPattern: state) >> 40) / Float(1 << 23) * amplitude
    }
    mutating func block(_ count: Int, _ amplitude: Float = 1) -> [Float] { (0..<count).map { _ in next(amplitude) } }
}

/// Runs `processor` over `input` (interleaved, `inputChannels`) in blocks of `block` frames;
/// returns the output (interleaved, `outputChannels`), which starts as zeros.
func renderEffect(_ processor: EffectProcessor, _ input: [Float], inputChannels: Int, outputChannels: Int, block: Int = 256) -> [Float] {
    let frames = input.count / inputChannels
    var output = [Float](repeating: 0, count: frames * outputChannels)
    input.withUnsafeBufferPointer { i in
        output.withUnsafeMutableBufferPointer { o in
            var done = 0
            while done < frames {
                let n = min(block, frames - done)
                processor.process(input: i.baseAddress! + done * inputChannels, inputChannels: inputChannels, frames: n,
                                  addingInto: o.baseAddress! + done * outputChannels, outputChannels: outputChannels)
                done += n
            }
        }
    }
    return output
}

/// Saves the state, renders `blocks` (frame counts) of `input` from `offset`, restores, renders
/// the same again: both renders must be the same bit for bit.
func assertRewindIdentical(_ processor: EffectProcessor, input: [Float], inputChannels: Int, blocks: [Int],
                           expectOutput: Bool = true, file: StaticString = #filePath, line: UInt = #line) {
    let saved = UnsafeMutableRawPointer.allocate(byteCount: processor.stateByteCount, alignment: 16)
    defer { saved.deallocate() }
    processor.saveState(to: saved)
    func pass() -> [Float] {
        var out: [Float] = []
        var at = 0
        for n in blocks {
            let slice = Array(input[(at * inputChannels)..<((at + n) * inputChannels)])
            out += renderEffect(processor, slice, inputChannels: inputChannels, outputChannels: 2, block: n)
            at += n
        }
        return out
    }
    let first = pass()
    processor.restoreState(from: saved)
    let second = pass()
    XCTAssertEqual(first.count, second.count, file: file, line: line)
    let same = first.withUnsafeBytes { a in second.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 } }
    XCTAssertTrue(same, "the render after restoreState differs from the first", file: file, line: line)
    if expectOutput { XCTAssertTrue(first.contains { $0 != 0 }, "nothing was rendered", file: file, line: line) }
}

final class ReverbTests: XCTestCase {
    let fs = 48_000

    /// The impulse response (left + right) of `settings`, `seconds` long.
    func impulseResponse(_ settings: ReverbSettings, seconds: Double) -> (mono: [Double], stereo: [Float]) {
        let p = EffectProcessor(.reverb(settings), sampleRate: fs, rewindHeadroomFrames: 1024)
        var input = [Float](repeating: 0, count: Int(seconds * Double(fs)))
        input[0] = 1
        let out = renderEffect(p, input, inputChannels: 1, outputChannels: 2)
        return ((0..<input.count).map { Double(out[2 * $0]) + Double(out[2 * $0 + 1]) }, out)
    }

    /// RBJ cookbook band-pass (constant 0 dB peak gain) at `f0`, quality `q`.
    func bandPass(_ x: [Double], f0: Double, q: Double) -> [Double] {
        let w = 2 * Double.pi * f0 / Double(fs), alpha = sin(w) / (2 * q)
        let (b0, b2, a0, a1, a2) = (alpha, -alpha, 1 + alpha, -2 * cos(w), 1 - alpha)
        var y = [Double](repeating: 0, count: x.count)
        var (x1, x2, y1, y2) = (0.0, 0.0, 0.0, 0.0)
        for i in 0..<x.count {
            let v = (b0 * x[i] + b2 * x2 - a1 * y1 - a2 * y2) / a0
            (x2, x1, y2, y1) = (x1, x[i], y1, v)
            y[i] = v
        }
        return y
    }

    /// T30 from Schroeder's energy decay curve: the slope of the −5 … −35 dB part, × 60 dB.
    func t30(_ h: [Double]) -> Double {
        var edc = [Double](repeating: 0, count: h.count)
        var sum = 0.0
        for i in stride(from: h.count - 1, through: 0, by: -1) { sum += h[i] * h[i]; edc[i] = sum }
        var xs: [Double] = [], ys: [Double] = []
        for i in 0..<h.count {
            let db = 10 * log10(edc[i] / edc[0])
            if db <= -5 && db >= -35 { xs.append(Double(i) / Double(fs)); ys.append(db) }
        }
        let n = Double(xs.count), mx = xs.reduce(0, +) / n, my = ys.reduce(0, +) / n
        var sxy = 0.0, sxx = 0.0
        for i in 0..<xs.count { sxy += (xs[i] - mx) * (ys[i] - my); sxx += (xs[i] - mx) * (xs[i] - mx) }
        return -60 / (sxy / sxx)
    }

    func testPresetsHaveEFXDecayTimes() {
        XCTAssertEqual(ReverbSettings.room.decayTime, 0.40); XCTAssertEqual(ReverbSettings.room.highFrequencyRatio, 0.83)
        XCTAssertEqual(ReverbSettings.hall.decayTime, 3.92); XCTAssertEqual(ReverbSettings.hall.highFrequencyRatio, 0.70)
        XCTAssertEqual(ReverbSettings.cave.decayTime, 2.91); XCTAssertEqual(ReverbSettings.cave.highFrequencyRatio, 1.30)
    }

    /// RT60 (T30 in the 1 kHz octave) of room, hall and cave within 10 % of their decayTime.
    func testDecayTimeMeasuredFromImpulseResponse() {
        for (name, settings) in [("room", ReverbSettings.room), ("hall", .hall), ("cave", .cave)] {
            let (h, _) = impulseResponse(settings, seconds: 2.5 * Double(settings.decayTime))
            let mid = bandPass(bandPass(bandPass(h, f0: 1000, q: 2.0.squareRoot()), f0: 1000, q: 2.0.squareRoot()), f0: 1000, q: 2.0.squareRoot())
            let measured = t30(mid)
            print(String(format: "reverb %@: decayTime %.2f s, T30 at 1 kHz %.3f s (%+.1f %%), broadband %.3f s",
                         name, settings.decayTime, measured, 100 * (measured / Double(settings.decayTime) - 1), t30(h)))
            XCTAssertEqual(measured, Double(settings.decayTime), accuracy: 0.1 * Double(settings.decayTime), name)
        }
    }

    /// At gain 1 the tail of a unit impulse carries about the impulse's energy in each channel
    /// (within ±1 dB), and the tail's energy scales as gain².
    func testEnergyNormalisation() {
        for (name, preset) in ReverbSettings.presets {
            var settings = preset
            settings.gain = 1
            let (_, out) = impulseResponse(settings, seconds: 2 * Double(settings.decayTime) + 0.1)
            var left = 0.0, right = 0.0
            for i in 0..<(out.count / 2) { left += Double(out[2 * i] * out[2 * i]); right += Double(out[2 * i + 1] * out[2 * i + 1]) }
            print(String(format: "reverb %@ at gain 1: tail energy left %.3f (%.2f dB), right %.3f", name, left, 10 * log10(left), right))
            XCTAssertEqual(10 * log10(left), 0, accuracy: 1, name)
            XCTAssertEqual(10 * log10(right), 0, accuracy: 1, name)
        }
        let (_, quiet) = impulseResponse(.hall, seconds: 8)
        let (_, loud) = impulseResponse(ReverbSettings(decayTime: 3.92, highFrequencyRatio: 0.70, preDelay: 0.020, gain: 1), seconds: 8)
        let ratio = quiet.reduce(0.0) { $0 + Double($1 * $1) } / loud.reduce(0.0) { $0 + Double($1 * $1) }
        XCTAssertEqual(ratio, 0.32 * 0.32, accuracy: 1e-4)
    }

    /// The first output frame is round(preDelay · fs) after the impulse, and nothing comes before it.
    func testPreDelay() {
        for pre: Float in [0, 0.002, 0.02, 0.3] {
            let (_, out) = impulseResponse(ReverbSettings(decayTime: 1, preDelay: pre), seconds: 0.4)
            let first = (0..<(out.count / 2)).first { out[2 * $0] != 0 || out[2 * $0 + 1] != 0 }
            XCTAssertEqual(first, Int((Double(pre) * Double(fs)).rounded()), "preDelay \(pre)")
        }
    }

    /// Left and right are decorrelated: normalised correlation of the impulse responses below 0.3.
    func testStereoIsDecorrelated() {
        for (name, settings) in [("room", ReverbSettings.room), ("hall", .hall), ("cave", .cave)] {
            let (_, out) = impulseResponse(settings, seconds: 2 * Double(settings.decayTime))
            var lr = 0.0, ll = 0.0, rr = 0.0
            for i in 0..<(out.count / 2) {
                let (l, r) = (Double(out[2 * i]), Double(out[2 * i + 1]))
                lr += l * r; ll += l * l; rr += r * r
            }
            let correlation = lr / (ll * rr).squareRoot()
            print(String(format: "reverb %@: left/right correlation %.3f", name, correlation))
            XCTAssertLessThan(abs(correlation), 0.3, name)
        }
    }

    /// Mono output is (left + right)/√2 of the stereo output; mono input is stereo input with L = R.
    func testMonoOutputAndStereoInput() {
        var noise = EffectNoise(seed: 7)
        let mono = noise.block(4096, 0.5)
        let stereoIn = mono.flatMap { [$0, $0] }
        let a = renderEffect(EffectProcessor(.reverb(.room), sampleRate: fs, rewindHeadroomFrames: 256), mono, inputChannels: 1, outputChannels: 2)
        let b = renderEffect(EffectProcessor(.reverb(.room), sampleRate: fs, rewindHeadroomFrames: 256), stereoIn, inputChannels: 2, outputChannels: 2)
        XCTAssertEqual(a, b)
        let m = renderEffect(EffectProcessor(.reverb(.room), sampleRate: fs, rewindHeadroomFrames: 256), mono, inputChannels: 1, outputChannels: 1)
        for i in 0..<mono.count {
            XCTAssertEqual(Double(m[i]), (Double(a[2 * i]) + Double(a[2 * i + 1])) * 0.5.squareRoot(), accuracy: 1e-6)
        }
    }

    /// Save, render up to the headroom of noise, restore, render again: bit identical — early on,
    /// and after every ring has wrapped several times; also through a stretch of silence.
    func testRewindIsBitIdentical() {
        let headroom = 1024
        for settings in [ReverbSettings.room, .hall, .cave, ReverbSettings(decayTime: 1, preDelay: 0.3, diffusion: 0.5)] {
            let p = EffectProcessor(.reverb(settings), sampleRate: fs, rewindHeadroomFrames: headroom)
            var noise = EffectNoise(seed: 42)
            let burst = noise.block(2 * headroom)
            assertRewindIdentical(p, input: burst, inputChannels: 2, blocks: [headroom],
                                  expectOutput: Double(settings.preDelay) * Double(fs) < Double(headroom))
            // The longest ring (the 0.3 s pre-delay: 16384 + headroom → 32768 frames) wraps 6 times.
            _ = renderEffect(p, noise.block(2 * 200_000), inputChannels: 2, outputChannels: 2)
            for blocks in [[headroom], [1, 255, 256, 512], [333, 333, 333, 25], [7]] {
                let input = noise.block(2 * headroom)
                assertRewindIdentical(p, input: input, inputChannels: 2, blocks: blocks)
                _ = renderEffect(p, input, inputChannels: 2, outputChannels: 2)
            }
            let silenceThenNoise = [Float](repeating: 0, count: headroom) + noise.block(headroom)
            assertRewindIdentical(p, input: silenceThenNoise, inputChannels: 2, blocks: [256, 256, 512])
        }
    }

    /// A reset silences the memory: the processor then renders what a new one renders.
    func testResetMatchesNewProcessor() {
        var noise = EffectNoise(seed: 3)
        let p = EffectProcessor(.reverb(.cave), sampleRate: fs, rewindHeadroomFrames: 512)
        _ = renderEffect(p, noise.block(96_000), inputChannels: 1, outputChannels: 2)
        p.reset()
        XCTAssertFalse(p.isSounding)
        let input = noise.block(20_000)
        XCTAssertEqual(renderEffect(p, input, inputChannels: 1, outputChannels: 2),
                       renderEffect(EffectProcessor(.reverb(.cave), sampleRate: fs, rewindHeadroomFrames: 512), input, inputChannels: 1, outputChannels: 2))
    }

    /// The slowest RT60 of the network by its law: `decayTime` at DC, and at Nyquist, where the
    /// shelf's gain is ρ², 1/T = 2/(decayTime·ratio) − 1/decayTime (longer when ratio > 1).
    func slowestDecayTime(_ s: ReverbSettings) -> Double {
        let (t, r) = (Double(s.decayTime), Double(s.highFrequencyRatio))
        return r > 1 ? 1 / (2 / (t * r) - 1 / t) : t
    }

    /// Renders `input` (mono) then silence, 256 frames at a time, until `isSounding` turns false;
    /// returns the frames after the input when it did, and the output (stereo) up to then.
    func framesUntilIdle(_ p: EffectProcessor, after input: [Float]) -> (Int, [Float]) {
        var out = renderEffect(p, input, inputChannels: 1, outputChannels: 2)
        var frames = 0
        while p.isSounding && frames < 120 * fs {
            var block = [Float](repeating: 0, count: 512)
            p.processSilence(frames: 256, addingInto: &block, outputChannels: 2)
            out += block
            frames += 256
        }
        return (frames, out)
    }

    /// After an impulse of 1, and after a second of full-scale noise, `isSounding` turns false no
    /// later than about (slowest RT60) × 96/60; the same processor kept awake (an input of 1e-30
    /// every block) shows that nothing it then leaves out reaches −96 dBFS; and once idle,
    /// `processSilence` and an all-zero `process` add exact zeros.
    func testGoesIdleAfterTheTail() {
        var noise = EffectNoise(seed: 5)
        for (name, settings) in [("room", ReverbSettings.room), ("hall", .hall), ("cave", .cave)] {
            let expected = slowestDecayTime(settings) * 96 / 60
            for (what, input) in [("impulse", [Float(1)]), ("1 s of noise", noise.block(fs))] {
                let p = EffectProcessor(.reverb(settings), sampleRate: fs, rewindHeadroomFrames: 1024)
                XCTAssertFalse(p.isSounding)
                let (frames, _) = framesUntilIdle(p, after: input)
                let seconds = Double(frames) / Double(fs)
                print(String(format: "reverb %@ after %@: idle %.2f s later (slowest RT60 × 96/60 = %.2f s)", name, what, seconds, expected))
                XCTAssertFalse(p.isSounding, name)
                XCTAssertLessThan(seconds, 1.1 * expected + 0.1, "\(name), \(what)")

                // The same again, kept awake: what follows the idle point stays below −96 dBFS.
                let awake = EffectProcessor(.reverb(settings), sampleRate: fs, rewindHeadroomFrames: 1024)
                _ = renderEffect(awake, input, inputChannels: 1, outputChannels: 2)
                var keepAlive = [Float](repeating: 0, count: 256)
                keepAlive[0] = 1e-30
                var after: Float = 0
                for block in 0..<(Int(2 * expected * Double(fs)) / 256) {
                    var out = [Float](repeating: 0, count: 512)
                    awake.process(input: keepAlive, inputChannels: 1, frames: 256, addingInto: &out, outputChannels: 2)
                    if block * 256 >= frames { after = max(after, out.map(abs).max()!) }
                }
                XCTAssertLessThan(after, 1.5849e-5, "\(name), \(what): the tail after the idle point")

                var block = [Float](repeating: 0.25, count: 512)
                for _ in 0..<10 { p.processSilence(frames: 256, addingInto: &block, outputChannels: 2) }
                XCTAssertEqual(block, [Float](repeating: 0.25, count: 512), "silent and idle: adds nothing")
                var zeros = [Float](repeating: 0, count: 512)
                p.process(input: zeros, inputChannels: 2, frames: 256, addingInto: &block, outputChannels: 2)
                XCTAssertEqual(block, [Float](repeating: 0.25, count: 512), "zero input while idle: adds nothing")
                XCTAssertFalse(p.isSounding)
                zeros[0] = 0.5
                p.process(input: zeros, inputChannels: 2, frames: 256, addingInto: &block, outputChannels: 2)
                XCTAssertTrue(p.isSounding, "input wakes it")
            }
        }
    }

    /// `process`, `processSilence`, `saveState`, `restoreState` and `reset` allocate nothing (the
    /// mixer's audit: Swift objects on this thread and malloc's bytes in use, each meter first
    /// shown to see an allocation).
    func testProcessingAllocatesNothing() {
        let frames = 256
        let input = UnsafeMutablePointer<Float>.allocate(capacity: 2 * frames)
        let output = UnsafeMutablePointer<Float>.allocate(capacity: 2 * frames)
        defer { input.deallocate(); output.deallocate() }
        var noise = EffectNoise(seed: 1)
        for i in 0..<(2 * frames) { input[i] = noise.next(0.5) }
        output.initialize(repeating: 0, count: 2 * frames)
        let processors = [EffectProcessor(.reverb(.hall), sampleRate: fs, rewindHeadroomFrames: 1024),
                          EffectProcessor(.echo(EchoSettings(delay: 0.1)), sampleRate: fs, rewindHeadroomFrames: 1024)]
        let saved = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 16)
        defer { saved.deallocate() }
        func work() {
            for p in processors {
                for round in 0..<40 {
                    p.saveState(to: saved)
                    p.process(input: input, inputChannels: 2, frames: frames, addingInto: output, outputChannels: 2)
                    p.process(input: input, inputChannels: 1, frames: frames, addingInto: output, outputChannels: 1)
                    p.restoreState(from: saved)
                    p.process(input: input, inputChannels: 2, frames: frames, addingInto: output, outputChannels: 2)
                    p.processSilence(frames: frames, addingInto: output, outputChannels: 2)
                    if round == 39 { p.reset(); p.processSilence(frames: frames, addingInto: output, outputChannels: 1) }
                }
            }
        }
        work()
        let audit = AllocationAudit()
        XCTAssertGreaterThan(audit.measure { blackHole([frames, frames]) }.swiftObjects, 0)
        var block: UnsafeMutableRawPointer?
        XCTAssertGreaterThanOrEqual(audit.measure { block = malloc(100_000) }.bytes ?? 100_000, 100_000)
        free(block)
        var attempts: [AllocationAudit.Measurement] = []
        for _ in 0..<3 {
            let m = audit.measure(work)
            attempts.append(m)
            if m.bytes == 0 { break }
        }
        XCTAssertTrue(attempts.allSatisfy { $0.swiftObjects == 0 }, "\(attempts)")
        XCTAssertTrue(attempts.contains { ($0.bytes ?? 0) == 0 }, "\(attempts)")
        withExtendedLifetime(processors) {}
    }

    /// A NaN or infinite input sample is taken as silence: it would otherwise sound for ever.
    func testNonFiniteInputIsSilence() {
        var input = [Float](repeating: 0, count: 4096)
        input[10] = .nan; input[20] = .infinity; input[30] = 1
        var clean = [Float](repeating: 0, count: 4096)
        clean[30] = 1
        for effect in [Effect.reverb(.hall), .echo(EchoSettings(delay: 0.01))] {
            let out = renderEffect(EffectProcessor(effect, sampleRate: fs, rewindHeadroomFrames: 256), input, inputChannels: 1, outputChannels: 2)
            XCTAssertEqual(out, renderEffect(EffectProcessor(effect, sampleRate: fs, rewindHeadroomFrames: 256), clean, inputChannels: 1, outputChannels: 2))
        }
    }

    /// 20 s of full-scale noise into room, hall and cave (and the extremes of the ranges): the output stays
    /// finite and below 4 (the wet level of noise of RMS 0.58 at gain ≤ 1 is far below that).
    func testStableUnderFullScaleNoise() {
        let extremes = [ReverbSettings(decayTime: 20, highFrequencyRatio: 2, preDelay: 0, diffusion: 1, gain: 1),
                        ReverbSettings(decayTime: 0.1, highFrequencyRatio: 0.1, preDelay: 0.3, diffusion: 0, gain: 1)]
        let presets = ReverbSettings.presets.filter { ["room", "hall", "cave"].contains($0.0) }
        XCTAssertEqual(presets.count, 3)
        for (name, settings) in presets + extremes.map({ ("extreme", $0) }) {
            let p = EffectProcessor(.reverb(settings), sampleRate: fs, rewindHeadroomFrames: 256)
            var noise = EffectNoise(seed: 9)
            let block = noise.block(2 * 4800)
            var peak: Float = 0
            var finite = true
            var out = [Float](repeating: 0, count: 2 * 4800)
            for _ in 0..<(20 * fs / 4800) {
                for i in out.indices { out[i] = 0 }
                p.process(input: block, inputChannels: 2, frames: 4800, addingInto: &out, outputChannels: 2)
                for v in out { finite = finite && v.isFinite; peak = max(peak, abs(v)) }
            }
            print(String(format: "reverb %@ (%.2f s, HF %.2f, gain %.2f): peak over 20 s of noise %.3f", name, settings.decayTime, settings.highFrequencyRatio, settings.gain, peak))
            XCTAssertTrue(finite, name)
            XCTAssertLessThan(peak, 4, name)
        }
    }
}
