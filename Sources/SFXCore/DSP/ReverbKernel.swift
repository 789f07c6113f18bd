import Glibc

/// The reverb's network (laws in `EffectProcessor`'s header). Plain data: pointers into an
/// `EffectMemory` and constants computed in `init`; `run` writes only through the pointers.
struct ReverbKernel {
    static let lineCount = 8
    /// Lengths of the eight feedback lines, ms, before rounding up to distinct primes of frames.
    static let lineMilliseconds: [Double] = [23.3, 27.1, 30.7, 34.9, 38.3, 42.1, 46.7, 51.1]
    /// The three shared input allpasses, then the left and the right one, ms.
    static let allpassMilliseconds: [Double] = [5.3, 3.7, 2.9, 1.3, 1.7]
    /// Level of the early (diffused, pre-delayed) signal in the output, before normalisation.
    static let earlyLevel: Double = 0.5
    /// −96 dB.
    static let silence: Double = 1.5848931924611108e-5

    let memory: EffectMemory
    // Ring layout (offsets into memory.rings).
    let preDelayRing: UnsafeMutablePointer<Float>, preDelayMask: Int, preDelay: Int
    let allpassRing: UnsafeMutablePointer<Float>, allpassSize: Int, allpassMask: Int
    let allpassDelay: (Int, Int, Int, Int, Int)
    let allpassCoefficient: Float
    let lineRing: UnsafeMutablePointer<Float>, lineSize: Int, lineMask: Int
    /// The eight line delays (memory.integers).
    let lineDelay: UnsafeMutablePointer<Int>
    /// Per line i, memory.constants[i + 8k] for k = 0…4: the absorption filter
    /// y = b0·x + b1·x[−1] + a1·y[−1] (b0 and b1 times 1/√8, the Hadamard's scale), then the left
    /// and right output taps; then 8 floats of scratch (the filtered outputs of one frame).
    let table: UnsafeMutablePointer<Float>
    static let b0 = 0, b1 = 8, a1 = 16, tapLeft = 24, tapRight = 32, scratch = 40, tableFloats = 48
    /// Input into each line (even lines from the left allpass, odd from the right): 1/√8.
    let injection: Float
    let early: Float
    let monitorThreshold: Float
    let quietWindow: Int

