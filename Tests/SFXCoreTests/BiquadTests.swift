// How the expectations in these tests are computed
// ------------------------------------------------
// - The filters' outputs are compared with an independent reference: Tests/Support/filters/
//   FilterReference.py writes the RBJ cookbook's formulas out itself and runs
//   scipy.signal.lfilter in float64 on the same input (white noise from a fixed seed plus a
//   chirp, float32). Outputs agree within 1e-5, coefficients within 1e-6 of the largest one.
// - The magnitude laws are measured, not computed from our coefficients: a sine goes through the
//   filter, the filter settles, and the amplitude of the output is its projection on the sine
//   and cosine of that frequency over a whole number of periods.
// - Smoothing is judged on the signal: the largest step between neighbouring samples while the
//   parameters glide must stay within 25% of the largest step of the settled outputs either
//   side (a click would be a step of the order of the signal's full scale). The glide itself
//   may add a little: the filter's phase at the sine's frequency moves while it glides, which
//   raises the output's instantaneous frequency for those frames (200 Hz → 10 kHz under a
//   500 Hz sine turns about 136° in 10 ms: some 7% more per step, 7% measured).
// - Rewinds are compared bit for bit.
import Foundation
import XCTest
@testable import SFXCore

final class BiquadTests: XCTestCase {
    // MARK: Signals

    /// xorshift64*: the same white noise in −amplitude … amplitude on every run.
    struct Noise {
        var state: UInt64
        mutating func next(amplitude: Double) -> Double {
            state ^= state >> 12; state ^= state << 25; state ^= state >> 27
            let r = state &* 2_685_821_657_736_338_717
            return (Double(r >> 11) / Double(1 << 53) * 2 - 1) * amplitude
        }
    }

    /// Interleaved noise (0.5) plus a chirp (0.4) sweeping 20 Hz … 0.45 × sampleRate
    /// exponentially, the right channel's chirp a quarter period ahead of the left's.
    static func testSignal(frames: Int, channels: Int, sampleRate: Int, seed: UInt64) -> [Float] {
        var noise = Noise(state: seed | 1)
        let f0 = 20.0, f1 = 0.45 * Double(sampleRate)
        let duration = Double(frames) / Double(sampleRate)
        let k = log(f1 / f0) / duration
        var out = [Float](repeating: 0, count: frames * channels)
        for i in 0..<frames {
            let t = Double(i) / Double(sampleRate)
            let phase = 2 * Double.pi * f0 * (exp(k * t) - 1) / k
            for c in 0..<channels {
                out[i * channels + c] = Float(noise.next(amplitude: 0.5) + 0.4 * sin(phase + Double(c) * .pi / 2))
            }
        }
        return out
    }

    /// A sine of amplitude 1 at `frequency`, interleaved over `channels` (the same on each).
    static func sine(frequency: Double, frames: Int, channels: Int = 1, sampleRate: Int, amplitude: Double = 1) -> [Float] {
        var out = [Float](repeating: 0, count: frames * channels)
        for i in 0..<frames {
            let v = Float(amplitude * sin(2 * Double.pi * frequency * Double(i) / Double(sampleRate)))
            for c in 0..<channels { out[i * channels + c] = v }
        }
        return out
    }

    /// Runs `filter` over `samples` in calls of the sizes in `blocks` (cycled).
    static func run(_ filter: inout Biquad, _ samples: inout [Float], channels: Int, blocks: [Int] = [256]) {
        let frames = samples.count / channels
        var done = 0, b = 0
        samples.withUnsafeMutableBufferPointer { buffer in
            while done < frames {
                let n = min(blocks[b % blocks.count], frames - done)
                filter.process(buffer.baseAddress! + done * channels, frames: n, channels: channels)
                done += n
                b += 1
            }
        }
    }

    /// The steady-state gain of `settings` at `frequency`, measured with a sine: 0.5 s to settle,
    /// then the projection over about 1 s (whole periods).
    static func measuredGain(_ settings: FilterSettings, at frequency: Double, sampleRate: Int) -> Double {
        var filter = Biquad(settings, sampleRate: sampleRate, smoothingFrames: 0)
        let settle = sampleRate / 2
        let measure = Int((floor(frequency) * Double(sampleRate) / frequency).rounded())
        var samples = sine(frequency: frequency, frames: settle + measure, sampleRate: sampleRate)
        run(&filter, &samples, channels: 1)
        var s = 0.0, c = 0.0
        for i in 0..<measure {
            let n = settle + i
            let w = 2 * Double.pi * frequency * Double(n) / Double(sampleRate)
            s += Double(samples[n]) * sin(w)
            c += Double(samples[n]) * cos(w)
        }
        return 2 * (s * s + c * c).squareRoot() / Double(measure)
    }

