/// One voice's binaural renderer: a mono source heading a direction, rendered as the two ears
/// would hear it through an `HRTFTable`, added into interleaved stereo.
///
/// ```swift
/// var hrtf = HRTFVoice()
/// let memory = UnsafeMutablePointer<Float>.allocate(capacity: HRTFVoice.memoryFloats(table: t, maximumFrames: 1024, rewindHeadroomFrames: 4096))
/// let scratch = UnsafeMutablePointer<Float>.allocate(capacity: HRTFVoice.scratchFloats(table: t, maximumFrames: 1024))
/// hrtf.reset(memory: memory, table: t, maximumFrames: 1024, rewindHeadroomFrames: 4096)
/// hrtf.render(mono, frames: 256, toward: [1, 0, 0], gain: 0.5, table: t, memory: memory, scratch: scratch, addingInto: stereo)
/// ```
///
/// ## Law
/// For each ear, with the table's taps h[0 ..< L] (L = `irLength`) and delay d frames for the
/// direction (`HRTFTable.filter(toward:)`), the ear's signal is the direct-form FIR
///     y[n] = Σₖ h[k] · x(n − d − k),   k = 0 ..< L,
/// where x(t) between two input frames is their straight line (linear interpolation of the
/// history: x(n − D − f) = (1 − f)·x[n − D] + f·x[n − D − 1], D = ⌊d⌋, f = d − D). The
/// interpolation is folded into the taps, g[k] = (1 − f)·h[k] + f·h[k − 1] for k = 0 … L, so each
/// ear runs one FIR of L + 1 taps at the integer delay D: the same sum, computed once per block.
/// Input before the first frame after `reset` is silence.
///
/// Within a block of N frames (one `render` call), frame n = 0 ..< N gets
///     out[n] += gain(n) · ((1 − t(n)) · y_previous[n] + t(n) · y_current[n]),
///     t(n) = (n + 1) / N,   gain(n) = g₀ + (g₁ − g₀) · (n + 1) / N,
/// with y_previous the filter of the previous call's direction, y_current this call's, g₀ the
/// previous call's gain and g₁ this one's: the block ends exactly at the new filter and gain, so
/// a moving source turns without a click. When the direction is the previous one (==), only one
/// filter runs. The first call after `reset` starts at its direction and gain: no fade, no glide.
///
/// ## Real time and rewind
/// `render` never allocates, locks or retains: its memory is the caller's (`memory`: the input
/// history, a ring of a power of two frames, and `scratch`: the two directions' filters and the
/// block's work, reused by every voice of a thread). The ring holds the history the filters need
/// (`irLength` + `maximumDelay` frames), one block and `rewindHeadroomFrames` more, so nothing
/// written in the last `rewindHeadroomFrames` frames overwrote anything still to be read: this
/// struct (the ring's position, the previous direction and gain) is the whole state a rewind has
/// to save. Copy it, render up to `rewindHeadroomFrames` frames, put the copy back and render the
/// same input: the output is the same, bit for bit. `reset` writes nothing to `memory` (the frames
/// before it read as silence), so a voice reset during a re-render does not disturb another's.
public struct HRTFVoice: Sendable, BitwiseCopyable {
    /// Input frames written since `reset`: the ring's position (frame i lives at i & ringMask).
    private var written: Int = 0
    private var ringMask: Int = 0
    /// The largest block one pass handles (longer calls are processed in such pieces).
    private var maximumFrames: Int = 0
    private var direction: SIMD3<Float> = .zero
    private var gain: Float = 0
    /// Whether a call has rendered since `reset` (a direction and gain to fade from).
    private var started = false

    /// A voice that has not been reset: call `reset` before the first `render`.
    public init() {}

    /// History frames a filter reads before a block: irLength taps plus maximumDelay − 1 frames.
    private static func historyFrames(_ table: HRTFTable) -> Int { table.irLength + table.maximumDelay - 1 }

    /// Floats of one voice's memory: its input ring, the smallest power of two that holds the
    /// filters' history (`irLength` + `maximumDelay` − 1 frames), `maximumFrames` and
    /// `rewindHeadroomFrames`.
    public static func memoryFloats(table: HRTFTable, maximumFrames: Int, rewindHeadroomFrames: Int) -> Int {
        let needed = historyFrames(table) + max(1, maximumFrames) + max(0, rewindHeadroomFrames)
        var frames = 1
        while frames < needed { frames <<= 1 }
        return frames
    }

    /// Scratch floats the caller provides for one render call (filters of the two directions etc.):
    /// 4 × (irLength + 1) folded taps, 2 × irLength taps from the table, the history window
    /// (history + maximumFrames) and two ear signals of maximumFrames. One scratch serves every
    /// voice of a thread, one call at a time.
    public static func scratchFloats(table: HRTFTable, maximumFrames: Int) -> Int {
        let frames = max(1, maximumFrames)
        return 4 * (table.irLength + 1) + 2 * table.irLength + historyFrames(table) + frames + 2 * frames
    }

    /// Forget the history (a voice starting, or coming back from virtual): the next `render`
    /// hears silence before its first frame and starts at its direction and gain. `memory` must
    /// hold `memoryFloats(table:maximumFrames:rewindHeadroomFrames:)` floats for the same
    /// arguments; it is not written (see the type's rewind notes). `maximumFrames` is the largest
    /// block one pass handles (a longer `render` is split, with the same law).
    public mutating func reset(memory: UnsafeMutablePointer<Float>, table: HRTFTable, maximumFrames: Int, rewindHeadroomFrames: Int) {
        written = 0
        ringMask = Self.memoryFloats(table: table, maximumFrames: maximumFrames, rewindHeadroomFrames: rewindHeadroomFrames) - 1
        self.maximumFrames = max(1, maximumFrames)
        direction = .zero
        gain = 0
        started = false
    }

