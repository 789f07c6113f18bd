/// A closed interval of a figure's plausible values, usually a confidence interval.
public struct Interval: Codable, Equatable, Sendable {
    public var low: Double
    public var high: Double

    public init(_ low: Double, _ high: Double) {
        precondition(!(low > high), "an interval's low end \(low) is above its high end \(high)")
        self.low = low
        self.high = high
    }

    public func contains(_ value: Double) -> Bool { low <= value && value <= high }

    /// Every value of `self` minus every value of `other`: [low − other.high, high − other.low].
    /// Propagated conservatively: if each interval covers its figure with probability 1 − α,
    /// this covers the difference with probability at least 1 − 2α (Bonferroni).
    public func minus(_ other: Interval) -> Interval { Interval(low - other.high, high - other.low) }

    /// Every quotient of a value of `self` by a value of `other`, conservatively as `minus`;
    /// nil (unbounded) when `other` is not entirely above zero: a denominator that may be 0 or
    /// negative gives no ratio worth printing.
    public func divided(by other: Interval) -> Interval? {
        guard other.low > 0 else { return nil }
        let corners = [low / other.low, low / other.high, high / other.low, high / other.high]
        return Interval(corners.min()!, corners.max()!)
    }

    public func scaled(by factor: Double) -> Interval {
        factor >= 0 ? Interval(low * factor, high * factor) : Interval(high * factor, low * factor)
    }
}

/// What an interval says about a goal of the form "figure ≤ limit".
public enum Verdict: String, Codable, Sendable {
    /// The whole interval satisfies the goal.
    case met
    /// The whole interval violates it.
    case notMet = "not met"
    /// The interval straddles the limit: the measurement cannot tell.
    case withinNoise = "within noise"
    /// The figure is missing, or this run judges nothing (a smoke test).
    case notJudged = "not judged"

    /// "figure ≤ limit" read against the figure's interval (nil: unbounded, within noise).
    public static func atMost(_ interval: Interval?, _ limit: Double) -> Verdict {
        guard let interval else { return .withinNoise }
        if interval.high <= limit { return .met }
        if interval.low > limit { return .notMet }
        return .withinNoise
    }

    /// A goal judged on a single figure without an interval (a count, a percentile).
    public static func holds(_ condition: Bool) -> Verdict { condition ? .met : .notMet }
}
