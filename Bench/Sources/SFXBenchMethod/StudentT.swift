import Foundation

/// Student's t distribution: the quantiles that turn a standard error into a confidence interval.
///
/// The distribution function is F(t) = 1 − ½·I(ν/(ν+t²); ν/2, ½) for t ≥ 0, with I the regularized
/// incomplete beta function (its continued fraction, evaluated by the modified Lentz method); a
/// quantile is found by bisection on F, which is monotone, to 1e-10.
public enum StudentT {
    /// The p-quantile of t with `degrees` degrees of freedom (p in (0, 1), degrees ≥ 1):
    /// `quantile(0.975, 10)` is 2.228, the half-width factor of a two-sided 95 % interval.
    public static func quantile(_ p: Double, degrees: Int) -> Double {
        precondition(p > 0 && p < 1 && degrees >= 1, "a t quantile needs 0 < p < 1 and at least 1 degree of freedom")
        if p < 0.5 { return -quantile(1 - p, degrees: degrees) }
        var low = 0.0, high = 1.0
        while cdf(high, degrees: degrees) < p { high *= 2 }
        for _ in 0..<200 where high - low > 1e-10 {
            let middle = (low + high) / 2
            if cdf(middle, degrees: degrees) < p { low = middle } else { high = middle }
        }
        return (low + high) / 2
    }

    /// P(T ≤ t) for `degrees` degrees of freedom.
    public static func cdf(_ t: Double, degrees: Int) -> Double {
        let nu = Double(degrees)
        let tail = 0.5 * incompleteBeta(nu / (nu + t * t), a: nu / 2, b: 0.5)
        return t >= 0 ? 1 - tail : tail
    }

    /// The regularized incomplete beta function I(x; a, b).
    static func incompleteBeta(_ x: Double, a: Double, b: Double) -> Double {
        if x <= 0 { return 0 }
        if x >= 1 { return 1 }
        let logBeta: Double = lgamma(a) + lgamma(b) - lgamma(a + b)
        let logPowers: Double = a * log(x) + b * log(1 - x)
        let logFront = logPowers - logBeta
        // The continued fraction converges fast for x < (a + 1)/(a + b + 2); use symmetry otherwise.
        if x < (a + 1) / (a + b + 2) { return exp(logFront) * continuedFraction(x, a: a, b: b) / a }
        return 1 - exp(logFront) * continuedFraction(1 - x, a: b, b: a) / b
    }

    private static func continuedFraction(_ x: Double, a: Double, b: Double) -> Double {
        let tiny = 1e-300
        var c = 1.0, d = 1 - (a + b) * x / (a + 1)
        if abs(d) < tiny { d = tiny }
        d = 1 / d
        var result = d
        for m in 1...300 {
            let m = Double(m)
            let even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
            d = 1 + even * d; if abs(d) < tiny { d = tiny }
            c = 1 + even / c; if abs(c) < tiny { c = tiny }
            d = 1 / d
            result *= d * c
            let odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
            d = 1 + odd * d; if abs(d) < tiny { d = tiny }
            c = 1 + odd / c; if abs(c) < tiny { c = tiny }
            d = 1 / d
            let step = d * c
            result *= step
            if abs(step - 1) < 1e-15 { break }
        }
        return result
    }
}