    /// Renders `frames` mono samples heading `direction` (head coordinates: x right, y up, z
    /// forward), with linear gain gliding from the previous call's gain to `gain` over the block,
    /// ADDING into interleaved stereo `output` (2 × frames floats, left first). The filter of the
    /// previous call's direction crossfades into this one's over the block (no click when the
    /// source moves); the first call after reset starts at `direction` with no fade. `table`,
    /// `memory` and `maximumFrames` are those of the last `reset`; `scratch` holds
    /// `scratchFloats(table:maximumFrames:)` floats. No allocation, no locks.
    public mutating func render(_ input: UnsafePointer<Float>, frames: Int, toward direction: SIMD3<Float>, gain: Float,
                                table: HRTFTable, memory: UnsafeMutablePointer<Float>, scratch: UnsafeMutablePointer<Float>,
                                addingInto output: UnsafeMutablePointer<Float>) {
        guard frames > 0, maximumFrames > 0 else { return }
        if !started {
            self.direction = direction
            self.gain = gain
            started = true
        }
        let taps = table.irLength + 1
        let history = Self.historyFrames(table)
        let currentLeft = scratch, currentRight = scratch + taps
        let previousLeft = scratch + 2 * taps, previousRight = scratch + 3 * taps
        let raw = scratch + 4 * taps
        let window = raw + 2 * table.irLength
        let earA = window + history + maximumFrames, earB = earA + maximumFrames

        let fading = self.direction != direction
        let current = Self.prepare(table: table, direction: direction, raw: raw, left: currentLeft, right: currentRight)
        let previous = fading ? Self.prepare(table: table, direction: self.direction, raw: raw, left: previousLeft, right: previousRight) : current
        let startGain = self.gain, gainStep = (gain - startGain) / Float(frames), fadeStep = 1 / Float(frames)

        var done = 0
        while done < frames {
            let count = min(maximumFrames, frames - done)
            // Write this piece into the ring, then gather [start − history, start + count) from it.
            let start = written
            for i in 0..<count { memory[(start + i) & ringMask] = input[done + i] }
            written += count
            for i in 0..<(history + count) {
                let frame = start - history + i
                window[i] = frame >= 0 ? memory[frame & ringMask] : 0
            }
            let now = window + history   // frame `start`
            for ear in 0..<2 {
                let out = output + 2 * done + ear
                let currentTaps = ear == 0 ? currentLeft : currentRight
                Self.fir(now - (ear == 0 ? current.left : current.right), taps: currentTaps, count: taps, frames: count, into: earA)
                if fading {
                    let previousTaps = ear == 0 ? previousLeft : previousRight
                    Self.fir(now - (ear == 0 ? previous.left : previous.right), taps: previousTaps, count: taps, frames: count, into: earB)
                    for n in 0..<count {
                        let position = Float(done + n + 1)
                        let t = position * fadeStep
                        let g = startGain + gainStep * position
                        out[2 * n] += g * ((1 - t) * earB[n] + t * earA[n])
                    }
                } else {
                    for n in 0..<count {
                        let g = startGain + gainStep * Float(done + n + 1)
                        out[2 * n] += g * earA[n]
                    }
                }
            }
            done += count
        }
        self.direction = direction
        self.gain = gain
    }

    /// The table's filter toward `direction`, with each ear's fractional delay folded into its
    /// taps (g[k] = (1 − f)·h[k] + f·h[k − 1], L + 1 taps); returns the integer delays.
    @inline(__always)
    private static func prepare(table: HRTFTable, direction: SIMD3<Float>, raw: UnsafeMutablePointer<Float>,
                                left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) -> (left: Int, right: Int) {
        let length = table.irLength
        let (leftDelay, rightDelay) = table.filter(toward: direction, left: raw, right: raw + length)
        func fold(_ h: UnsafeMutablePointer<Float>, _ delay: Float, into g: UnsafeMutablePointer<Float>) -> Int {
            let whole = delay.rounded(.down), f = delay - whole
            g[0] = (1 - f) * h[0]
            for k in 1..<length { g[k] = (1 - f) * h[k] + f * h[k - 1] }
            g[length] = f * h[length - 1]
            return Int(whole)
        }
        return (fold(raw, leftDelay, into: left), fold(raw + length, rightDelay, into: right))
    }

    /// out[n] = Σₖ g[k] · x[n − k] for n in 0 ..< frames, k in 0 ..< count (x[−k] reads before
    /// `x`: the history). Sixteen outputs at a time in two SIMD8 accumulators, the sum over k in
    /// the same order for every output (the tail is scalar with the same order), so the result
    /// does not depend on how a block is split.
    @inline(__always)
    private static func fir(_ x: UnsafePointer<Float>, taps g: UnsafePointer<Float>, count: Int, frames: Int, into out: UnsafeMutablePointer<Float>) {
        var n = 0
        while n + 16 <= frames {
            var a = SIMD8<Float>(), b = SIMD8<Float>()
            var p = UnsafeRawPointer(x + n)
            for k in 0..<count {
                let tap = SIMD8<Float>(repeating: g[k])
                a += tap * p.loadUnaligned(as: SIMD8<Float>.self)
                b += tap * p.loadUnaligned(fromByteOffset: 32, as: SIMD8<Float>.self)
                p -= 4
            }
            UnsafeMutableRawPointer(out + n).storeBytes(of: a, as: SIMD8<Float>.self)
            UnsafeMutableRawPointer(out + n + 8).storeBytes(of: b, as: SIMD8<Float>.self)
            n += 16
        }
        while n < frames {
            var s: Float = 0
            for k in 0..<count { s += g[k] * x[n - k] }
            out[n] = s
            n += 1
        }
    }
}