    static func dB(_ x: Double) -> Double { 20 * log10(x) }

    /// The output for a constant input `level` after 1 s.
    static func settledOutput(_ settings: FilterSettings, input: (Int) -> Float, sampleRate: Int) -> Float {
        var filter = Biquad(settings, sampleRate: sampleRate, smoothingFrames: 0)
        var samples = (0..<sampleRate).map(input)
        run(&filter, &samples, channels: 1)
        return samples[sampleRate - 1]
    }

    /// A private scratch directory (mkdtemp, 0700), removed by the caller.
    static func scratchDirectory() throws -> URL {
        var template = Array((NSTemporaryDirectory() + "/sfx-biquad-XXXXXX").utf8CString)
        let made = try XCTUnwrap(mkdtemp(&template), "mkdtemp failed: errno \(errno)")
        return URL(filePath: String(cString: made))
    }

    static let referenceScript = URL(filePath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Support/filters/FilterReference.py")

    // MARK: Against scipy

    struct Case: Encodable {
        var kind: String
        var cutoff: Double
        var q: Double
        var gain: Double
        var sampleRate: Int
        var channels: Int
        var frames: Int
        var input: String
        var output: String
    }

    func testMatchesScipyLfilterOfTheCookbookFormulas() throws {
        let kinds: [(FilterKind, String)] = [(.lowPass, "lowPass"), (.highPass, "highPass"), (.bandPass, "bandPass"), (.highShelf, "highShelf")]
        let frames = 8_192
        var settingsList: [FilterSettings] = []
        var cases: [Case] = []
        var inputs: [[Float]] = []
        var n = 0
        for (kind, name) in kinds {
            for sampleRate in [48_000, 44_100] {
                for cutoff: Float in [100, 1_000, 8_000] {
                    let qs: [Float] = kind == .highShelf ? [0.5, 0.7071, 1] : [0.5, 0.7071, 4]
                    for q in qs {
                        for channels in [1, 2] {
                            let gains: [Float] = kind == .highShelf ? [0.5, 0.1, 0.01] : [1, 0.5, 0.25]
                            let gain = gains[n % gains.count]
                            let settings = FilterSettings(kind: kind, cutoff: cutoff, q: q, gain: gain)
                            XCTAssertEqual(settings.clamped(sampleRate: sampleRate), settings)
                            settingsList.append(settings)
                            cases.append(Case(kind: name, cutoff: Double(cutoff), q: Double(q), gain: Double(gain),
                                              sampleRate: sampleRate, channels: channels, frames: frames,
                                              input: "in\(n).f32", output: "out\(n).f64"))
                            inputs.append(Self.testSignal(frames: frames, channels: channels, sampleRate: sampleRate,
                                                          seed: 0x5EED + UInt64(n)))
                            n += 1
                        }
                    }
                }
            }
        }

        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (c, input) in zip(cases, inputs) {
            try input.withUnsafeBytes { try Data($0).write(to: directory.appending(path: c.input)) }
        }
        try JSONEncoder().encode(cases).write(to: directory.appending(path: "cases.json"))

        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/python3")
        process.arguments = [Self.referenceScript.path, directory.path]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "FilterReference.py failed (needs /usr/bin/python3 with numpy and scipy): \(errorText)")
        guard process.terminationStatus == 0 else { return }

        let reference = try JSONDecoder().decode([[Double]].self,
                                                 from: Data(contentsOf: directory.appending(path: "coefficients.json")))
        XCTAssertEqual(reference.count, cases.count)
        let blockPattern = [1, 7, 64, 333, 1_024, 16, 5]
        var worstOutput = 0.0, worstCoefficient = 0.0
        for (i, c) in cases.enumerated() {
            let settings = settingsList[i]
            let ours = BiquadCoefficients(settings, sampleRate: c.sampleRate)
            let mine = [ours.b0, ours.b1, ours.b2, ours.a1, ours.a2]
            let scale = reference[i].map(abs).max()!
            for (a, b) in zip(mine, reference[i]) {
                let relative = abs(a - b) / scale
                worstCoefficient = max(worstCoefficient, relative)
                XCTAssertLessThanOrEqual(relative, 1e-6, "coefficients of \(settings) at \(c.sampleRate): \(mine) vs \(reference[i])")
            }

            let expected: [Double] = try Data(contentsOf: directory.appending(path: c.output)).withUnsafeBytes {
                Array($0.bindMemory(to: Double.self))
            }
            var samples = inputs[i]
            var filter = Biquad(settings, sampleRate: c.sampleRate, smoothingFrames: 480)
            Self.run(&filter, &samples, channels: c.channels, blocks: blockPattern)
            XCTAssertEqual(expected.count, samples.count)
            var worst = 0.0
            for (a, b) in zip(samples, expected) { worst = max(worst, abs(Double(a) - b)) }
            worstOutput = max(worstOutput, worst)
            XCTAssertLessThanOrEqual(worst, 1e-5, "output of \(settings) at \(c.sampleRate) Hz, \(c.channels) ch")
        }
        print("BiquadTests: \(cases.count) cases against scipy.signal.lfilter: largest output difference \(worstOutput), largest coefficient difference \(worstCoefficient) (relative)")
    }

