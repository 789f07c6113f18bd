/// The least-squares line y = a + b·x through points, with the standard errors that give its
/// confidence intervals:
///
///     b = Σ(x − x̄)(y − ȳ) / Σ(x − x̄)²,  a = ȳ − b·x̄
///     s² = SSE / (n − 2),                SSE = Σ(y − a − b·x)²
///     SE(b) = √(s² / Σ(x − x̄)²)
///     SE(a + b·x₀) = √(s² · (1/n + (x₀ − x̄)² / Σ(x − x̄)²))
///
/// and an interval of level L is the estimate ± t((1 + L)/2, n − 2) · SE. Every window is its own
/// point, so the window-to-window noise is in s² rather than averaged away before the fit.
public struct LinearFit: Codable, Equatable, Sendable {
    public var intercept: Double
    public var slope: Double
    public var slopeStandardError: Double
    /// Points fitted, and n − 2 degrees of freedom.
    public var count: Int
    public var residualVariance: Double
    public var meanX: Double
    public var sumOfSquaresX: Double

    /// The fit, or nil with fewer than three points or fewer than two distinct x.
    public init?(_ points: [(x: Double, y: Double)]) {
        let n = Double(points.count)
        guard points.count >= 3 else { return nil }
        let meanX = points.map(\.x).reduce(0, +) / n
        let meanY = points.map(\.y).reduce(0, +) / n
        let sxx = points.map { ($0.x - meanX) * ($0.x - meanX) }.reduce(0, +)
        guard sxx > 0 else { return nil }
        let sxy = points.map { ($0.x - meanX) * ($0.y - meanY) }.reduce(0, +)
        let slope = sxy / sxx, intercept = meanY - slope * meanX
        self.slope = slope
        self.intercept = intercept
        let sse = points.map { let r = $0.y - intercept - slope * $0.x; return r * r }.reduce(0, +)
        residualVariance = sse / (n - 2)
        slopeStandardError = (residualVariance / sxx).squareRoot()
        count = points.count
        self.meanX = meanX
        sumOfSquaresX = sxx
    }

    public var degreesOfFreedom: Int { count - 2 }

    /// The slope's two-sided interval at `level` (0.95: 95 %).
    public func slopeInterval(level: Double = 0.95) -> Interval {
        let half = StudentT.quantile((1 + level) / 2, degrees: degreesOfFreedom) * slopeStandardError
        return Interval(slope - half, slope + half)
    }

    /// The fitted mean at x, a + b·x.
    public func value(at x: Double) -> Double { intercept + slope * x }

    /// The interval of the fitted mean at x (not of a single new window).
    public func valueInterval(at x: Double, level: Double = 0.95) -> Interval {
        let se = (residualVariance * (1 / Double(count) + (x - meanX) * (x - meanX) / sumOfSquaresX)).squareRoot()
        let half = StudentT.quantile((1 + level) / 2, degrees: degreesOfFreedom) * se
        return Interval(value(at: x) - half, value(at: x) + half)
    }
}

/// The mean of repeated windows and its t interval: mean ± t((1 + L)/2, n − 1) · s/√n.
public struct SampleMean: Codable, Equatable, Sendable {
    public var mean: Double
    public var standardDeviation: Double
    public var count: Int

    /// Nil with no values; with one value the interval is unbounded (nil).
    public init?(_ values: [Double]) {
        guard !values.isEmpty else { return nil }
        count = values.count
        let mean = values.reduce(0, +) / Double(count)
        self.mean = mean
        standardDeviation = count < 2 ? .nan
            : (values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(count - 1)).squareRoot()
    }

    public func interval(level: Double = 0.95) -> Interval? {
        guard count >= 2 else { return nil }
        let half = StudentT.quantile((1 + level) / 2, degrees: count - 1) * standardDeviation / Double(count).squareRoot()
        return Interval(mean - half, mean + half)
    }
}
