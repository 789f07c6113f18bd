// The benchmark's statistics, against values computed by hand or taken from published t tables.
import XCTest
@testable import SFXBenchMethod

final class StatisticsTests: XCTestCase {
    func testTQuantilesMatchPublishedTables() {
        // Two-sided 95 % (p = 0.975) and 99 % (p = 0.995) critical values of Student's t.
        let table: [(p: Double, degrees: Int, t: Double)] = [
            (0.975, 1, 12.7062), (0.975, 2, 4.3027), (0.975, 3, 3.1824), (0.975, 5, 2.5706),
            (0.975, 10, 2.2281), (0.975, 18, 2.1009), (0.975, 30, 2.0423), (0.995, 5, 4.0321),
            (0.995, 20, 2.8453), (0.9, 7, 1.4149),
        ]
        for row in table {
            XCTAssertEqual(StudentT.quantile(row.p, degrees: row.degrees), row.t, accuracy: 1e-4, "t(\(row.p), \(row.degrees))")
            XCTAssertEqual(StudentT.quantile(1 - row.p, degrees: row.degrees), -row.t, accuracy: 1e-4)
        }
        // Many degrees of freedom: the normal's 1.95996.
        XCTAssertEqual(StudentT.quantile(0.975, degrees: 100_000), 1.95996, accuracy: 1e-4)
        XCTAssertEqual(StudentT.cdf(0, degrees: 4), 0.5, accuracy: 1e-12)
    }

    func testLeastSquaresSlopeAndItsInterval() throws {
        // x̄ = 2, ȳ = 3, Σ(x − x̄)² = 10, Σ(x − x̄)(y − ȳ) = 8: b = 0.8, a = 1.4; residuals
        // −0.4, 0.8, −1, 1.2, −0.6: SSE = 3.6, s² = 1.2, SE(b) = √0.12; t(0.975, 3) = 3.18245.
        let fit = try XCTUnwrap(LinearFit([(0, 1), (1, 3), (2, 2), (3, 5), (4, 4)]))
        XCTAssertEqual(fit.slope, 0.8, accuracy: 1e-12)
        XCTAssertEqual(fit.intercept, 1.4, accuracy: 1e-12)
        XCTAssertEqual(fit.degreesOfFreedom, 3)
        XCTAssertEqual(fit.slopeStandardError, 0.12.squareRoot(), accuracy: 1e-12)
        let half = 3.182446 * 0.12.squareRoot()
        let slope = fit.slopeInterval()
        XCTAssertEqual(slope.low, 0.8 - half, accuracy: 1e-5)
        XCTAssertEqual(slope.high, 0.8 + half, accuracy: 1e-5)
        // The fitted mean at x̄ has SE √(s²/n) = √0.24.
        let mean = fit.valueInterval(at: 2)
        XCTAssertEqual(mean.low, 3 - 3.182446 * 0.24.squareRoot(), accuracy: 1e-5)
        XCTAssertEqual(mean.high, 3 + 3.182446 * 0.24.squareRoot(), accuracy: 1e-5)
        // At x = 4: SE = √(1.2 · (1/5 + 4/10)) = √0.72.
        let far = fit.valueInterval(at: 4)
        XCTAssertEqual(far.high - far.low, 2 * 3.182446 * 0.72.squareRoot(), accuracy: 1e-5)
    }

    func testAFitNeedsThreePointsAtTwoDistinctX() {
        XCTAssertNil(LinearFit([(1, 1), (2, 2)]))
        XCTAssertNil(LinearFit([(5, 1), (5, 2), (5, 3)]))
        let exact = LinearFit([(1, 3), (2, 5), (3, 7), (4, 9)])
        XCTAssertEqual(exact?.slope ?? .nan, 2, accuracy: 1e-12)
        XCTAssertEqual(exact?.slopeStandardError ?? .nan, 0, accuracy: 1e-12)
    }

    func testNoisyWindowsGiveAnIntervalThatStraddlesZeroAndNoVerdict() throws {
        // A cost that does not grow with K, seen through windows whose noise is larger than any
        // growth: the two-point figure (K = 256 − K = 1) comes out negative and the fit's interval
        // straddles zero. "≤ ½ of another slope" is then within noise against a slope of the
        // same size, and met only against one whose interval lies well above twice its bound.
        let windows: [(x: Double, y: Double)] = [(1, 0.030), (1, 0.024), (256, 0.022), (256, 0.029), (4096, 0.027), (4096, 0.025)]
        let twoPoint = (0.022 - 0.030) / 255
        XCTAssertLessThan(twoPoint, 0)
        let fit = try XCTUnwrap(LinearFit(windows))
        let interval = fit.slopeInterval()
        XCTAssertTrue(interval.contains(0))
        XCTAssertNil(interval.divided(by: Interval(-1e-6, 20e-6)))
        XCTAssertEqual(Verdict.atMost(interval.divided(by: Interval(1e-6, 3e-6)), 0.5), .withinNoise)
        let bound = max(-interval.low, interval.high)
        XCTAssertEqual(Verdict.atMost(interval.divided(by: Interval(2.1 * bound, 4 * bound)), 0.5), .met)
    }

    func testMeanAndItsInterval() throws {
        // Mean 2.5, s = √(5/3), t(0.975, 3) = 3.182446, n = 4.
        let sample = try XCTUnwrap(SampleMean([1, 2, 3, 4]))
        XCTAssertEqual(sample.mean, 2.5, accuracy: 1e-12)
        XCTAssertEqual(sample.standardDeviation, (5.0 / 3).squareRoot(), accuracy: 1e-12)
        let interval = try XCTUnwrap(sample.interval())
        XCTAssertEqual(interval.high - 2.5, 3.182446 * (5.0 / 3).squareRoot() / 2, accuracy: 1e-5)
        XCTAssertNil(SampleMean([7])?.interval())
        XCTAssertNil(SampleMean([]))
    }

    func testIntervalArithmeticIsConservative() {
        XCTAssertEqual(Interval(1, 2).minus(Interval(0.5, 1)), Interval(0, 1.5))
        XCTAssertEqual(Interval(1, 2).divided(by: Interval(4, 8)), Interval(0.125, 0.5))
        XCTAssertEqual(Interval(-1, 2).divided(by: Interval(4, 8)), Interval(-0.25, 0.5))
        XCTAssertNil(Interval(1, 2).divided(by: Interval(0, 8)))
        XCTAssertNil(Interval(1, 2).divided(by: Interval(-3, -1)))
        XCTAssertEqual(Interval(1, 2).scaled(by: -2), Interval(-4, -2))
    }

    func testVerdicts() {
        XCTAssertEqual(Verdict.atMost(Interval(0.1, 0.4), 0.5), .met)
        XCTAssertEqual(Verdict.atMost(Interval(0.6, 0.9), 0.5), .notMet)
        XCTAssertEqual(Verdict.atMost(Interval(0.4, 0.6), 0.5), .withinNoise)
        XCTAssertEqual(Verdict.atMost(nil, 0.5), .withinNoise)
        XCTAssertEqual(Verdict.holds(false), .notMet)
    }

    func testSpreadAcrossRuns() throws {
        let odd = try XCTUnwrap(Spread([3, 1, 2]))
        XCTAssertEqual([odd.median, odd.min, odd.max], [2, 1, 3])
        XCTAssertEqual(Spread([4, 1, 3, 2])?.median, 2.5)
        XCTAssertEqual(Spread([5, .nan, 1])?.runs, 2)
        XCTAssertNil(Spread([.nan]))
    }
}