    // MARK: Magnitude laws

    func testLowPassIsMinus3dBAtItsCutoffAndPassesDC() {
        for sampleRate in [48_000, 44_100] {
            for cutoff in [100.0, 1_000, 8_000] {
                let g = Self.measuredGain(.lowPass(cutoff: Float(cutoff)), at: cutoff, sampleRate: sampleRate)
                XCTAssertEqual(Self.dB(g), -3.0103, accuracy: 0.005, "low-pass at \(cutoff) Hz, \(sampleRate) Hz")
            }
        }
        // Resonance: the gain at the cutoff is Q (and times the gain).
        let resonant = Self.measuredGain(.lowPass(cutoff: 1_000, q: 4, gain: 0.5), at: 1_000, sampleRate: 48_000)
        XCTAssertEqual(resonant, 2, accuracy: 1e-3)
        XCTAssertEqual(Self.settledOutput(.lowPass(cutoff: 1_000), input: { _ in 1 }, sampleRate: 48_000), 1, accuracy: 1e-6)
        XCTAssertEqual(Self.settledOutput(.lowPass(cutoff: 100, gain: 0.25), input: { _ in 1 }, sampleRate: 48_000), 0.25, accuracy: 1e-6)
        // An octave above the cutoff a Butterworth low-pass is well down (−12 dB per octave later).
        XCTAssertLessThan(Self.dB(Self.measuredGain(.lowPass(cutoff: 1_000), at: 4_000, sampleRate: 48_000)), -23)
    }

    func testHighPassBlocksDCAndIsMinus3dBAtItsCutoff() {
        let dc = Self.settledOutput(.highPass(cutoff: 100), input: { _ in 1 }, sampleRate: 48_000)
        XCTAssertEqual(dc, 0, accuracy: 1e-6)
        for cutoff in [100.0, 1_000, 8_000] {
            let g = Self.measuredGain(.highPass(cutoff: Float(cutoff)), at: cutoff, sampleRate: 48_000)
            XCTAssertEqual(Self.dB(g), -3.0103, accuracy: 0.005, "high-pass at \(cutoff) Hz")
        }
        // Nyquist (an alternating signal) passes at the gain.
        let nyquist = Self.settledOutput(.highPass(cutoff: 1_000, gain: 0.5), input: { $0 % 2 == 0 ? 1 : -1 }, sampleRate: 48_000)
        XCTAssertEqual(abs(nyquist), 0.5, accuracy: 1e-6)
    }

    func testBandPassPeaksAt0dBAtItsCentre() {
        for (centre, q) in [(100.0, Float(0.7071)), (1_000, 4), (8_000, 0.5)] {
            let g = Self.measuredGain(.bandPass(centre: Float(centre), q: q), at: centre, sampleRate: 48_000)
            XCTAssertEqual(Self.dB(g), 0, accuracy: 0.005, "band-pass at \(centre) Hz, Q \(q)")
            XCTAssertLessThan(Self.measuredGain(.bandPass(centre: Float(centre), q: q), at: centre * 1.3, sampleRate: 48_000), g)
            XCTAssertLessThan(Self.measuredGain(.bandPass(centre: Float(centre), q: q), at: centre / 1.3, sampleRate: 48_000), g)
        }
        let half = Self.measuredGain(.bandPass(centre: 1_000, q: 2, gain: 0.5), at: 1_000, sampleRate: 48_000)
        XCTAssertEqual(half, 0.5, accuracy: 1e-4)
        XCTAssertEqual(Self.settledOutput(.bandPass(centre: 1_000), input: { _ in 1 }, sampleRate: 48_000), 0, accuracy: 1e-6)
    }