    init(_ s: ReverbSettings, sampleRate: Int, headroom: Int) {
        let fs = Double(max(1, sampleRate))
        let decay = Double(min(max(s.decayTime.isFinite ? s.decayTime : 1, 0.1), 20))
        let ratio = Double(min(max(s.highFrequencyRatio.isFinite ? s.highFrequencyRatio : 1, 0.1), 2))
        let pre = Double(min(max(s.preDelay.isFinite ? s.preDelay : 0, 0), 0.3))
        let diffusion = Double(min(max(s.diffusion.isFinite ? s.diffusion : 1, 0), 1))
        let gain = Double(min(max(s.gain.isFinite ? s.gain : 0, 0), 1))
        let headroom = max(0, headroom)

        // Delays in frames: lines on distinct primes (so mutually prime), allpasses rounded.
        var lines: [Int] = []
        for ms in Self.lineMilliseconds {
            var n = max(2, Int((ms * fs / 1000).rounded()))
            while !Self.isPrime(n) || lines.contains(n) { n += 1 }
            lines.append(n)
        }
        let allpasses = Self.allpassMilliseconds.map { max(1, Int(($0 * fs / 1000).rounded())) }
        preDelay = Int((pre * fs).rounded())

        let preSize = EffectMemory.ringSize(preDelay + headroom + 1)
        allpassSize = EffectMemory.ringSize(allpasses.max()! + headroom + 1)
        lineSize = EffectMemory.ringSize(lines.max()! + headroom + 1)
        memory = EffectMemory(ringFloats: preSize + 5 * allpassSize + Self.lineCount * lineSize, floatCount: 16,
                              constantFloats: Self.tableFloats, constantInts: 8)
        preDelayRing = memory.rings
        preDelayMask = preSize - 1
        allpassRing = memory.rings + preSize
        allpassMask = allpassSize - 1
        lineRing = allpassRing + 5 * allpassSize
        lineMask = lineSize - 1
        allpassDelay = (allpasses[0], allpasses[1], allpasses[2], allpasses[3], allpasses[4])
        allpassCoefficient = Float(0.62 * diffusion)
        lineDelay = memory.integers
        for i in 0..<8 { lineDelay[i] = lines[i] }
        table = memory.constants

        // Absorption: line i of m frames loses 60 dB in `decay` at DC (the mids) and in
        // decay × ratio at 5 kHz: g = 10^(−3m / (T·fs)).
        // The gain ρ·g at 5 kHz comes from a first-order high shelf (bilinear transform) with
        // gain 1 at DC and G = ρ² at Nyquist, whose corner Ωc = ρ·Ω5 (Ω = tan(πf/fs)) puts
        // exactly ρ at 5 kHz: |H|² = (G²Ω² + Ωc²)/(Ω² + Ωc²). Above 1 (HF ringing longer)
        // ρ is capped so the loop gain at Nyquist, g·ρ², stays ≤ 0.995.
        let omega5 = tan(Double.pi * min(5000, 0.45 * fs) / fs)
        var coefficients: [(Double, Double, Double)] = []
        for i in 0..<8 {
            let m = Double(lines[i])
            let g = pow(10, -3 * m / (decay * fs))
            var rho = pow(10, -3 * m / fs * (1 / (decay * ratio) - 1 / decay))
            if rho > 1 { rho = min(rho, (0.995 / g).squareRoot()) }
            let shelf = rho * rho, corner = rho * omega5
            let c = (g * (shelf + corner) / (1 + corner), g * (corner - shelf) / (1 + corner), (1 - corner) / (1 + corner))
            coefficients.append(c)
            let scale = 1 / 8.0.squareRoot()
            table[Self.b0 + i] = Float(c.0 * scale)
            table[Self.b1 + i] = Float(c.1 * scale)
            table[Self.a1 + i] = Float(c.2)
        }

        // Energy per output channel of a unit impulse, before normalisation: the early tap's
        // e² (the allpasses keep energy), plus the late part ≈ mean over frequency of ḡ²/(1 − ḡ²),
        // ḡ² the lines' mean power gain per pass (the input spreads energy 1 over the lines and
        // the lossless Hadamard keeps it; each pass out of the lines costs ḡ²).
        var late = 0.0
        let bins = 256
        for k in 0..<bins {
            let w = Double.pi * (Double(k) + 0.5) / Double(bins)
            var meanPower = 0.0
            for c in coefficients {
                let (re, im) = (c.0 + c.1 * cos(w), -c.1 * sin(w))
                let (dre, dim) = (1 - c.2 * cos(w), c.2 * sin(w))
                meanPower += (re * re + im * im) / (dre * dre + dim * dim)
            }
            meanPower /= 8
            late += meanPower / (1 - meanPower)
        }
        late /= Double(bins)
        let e = Self.earlyLevel
        let norm = gain / (e * e + late).squareRoot()
        // Taps on the filtered line outputs (scaled by 1/√8 in the filters, hence the √8):
        // two orthogonal ±1 patterns that are not rows of the Hadamard matrix.
        let left: [Float] = [1, 1, -1, 1, -1, -1, 1, -1]
        let right: [Float] = [1, -1, 1, 1, -1, 1, -1, -1]
        let tapScale = Float(norm * 8.0.squareRoot())
        for i in 0..<8 {
            table[Self.tapLeft + i] = left[i] * tapScale
            table[Self.tapRight + i] = right[i] * tapScale
        }
        early = Float(e * norm)
        injection = Float(1 / 8.0.squareRoot())
        // Idle: line reads and the diffused input below a level that keeps every output sample
        // under −96 dB (|y| ≤ Σ|tap|·|filter|₁·max|read| + early·|input|), for as long as a signal
        // takes to pass the pre-delay, the allpasses and the longest line.
        var filterL1 = 0.0
        for c in coefficients { filterL1 = max(filterL1, abs(c.0) + abs(c.1 + c.2 * c.0) / (1 - abs(c.2))) }
        let bound = 8 * norm * filterL1 + e * norm + 1e-30
        monitorThreshold = Float(Self.silence / bound)
        quietWindow = preDelay + allpasses.reduce(0, +) + lines.max()! + 1
    }

    static func isPrime(_ n: Int) -> Bool {
        if n < 2 { return false }
        var d = 2
        while d * d <= n { if n % d == 0 { return false }; d += 1 }
        return true
    }

