import CSFXKernels

/// A value that moves in a straight line to a target over a number of frames, one step per frame.
///
/// The value for the k-th frame after `glide(to:over:)` (k = 1…length) is
/// `start + step · k` with `step = (target − start) / length`, computed from k itself rather than
/// by repeated addition, and the last frame is exactly `target`. The values depend only on how
/// many frames have passed, never on how rendering was split into blocks.
struct Ramp {
    private(set) var target: Float
    private var start: Float
    private var step: Float = 0
    private var length = 0
    private var elapsed = 0

    /// A ramp resting at `value`.
    init(_ value: Float) {
        target = value
        start = value
    }

    /// The value of the most recent frame.
    var value: Float { elapsed >= length ? target : start + step * Float(elapsed) }

    /// True when the ramp has reached its target.
    var isSettled: Bool { elapsed >= length }

    /// Frames left until the target is reached.
    var remaining: Int { length - elapsed }

    /// Starts a glide from the current value to `newTarget`; 0 frames jumps there at once.
    mutating func glide(to newTarget: Float, over frames: Int) {
        start = value
        target = newTarget
        length = max(frames, 0)
        elapsed = 0
        step = length > 0 ? (newTarget - start) / Float(length) : 0
    }

    /// `value(after:)` of k, k + 1, k + 2 and k + 3, lane by lane the same arithmetic.
    @inline(__always)
    func values(after k: Int) -> SIMD4<Float> {
        let e = SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: elapsed) &+ Int32(truncatingIfNeeded: k)) &+ SIMD4(0, 1, 2, 3)
        let v = SIMD4(repeating: start) + SIMD4(repeating: step) * SIMD4<Float>(e)
        return v.replacing(with: target, where: e .>= SIMD4(repeating: Int32(truncatingIfNeeded: length)))
    }

    /// True when `value(after:)` may be used: the glide is shorter than 2³⁰ frames (its frame
    /// count fits the 32-bit arithmetic that lets the loops calling it vectorise).
    var isBlockable: Bool { length < 1 << 30 }

    /// The ramp as the C kernels take it (`value(after:)`'s arithmetic, 32-bit frame counts).
    var kernelState: sfx_ramp_state {
        sfx_ramp_state(start: start, step: step, target: target, elapsed: Int32(truncatingIfNeeded: elapsed),
                       length: Int32(truncatingIfNeeded: length))
    }

    /// Moves `frames` frames on at once (the value is that of `frames` calls of `next`).
    mutating func advance(by frames: Int) {
        elapsed = min(elapsed + max(frames, 0), max(length, elapsed))
    }

    /// The value `k` frames on (k ≥ 1) without moving: what the k-th call of `next` would
    /// return. Free of branches (a select), so a loop over frames that calls it can be
    /// vectorised; `advance(by:)` then moves the ramp past the frames used.
    @inline(__always)
    func value(after k: Int) -> Float {
        let e = Int32(truncatingIfNeeded: elapsed) &+ Int32(truncatingIfNeeded: k)
        let v = start + step * Float(e)
        return e < Int32(truncatingIfNeeded: length) ? v : target
    }

    /// Moves one frame on and returns the value for that frame.
    @inline(__always)
    mutating func next() -> Float {
        guard elapsed < length else { return target }
        elapsed += 1
        return value
    }
}