    func testHighShelfIsUnityAtDCAndItsGainTowardsNyquist() {
        for g: Float in [0.5, 0.1, 0.01] {
            let shelf = FilterSettings.highShelf(cutoff: 5_000, gain: g)
            XCTAssertEqual(Self.settledOutput(shelf, input: { _ in 1 }, sampleRate: 48_000), 1, accuracy: 1e-6)
            let nyquist = Self.settledOutput(shelf, input: { $0 % 2 == 0 ? 1 : -1 }, sampleRate: 48_000)
            XCTAssertEqual(Double(abs(nyquist)), Double(g), accuracy: 1e-6, "shelf gain \(g) at Nyquist")
            // Nyquist-ish: at 0.45 × 48 kHz the shelf is within 0.5 dB of its plateau.
            let high = Self.measuredGain(shelf, at: 21_600, sampleRate: 48_000)
            XCTAssertEqual(Self.dB(high), Self.dB(Double(g)), accuracy: 0.5, "shelf gain \(g) at 21.6 kHz")
            // The midpoint: √g at the cutoff.
            let mid = Self.measuredGain(shelf, at: 5_000, sampleRate: 48_000)
            XCTAssertEqual(mid, Double(g).squareRoot(), accuracy: 1e-4, "shelf gain \(g) at its cutoff")
        }
    }

    // MARK: Ranges

    func testClampedBringsValuesIntoRange() {
        let wild = FilterSettings(kind: .lowPass, cutoff: 1e6, q: 100, gain: 3).clamped(sampleRate: 48_000)
        XCTAssertEqual(wild, FilterSettings(kind: .lowPass, cutoff: 21_600, q: 30, gain: 1))
        let low = FilterSettings(kind: .highPass, cutoff: -5, q: 0, gain: -1).clamped(sampleRate: 44_100)
        XCTAssertEqual(low, FilterSettings(kind: .highPass, cutoff: 10, q: 0.1, gain: 0))
        let shelf = FilterSettings.highShelf(cutoff: 5_000, gain: 0.5, slope: 2).clamped(sampleRate: 48_000)
        XCTAssertEqual(shelf.q, 1)
        XCTAssertEqual(FilterSettings(kind: .lowPass, cutoff: .nan, q: .nan, gain: .nan).clamped(sampleRate: 48_000),
                       FilterSettings(kind: .lowPass, cutoff: 21_600, q: 0.7071, gain: 1))
        XCTAssertEqual(FilterSettings(kind: .highPass, cutoff: .nan).clamped(sampleRate: 48_000).cutoff, 10)
        XCTAssertEqual(FilterSettings(kind: .bandPass, cutoff: .nan).clamped(sampleRate: 48_000).cutoff, 1_000)
        XCTAssertEqual(FilterSettings(kind: .highShelf, cutoff: .nan, q: .nan, gain: 0.5).clamped(sampleRate: 48_000),
                       FilterSettings.highShelf(cutoff: 5_000, gain: 0.5, slope: 1))
        XCTAssertEqual(FilterSettings.lowPass(cutoff: .infinity).clamped(sampleRate: 48_000).cutoff, 21_600)
        // A shelf of gain 0 is floored (−120 dB), never NaN.
        let silent = BiquadCoefficients(.highShelf(cutoff: 5_000, gain: 0), sampleRate: 48_000)
        for c in [silent.b0, silent.b1, silent.b2, silent.a1, silent.a2] { XCTAssertTrue(c.isFinite) }
        XCTAssertEqual(silent.magnitude(at: 24_000, sampleRate: 48_000), 1e-6, accuracy: 1e-9)
        // The biquad keeps its target in range.
        let filter = Biquad(.lowPass(cutoff: 1e9), sampleRate: 48_000, smoothingFrames: 0)
        XCTAssertEqual(filter.settings.cutoff, 21_600)
    }

    // MARK: Smoothing

    /// The largest |y[n] − y[n−1]| for n in `range`.
    static func largestStep(_ y: [Float], _ range: Range<Int>) -> Double {
        var worst = 0.0
        for n in range where n > 0 { worst = max(worst, abs(Double(y[n]) - Double(y[n - 1]))) }
        return worst
    }

    /// A 500 Hz sine of 0.9 through a low-pass at 200 Hz, set to 10 kHz after `segment` frames
    /// and back to 200 Hz after 2 × `segment`: the largest steps of the left channel settled,
    /// gliding up, settled, gliding down, settled.
    static func cutoffSweepSteps(smoothing: Int, channels: Int, segment: Int = 9_600)
        -> (before: Double, up: Double, open: Double, down: Double, after: Double)
    {
        var filter = Biquad(.lowPass(cutoff: 200), sampleRate: 48_000, smoothingFrames: smoothing)
        var y = sine(frequency: 500, frames: 3 * segment, channels: channels, sampleRate: 48_000, amplitude: 0.9)
        y.withUnsafeMutableBufferPointer { b in
            for done in stride(from: 0, to: 3 * segment, by: 100) {
                if done == segment { filter.set(.lowPass(cutoff: 10_000)) }
                if done == 2 * segment { filter.set(.lowPass(cutoff: 200)) }
                filter.process(b.baseAddress! + done * channels, frames: 100, channels: channels)
            }
        }
        let left = stride(from: 0, to: y.count, by: channels).map { y[$0] }
        let window = max(2 * smoothing, 100)
        return (largestStep(left, segment - 2_400 ..< segment),
                largestStep(left, segment ..< segment + window),
                largestStep(left, 2 * segment - 2_400 ..< 2 * segment),
                largestStep(left, 2 * segment ..< 2 * segment + window),
                largestStep(left, 3 * segment - 2_400 ..< 3 * segment))
    }