    /// Processes `frames` frames: `input` nil is silence. Adds into `output`. Written with
    /// scalars, pointers and `while` loops, which stay fast in debug builds too (the tests run
    /// minutes of audio through it).
    func run(input: UnsafePointer<Float>?, inputChannels: Int, frames: Int,
             output: UnsafeMutablePointer<Float>, outputChannels: Int) {
        let ints = memory.ints
        let memo = memory.floats          // x[−1] of line i at i, y[−1] at 8 + i
        let k = table, f = table + Self.scratch, delay = lineDelay
        var t = Int(ints[EffectMemory.frameCounter])
        let g = allpassCoefficient
        let ap = allpassRing, apSize = allpassSize, apMask = allpassMask
        let (d0, d1, d2, dl, dr) = allpassDelay
        let lines = lineRing, size = lineSize, mask = lineMask
        let pre = preDelayRing, preMask = preDelayMask, preFrames = preDelay
        let inject = injection, earlyGain = early
        let monoGain: Float = 0.70710678
        var inputPeak: Float = 0
        var signalPeak: Float = 0

        var n = 0
        while n < frames {
            var x: Float = 0
            if let input {
                x = inputChannels >= 2 ? 0.5 * (input[2 &* n] + input[2 &* n &+ 1]) : input[n]
                if !x.isFinite { x = 0 }   // a NaN or ∞ would sound for ever
            }
            let xm = x < 0 ? -x : x
            if xm > inputPeak { inputPeak = xm }
            // Pre-delay (written first, so a delay of 0 passes the frame through).
            pre[t & preMask] = x
            var a = pre[(t &- preFrames) & preMask]
            // Schroeder allpasses: w = a + g·w[−d], out = w[−d] − g·w.
            var r = ap
            var old = r[(t &- d0) & apMask]; var w = a + g * old; r[t & apMask] = w; a = old - g * w
            r += apSize
            old = r[(t &- d1) & apMask]; w = a + g * old; r[t & apMask] = w; a = old - g * w
            r += apSize
            old = r[(t &- d2) & apMask]; w = a + g * old; r[t & apMask] = w; a = old - g * w
            r += apSize
            old = r[(t &- dl) & apMask]; w = a + g * old; r[t & apMask] = w; let earlyL = old - g * w
            r += apSize
            old = r[(t &- dr) & apMask]; w = a + g * old; r[t & apMask] = w; let earlyR = old - g * w
            let el = earlyL < 0 ? -earlyL : earlyL, er = earlyR < 0 ? -earlyR : earlyR
            if el > signalPeak { signalPeak = el }
            if er > signalPeak { signalPeak = er }

            // The lines: read, absorb, tap.
            var left = earlyGain * earlyL, right = earlyGain * earlyR
            var i = 0
            while i < 8 {
                let s = lines[i &* size &+ ((t &- delay[i]) & mask)]
                let sm = s < 0 ? -s : s
                if sm > signalPeak { signalPeak = sm }
                let y = k[Self.b0 &+ i] * s + k[Self.b1 &+ i] * memo[i] + k[Self.a1 &+ i] * memo[8 &+ i]
                memo[i] = s
                memo[8 &+ i] = y
                f[i] = y
                left += k[Self.tapLeft &+ i] * y
                right += k[Self.tapRight &+ i] * y
                i &+= 1
            }
            if outputChannels >= 2 {
                output[2 &* n] += left
                output[2 &* n &+ 1] += right
            } else {
                output[n] += monoGain * (left + right)
            }

            // Mix (Hadamard, three butterfly stages) and write back with the input.
            let p0 = f[0] + f[4], p4 = f[0] - f[4], p1 = f[1] + f[5], p5 = f[1] - f[5]
            let p2 = f[2] + f[6], p6 = f[2] - f[6], p3 = f[3] + f[7], p7 = f[3] - f[7]
            let q0 = p0 + p2, q2 = p0 - p2, q1 = p1 + p3, q3 = p1 - p3
            let q4 = p4 + p6, q6 = p4 - p6, q5 = p5 + p7, q7 = p5 - p7
            let inL = inject * earlyL, inR = inject * earlyR
            let slot = t & mask
            lines[slot] = q0 + q1 + inL
            lines[size &+ slot] = q0 - q1 + inR
            lines[2 &* size &+ slot] = q2 + q3 + inL
            lines[3 &* size &+ slot] = q2 - q3 + inR
            lines[4 &* size &+ slot] = q4 + q5 + inL
            lines[5 &* size &+ slot] = q4 - q5 + inR
            lines[6 &* size &+ slot] = q6 + q7 + inL
            lines[7 &* size &+ slot] = q6 - q7 + inR
            t &+= 1
            n &+= 1
        }
        ints[EffectMemory.frameCounter] = Int64(t)
        memory.endBlock(frames: frames, inputPeak: inputPeak, signalPeak: signalPeak,
                        threshold: monitorThreshold, window: quietWindow)
    }
}
