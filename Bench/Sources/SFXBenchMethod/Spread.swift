/// One figure across repeated runs of the whole benchmark: its median and its spread.
public struct Spread: Codable, Equatable, Sendable {
    public var median: Double
    public var min: Double
    public var max: Double
    /// Runs in which the figure exists (a figure can be missing from a run, e.g. no stable setting).
    public var runs: Int

    /// Nil when no run has the figure; NaN values (figures a run could not compute) are left out.
    public init?(_ values: [Double]) {
        let sorted = values.filter { !$0.isNaN }.sorted()
        guard !sorted.isEmpty else { return nil }
        let middle = sorted.count / 2
        median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        min = sorted.first!
        max = sorted.last!
        runs = sorted.count
    }
}