    func testCutoffGlideShowsNoDiscontinuity() {
        let smoothing = 480
        for channels in [1, 2] {
            let s = Self.cutoffSweepSteps(smoothing: smoothing, channels: channels)
            print("BiquadTests: low-pass 200 Hz → 10 kHz → 200 Hz over \(smoothing) frames, 500 Hz sine of 0.9, \(channels) ch: largest steps settled \(s.before), gliding up \(s.up), settled \(s.open), gliding down \(s.down), settled \(s.after)")
            XCTAssertLessThanOrEqual(s.up, 1.25 * max(s.before, s.open))
            XCTAssertLessThanOrEqual(s.down, 1.25 * max(s.open, s.after))
            XCTAssertLessThan(max(s.up, s.down), 0.1, "a click would be a step of the order of 0.9")
        }
        let jump = Self.cutoffSweepSteps(smoothing: 0, channels: 1)
        print("BiquadTests: the same change at once (smoothingFrames 0): largest steps up \(jump.up), down \(jump.down)")
    }

    /// A 200 Hz sine of 0.9 through a 10 kHz low-pass whose gain is set from 1 to 0.1 at a crest
    /// (frame 9_660): the largest step around the change, and of the settled output after it.
    static func gainDropSteps(smoothing: Int) -> (during: Double, before: Double, after: Double) {
        var filter = Biquad(.lowPass(cutoff: 10_000), sampleRate: 48_000, smoothingFrames: smoothing)
        var y = sine(frequency: 200, frames: 19_200, sampleRate: 48_000, amplitude: 0.9)
        y.withUnsafeMutableBufferPointer { b in
            filter.process(b.baseAddress!, frames: 9_660, channels: 1)
            filter.set(.lowPass(cutoff: 10_000, gain: 0.1))
            filter.process(b.baseAddress! + 9_660, frames: 19_200 - 9_660, channels: 1)
        }
        return (largestStep(y, 9_660 ..< 9_660 + max(2 * smoothing, 100)),
                largestStep(y, 7_200 ..< 9_600),
                largestStep(y, 16_800 ..< 19_200))
    }

    func testGainGlideShowsNoDiscontinuityWhereAJumpWouldClick() {
        let glided = Self.gainDropSteps(smoothing: 480)
        let jumped = Self.gainDropSteps(smoothing: 0)
        print("BiquadTests: low-pass gain 1 → 0.1 at a crest of a 200 Hz sine of 0.9: largest step glided over 480 frames \(glided.during) (settled before \(glided.before), after \(glided.after)), at once \(jumped.during)")
        XCTAssertLessThanOrEqual(glided.during, 1.25 * max(glided.before, glided.after))
        XCTAssertGreaterThan(jumped.during, 0.5, "without smoothing the same change is a click")
    }

    func testANewTargetInTheMiddleOfAStretchStartsFromTheCoefficientsInUse() {
        // Gain 1 → 0.1 under a 200 Hz sine of 0.9, turned back to 1 at frame 9_660 + 200 (the
        // middle of a 16-frame stretch): the output neither jumps there nor anywhere else.
        var filter = Biquad(.lowPass(cutoff: 10_000), sampleRate: 48_000, smoothingFrames: 480)
        var y = Self.sine(frequency: 200, frames: 19_200, sampleRate: 48_000, amplitude: 0.9)
        y.withUnsafeMutableBufferPointer { b in
            filter.process(b.baseAddress!, frames: 9_660, channels: 1)
            filter.set(.lowPass(cutoff: 10_000, gain: 0.1))
            filter.process(b.baseAddress! + 9_660, frames: 200, channels: 1)
            let there = filter.current.gain
            filter.set(.lowPass(cutoff: 10_000, gain: 1))
            filter.process(b.baseAddress! + 9_860, frames: 1, channels: 1)
            XCTAssertGreaterThan(filter.current.gain, there)
            filter.process(b.baseAddress! + 9_861, frames: 19_200 - 9_861, channels: 1)
        }
        let settled = Self.largestStep(y, 7_200 ..< 9_600)
        let changing = Self.largestStep(y, 9_660 ..< 9_860 + 960)
        XCTAssertLessThanOrEqual(changing, 1.25 * settled)
        XCTAssertEqual(filter.coefficients, BiquadCoefficients(.lowPass(cutoff: 10_000), sampleRate: 48_000))
    }

