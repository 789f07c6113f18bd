/// Sine, exponential and pitch functions written with nothing but IEEE-754 addition,
/// multiplication and division, so that every machine computes the same bits.
///
/// The platform's `sin` and `exp` may differ in the last place between C libraries; since the
/// bundled sounds are committed byte for byte and checked by regenerating them, synthesis uses
/// these instead. They are accurate to about 1e-12, far below the 16-bit output's resolution.
enum ExactMath {
    static let ln2 = 0.693_147_180_559_945_3
    static let ln10 = 2.302_585_092_994_046
    static let twoPi = 6.283_185_307_179_586

    /// sin(2π · `turns`): the sine of an angle given in whole turns (1 turn = 360°).
    static func sine(turns: Double) -> Double {
        var r = turns - turns.rounded(.down)   // [0, 1)
        if r >= 0.5 { r -= 1 }                   // [-0.5, 0.5)
        if r > 0.25 { r = 0.5 - r } else if r < -0.25 { r = -0.5 - r }   // [-0.25, 0.25]: sin is symmetric about ±¼ turn
        let x = r * twoPi
        let x2 = x * x
        // Taylor series to x^17, evaluated from the highest term down.
        var sum = 0.0
        for k in stride(from: 8, through: 1, by: -1) {
            sum = 1 - x2 / Double((2 * k) * (2 * k + 1)) * sum
        }
        return x * sum
    }

    /// cos(2π · `turns`).
    static func cosine(turns: Double) -> Double { sine(turns: turns + 0.25) }

    /// e^x.
    static func exp(_ x: Double) -> Double {
        if x < -700 { return 0 }
        let n = (x / ln2).rounded()
        let r = x - n * ln2                      // |r| ≤ ½ ln 2
        var sum = 1.0
        var term = 1.0
        for k in 1...16 {
            term *= r / Double(k)
            sum += term
        }
        return Double(sign: .plus, exponent: Int(n), significand: sum)
    }

    /// The linear gain of a level in decibels: 0 dB → 1, −6.02 dB → ½.
    static func gain(dB: Double) -> Double { exp(dB * ln10 / 20) }

    /// The frequency in hertz of a MIDI note number (69 = A4 = 440 Hz; fractions are cents/100).
    static func hertz(note: Double) -> Double { 440 * exp((note - 69) / 12 * ln2) }
}
