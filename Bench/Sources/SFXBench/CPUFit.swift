import Foundation
import SFXBenchMethod

/// One client's CPU cost as cost = a + b·K, fitted by least squares over every window (each
/// window one point), with the one-voice (idle) cost from its K = 1 windows.
///
/// Intervals: a single figure's is 95 % (t with the fit's n − 2, or the windows' n − 1, degrees
/// of freedom). A figure combined from two (a ratio of slopes, a difference from the floor's
/// cost) takes each part's interval at 97.5 % and propagates them conservatively (each end of
/// the result from the least favourable ends of the parts), so that it covers the combined
/// figure with probability at least 95 % (Bonferroni).
struct CPUFit: Codable {
    static let level = 0.95
    static let combinedLevel = 0.975

    var client: String
    /// Period/buffer as the card saw them.
    var setting: String
    var voiceCounts: [Int]
    var windows: Int
    var fit: LinearFit
    /// Fractions of a core per extra voice, and its 95 % interval.
    var slope: Double
    var slopeInterval: Interval
    var combinedSlopeInterval: Interval?
    /// The K = 1 windows' mean (fraction of a core) and its 95 % interval.
    var idle: SampleMean?
    var idleInterval: Interval?
    /// Mean and standard deviation of the windows at each K, for the table.
    var byVoices: [VoiceCount]

    struct VoiceCount: Codable {
        var voices: Int
        var windows: Int
        var mean: Double
        var standardDeviation: Double
    }

    init?(client: String, rows: [CPURow]) {
        let mine = rows.filter { $0.client == client }
        guard let fit = LinearFit(mine.map { (Double($0.voices), $0.coreShare) }) else { return nil }
        self.client = client
        setting = mine.first?.setting?.text ?? "?"
        voiceCounts = Array(Set(mine.map(\.voices))).sorted()
        windows = mine.count
        self.fit = fit
        slope = fit.slope
        slopeInterval = fit.slopeInterval(level: Self.level)
        combinedSlopeInterval = fit.slopeInterval(level: Self.combinedLevel)
        idle = SampleMean(mine.filter { $0.voices == 1 }.map(\.coreShare))
        idleInterval = idle?.interval(level: Self.level)
        byVoices = voiceCounts.compactMap { k in
            SampleMean(mine.filter { $0.voices == k }.map(\.coreShare)).map {
                VoiceCount(voices: k, windows: $0.count, mean: $0.mean, standardDeviation: $0.standardDeviation)
            }
        }
    }

    func value(at voices: Int) -> Double { fit.value(at: Double(voices)) }

    func combinedValueInterval(at voices: Int) -> Interval? { fit.valueInterval(at: Double(voices), level: Self.combinedLevel) }

    // MARK: Text

    /// "15.7 [9.8, 21.6]" µs/s; flagged when the figure is negative or its interval reaches 0.
    static func microseconds(_ value: Double, _ interval: Interval) -> String {
        "\(format(value * 1e6, digits: 2)) [\(format(interval.low * 1e6, digits: 2)), \(format(interval.high * 1e6, digits: 2))]\(flag(value, interval))"
    }

    /// "2.337 [1.514, 3.159] %" of a core (`unit` after the figures, before any flag).
    static func percent(_ value: Double, _ interval: Interval?, unit: String = "") -> String {
        guard let interval else { return "\(format(value * 100, digits: 3))\(unit) (one window: no interval)" }
        return "\(format(value * 100, digits: 3)) [\(format(interval.low * 100, digits: 3)), \(format(interval.high * 100, digits: 3))]\(unit)\(flag(value, interval))"
    }

    /// A cost that is negative, or whose interval reaches zero, is noise, not a cost: say so.
    static func flag(_ value: Double, _ interval: Interval) -> String {
        if value < 0 { return " ⚠ negative: noise, not a cost" }
        if interval.low <= 0 { return " ⚠ interval reaches 0: not resolved from noise" }
        return ""
    }

    /// A ratio of two slopes with its interval, or why it has none: a ratio whose denominator
    /// may be 0 or negative is not printed as a number.
    static func ratioText(_ numerator: Double, _ denominator: Double, _ ratio: Interval?, denominatorName: String) -> String {
        guard let ratio, denominator > 0 else { return "unbounded ⚠ (\(denominatorName) interval reaches 0: no ratio)" }
        let negative = ratio.low < 0 ? " ⚠ reaches below 0: the numerator is not resolved from noise" : ""
        return "\(format(numerator / denominator, digits: 2))× [\(format(ratio.low, digits: 2)), \(format(ratio.high, digits: 2))]\(negative)"
    }
}