    func testKindChangeCrossfadesWithoutDiscontinuity() {
        let sampleRate = 48_000, smoothing = 480, segment = 9_600
        var filter = Biquad(.lowPass(cutoff: 2_000), sampleRate: sampleRate, smoothingFrames: smoothing)
        var y = Self.sine(frequency: 1_000, frames: 2 * segment, sampleRate: sampleRate, amplitude: 0.9)
        y.withUnsafeMutableBufferPointer { b in
            filter.process(b.baseAddress!, frames: segment, channels: 1)
            filter.set(.highPass(cutoff: 4_000))
            XCTAssertTrue(filter.isGliding)
            filter.process(b.baseAddress! + segment, frames: smoothing - 1, channels: 1)
            XCTAssertTrue(filter.isGliding)
            filter.process(b.baseAddress! + segment + smoothing - 1, frames: 1, channels: 1)
            XCTAssertFalse(filter.isGliding)
            filter.process(b.baseAddress! + segment + smoothing, frames: segment - smoothing, channels: 1)
        }
        XCTAssertEqual(filter.coefficients, BiquadCoefficients(.highPass(cutoff: 4_000), sampleRate: sampleRate))
        let before = Self.largestStep(y, segment - 2_400 ..< segment)
        let during = Self.largestStep(y, segment ..< segment + 2 * smoothing)
        let after = Self.largestStep(y, 2 * segment - 2_400 ..< 2 * segment)
        print("BiquadTests: low-pass 2 kHz → high-pass 4 kHz, 1 kHz sine: largest steps settled \(before), crossfading \(during), settled \(after)")
        XCTAssertLessThanOrEqual(during, 1.25 * max(before, after))
    }

    func testParametersReachTheTargetAfterExactlySmoothingFrames() {
        for smoothing in [480, 100, 17, 16, 1] {
            var filter = Biquad(.lowPass(cutoff: 200, q: 0.5, gain: 0.2), sampleRate: 48_000, smoothingFrames: smoothing)
            let target = FilterSettings.lowPass(cutoff: 10_000, q: 2, gain: 0.9)
            let computedBefore = filter.coefficientComputations
            filter.set(target)
            XCTAssertEqual(filter.settings, target)
            var buffer = [Float](repeating: 0.25, count: 2 * (smoothing + 64))
            buffer.withUnsafeMutableBufferPointer { b in
                var done = 0, step = 3
                while done < smoothing - 1 {
                    let n = min(step, smoothing - 1 - done)
                    filter.process(b.baseAddress! + 2 * done, frames: n, channels: 2)
                    XCTAssertTrue(filter.isGliding, "gliding after \(done + n) of \(smoothing) frames")
                    done += n; step = step * 2 + 1
                }
                filter.process(b.baseAddress! + 2 * done, frames: 1, channels: 2)
                XCTAssertFalse(filter.isGliding, "settled after \(smoothing) frames")
                XCTAssertEqual(filter.current, target)
                XCTAssertEqual(filter.coefficients, BiquadCoefficients(target, sampleRate: 48_000))
                // One computation per 16 frames of the glide, none once settled.
                let updates = (smoothing + 15) / 16
                XCTAssertEqual(filter.coefficientComputations - computedBefore, updates)
                for _ in 0..<64 { filter.process(b.baseAddress! + 2 * smoothing, frames: 1, channels: 2) }
                XCTAssertEqual(filter.coefficientComputations - computedBefore, updates)
            }
        }
    }

    func testGlideIsGeometricInCutoffAndLinearInQAndGain() {
        var filter = Biquad(.lowPass(cutoff: 100, q: 1, gain: 0.2), sampleRate: 48_000, smoothingFrames: 320)
        filter.set(.lowPass(cutoff: 10_000, q: 3, gain: 1))
        var buffer = [Float](repeating: 0, count: 160)
        buffer.withUnsafeMutableBufferPointer { filter.process($0.baseAddress!, frames: 144, channels: 1) }
        // Frames 145 … 160 use the parameters at k = 160 = L/2: the geometric and linear midpoints.
        buffer.withUnsafeMutableBufferPointer { filter.process($0.baseAddress!, frames: 1, channels: 1) }
        XCTAssertEqual(filter.current.cutoff, 1_000, accuracy: 0.01)
        XCTAssertEqual(filter.current.q, 2, accuracy: 1e-6)
        XCTAssertEqual(filter.current.gain, 0.6, accuracy: 1e-6)
        // A new target half-way starts from where the filter is: no jump.
        let there = filter.current
        filter.set(.lowPass(cutoff: 100, q: 1, gain: 0.2))
        buffer.withUnsafeMutableBufferPointer { filter.process($0.baseAddress!, frames: 1, channels: 1) }
        XCTAssertLessThan(filter.current.cutoff, there.cutoff)
        XCTAssertGreaterThan(filter.current.cutoff, there.cutoff * 0.85)
    }

