/// A second-order IIR filter (the "RBJ Audio EQ Cookbook" designs) for shaping noise and tone.
///
/// A biquad keeps two samples of state; `process(_:)` runs it over a whole buffer from silence.
/// Cascade two lowpasses with Q 0.541 and 1.307 for a 4th-order Butterworth.
///
/// ```swift
/// let body = Biquad.bandpass(center: 2_500, q: 1.2).process(noise)
/// ```
struct Biquad {
    private var b0, b1, b2, a1, a2: Double

    private init(b0: Double, b1: Double, b2: Double, a0: Double, a1: Double, a2: Double) {
        self.b0 = b0 / a0
        self.b1 = b1 / a0
        self.b2 = b2 / a0
        self.a1 = a1 / a0
        self.a2 = a2 / a0
    }

    /// The shared part of every cookbook design: cos ω₀ and α for a corner or centre and a Q.
    private static func design(_ frequency: Double, _ q: Double) -> (cosine: Double, alpha: Double) {
        let turns = frequency / Signal.sampleRate
        return (ExactMath.cosine(turns: turns), ExactMath.sine(turns: turns) / (2 * q))
    }

    /// Passes what is below `cutoff` hertz; Q 0.707 is maximally flat.
    static func lowpass(cutoff: Double, q: Double = 0.707) -> Biquad {
        let (c, alpha) = design(cutoff, q)
        return Biquad(b0: (1 - c) / 2, b1: 1 - c, b2: (1 - c) / 2, a0: 1 + alpha, a1: -2 * c, a2: 1 - alpha)
    }

    /// Passes what is above `cutoff` hertz.
    static func highpass(cutoff: Double, q: Double = 0.707) -> Biquad {
        let (c, alpha) = design(cutoff, q)
        return Biquad(b0: (1 + c) / 2, b1: -(1 + c), b2: (1 + c) / 2, a0: 1 + alpha, a1: -2 * c, a2: 1 - alpha)
    }

    /// Passes a band around `center` hertz at unity gain; higher Q, narrower band.
    static func bandpass(center: Double, q: Double) -> Biquad {
        let (c, alpha) = design(center, q)
        return Biquad(b0: alpha, b1: 0, b2: -alpha, a0: 1 + alpha, a1: -2 * c, a2: 1 - alpha)
    }

    /// The filtered copy of `input`, starting from silence (direct form I).
    func process(_ input: [Double]) -> [Double] {
        var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0
        return input.map { x in
            let y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
            (x2, x1, y2, y1) = (x1, x, y1, y)
            return y
        }
    }
}