    func testOutputDoesNotDependOnHowFramesAreSplit() {
        let input = Self.testSignal(frames: 4_000, channels: 2, sampleRate: 48_000, seed: 7)
        func render(_ blocks: [Int]) -> [Float] {
            var filter = Biquad(.bandPass(centre: 300, q: 2), sampleRate: 48_000, smoothingFrames: 1_000)
            var samples = input
            var done = 0, b = 0
            samples.withUnsafeMutableBufferPointer { buffer in
                while done < 4_000 {
                    if done >= 500 && filter.settings.cutoff == 300 { filter.set(.bandPass(centre: 6_000, q: 0.5, gain: 0.5)) }
                    if done >= 1_210 && filter.settings.cutoff == 6_000 { filter.set(.bandPass(centre: 2_000, q: 1)) }
                    if done >= 2_000 && filter.settings.kind == .bandPass { filter.set(.highShelf(cutoff: 5_000, gain: 0.1)) }
                    if done >= 2_300 && filter.settings.kind == .highShelf && filter.settings.gain == 0.1 {
                        filter.set(.highShelf(cutoff: 3_000, gain: 0.5))
                    }
                    let limit = done < 500 ? 500 : (done < 1_210 ? 1_210 : (done < 2_000 ? 2_000 : (done < 2_300 ? 2_300 : 4_000)))
                    let n = min(blocks[b % blocks.count], limit - done)
                    filter.process(buffer.baseAddress! + 2 * done, frames: n, channels: 2)
                    done += n; b += 1
                }
            }
            return samples
        }
        let whole = render([4_000])
        XCTAssertEqual(render([1]), whole)
        XCTAssertEqual(render([7, 64, 333, 16, 5]), whole)
        XCTAssertEqual(render([0, 256]), whole)
    }

    // MARK: Rewind safety

    func testRestoringACopyRendersTheSameFramesBitForBit() {
        let input = Self.testSignal(frames: 3_000, channels: 2, sampleRate: 48_000, seed: 99)
        // Settled, gliding, and crossfading between kinds, where the copy is taken.
        let situations: [(String, (inout Biquad) -> Void)] = [
            ("settled", { _ in }),
            ("gliding", { $0.set(.lowPass(cutoff: 12_000, q: 3)) }),
            ("crossfading", { $0.set(.highPass(cutoff: 500)) }),
        ]
        for (name, change) in situations {
            var filter = Biquad(.lowPass(cutoff: 800), sampleRate: 48_000, smoothingFrames: 960)
            var warmup = Array(input[0..<2_000])
            Self.run(&filter, &warmup, channels: 2, blocks: [100])
            change(&filter)
            var some = Array(input[2_000..<2_200])
            Self.run(&filter, &some, channels: 2, blocks: [37])
            let saved = filter
            var first = Array(input[2_200...])
            Self.run(&filter, &first, channels: 2, blocks: [256])
            filter = saved
            var again = Array(input[2_200...])
            Self.run(&filter, &again, channels: 2, blocks: [13, 300])
            XCTAssertEqual(first, again, "re-render after restoring a copy taken while \(name)")
        }
    }

    func testResetZeroesTheHistoryAndZeroFramesDoNothing() {
        var filter = Biquad(.lowPass(cutoff: 500), sampleRate: 48_000, smoothingFrames: 0)
        var noise = Self.testSignal(frames: 512, channels: 1, sampleRate: 48_000, seed: 3)
        Self.run(&filter, &noise, channels: 1)
        // 0 frames: nothing written, nothing changed (the next frames come out as without it).
        var one: [Float] = [0.5]
        var twin = filter
        one.withUnsafeMutableBufferPointer { filter.process($0.baseAddress!, frames: 0, channels: 1) }
        XCTAssertEqual(one, [0.5])
        var c: [Float] = [0.5, -0.5], d = c
        Self.run(&filter, &c, channels: 1)
        Self.run(&twin, &d, channels: 1)
        XCTAssertEqual(c, d)
        filter.reset()
        var fresh = Biquad(.lowPass(cutoff: 500), sampleRate: 48_000, smoothingFrames: 0)
        var a: [Float] = [0.5, 0.25, -1], b = a
        Self.run(&filter, &a, channels: 1)
        Self.run(&fresh, &b, channels: 1)
        XCTAssertEqual(a, b)
    }

    // MARK: Real time

    func testProcessSetAndResetAllocateNothing() {
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 256)
        defer { buffer.deallocate() }
        buffer.initialize(repeating: 0.25, count: 2 * 256)
        var filter = Biquad(.lowPass(cutoff: 500), sampleRate: 48_000, smoothingFrames: 240)
        var round = 0
        // Settled, gliding (cutoff, Q, gain) and crossfading (a change of kind), mono and stereo.
        func period() {
            round += 1
            switch round % 4 {
            case 0: filter.set(.lowPass(cutoff: Float(200 + round % 7 * 1_000), q: 2, gain: 0.5))
            case 1: filter.set(.highShelf(cutoff: 5_000, gain: AirAbsorption.highFrequencyGain(distance: Float(round % 300), factor: 1)))
            case 2: filter.reset()
            default: break
            }
            filter.process(buffer, frames: 256, channels: 1 + round % 2)
        }
        for _ in 0..<100 { period() }
        let audit = AllocationAudit()
        XCTAssertGreaterThan(audit.measure { blackHole([round, round]) }.swiftObjects, 0)
        var attempts: [AllocationAudit.Measurement] = []
        for _ in 0..<3 {
            let m = audit.measure { for _ in 0..<2_000 { period() } }
            attempts.append(m)
            if m.bytes == 0 { break }
        }
        XCTAssertTrue(attempts.allSatisfy { $0.swiftObjects == 0 }, "\(attempts)")
        XCTAssertTrue(attempts.contains { ($0.bytes ?? 0) == 0 }, "\(attempts)")
    }

    // MARK: Air absorption

    func testAirAbsorption() {
        XCTAssertEqual(AirAbsorption.highFrequencyGain(distance: 100, factor: 1), Float(pow(0.99426, 100.0)), accuracy: 1e-6)
        XCTAssertEqual(AirAbsorption.highFrequencyGain(distance: 100, factor: 0), 1)
        XCTAssertEqual(AirAbsorption.highFrequencyGain(distance: 0, factor: 3), 1)
        XCTAssertEqual(AirAbsorption.highFrequencyGain(distance: 50, factor: 2, metersPerUnit: 0.5), Float(pow(0.99426, 50.0)), accuracy: 1e-6)
        // About −0.05 dB per metre at 5 kHz.
        XCTAssertEqual(Self.dB(Double(AirAbsorption.highFrequencyGain(distance: 1, factor: 1))), -0.05, accuracy: 0.001)

        let g = AirAbsorption.highFrequencyGain(distance: 100, factor: 1)
        let settings = AirAbsorption.filter(distance: 100, factor: 1)
        XCTAssertEqual(settings, .highShelf(cutoff: 5_000, gain: g * g, slope: 1))
        // OpenAL Soft's shelf: the gain at 5 kHz is the high-frequency gain, unity at DC.
        XCTAssertEqual(Self.measuredGain(settings, at: 5_000, sampleRate: 48_000), Double(g), accuracy: 1e-4)
        XCTAssertEqual(Self.settledOutput(settings, input: { _ in 1 }, sampleRate: 48_000), 1, accuracy: 1e-6)
        // No absorption: a shelf of gain 1 passes everything unchanged.
        XCTAssertEqual(AirAbsorption.filter(distance: 100, factor: 0).gain, 1)
    }

    // MARK: Cost (printed, not asserted)

    func testCostPerFrame() {
        let frames = 256, blocks = 2_000
        for channels in [1, 2] {
            var filter = Biquad(.lowPass(cutoff: 3_000, q: 0.9), sampleRate: 48_000, smoothingFrames: 240)
            var samples = Self.testSignal(frames: frames, channels: channels, sampleRate: 48_000, seed: 1)
            let clock = ContinuousClock()
            let elapsed = samples.withUnsafeMutableBufferPointer { b in
                clock.measure {
                    for _ in 0..<blocks { filter.process(b.baseAddress!, frames: frames, channels: channels) }
                }
            }
            let ns = Double(elapsed.components.attoseconds) / 1e9 + Double(elapsed.components.seconds) * 1e9
            print("BiquadTests: settled biquad, \(channels) ch, \(frames)-frame blocks: \(ns / Double(frames * blocks)) ns per frame (this build's optimisation)")
        }
        print("BiquadTests: a Biquad is \(MemoryLayout<Biquad>.size) bytes of plain data (stride \(MemoryLayout<Biquad>.stride))")
    }
}
