import Glibc

/// Head-related impulse responses on a regular direction grid at one sample rate, each trimmed
/// to `irLength` taps after its onset, with the onset delays kept apart (in frames, fractional).
/// Immutable once made; the real-time thread reads it (`filter(toward:left:right:)`).
///
/// ```swift
/// let table = HRTFTable(name: "kemar", sampleRate: 48_000, irLength: 128, azimuthStep: 5,
///                       elevations: -40...90, elevationStep: 10) { direction, left, right in
///     …   // write the two ears' taps from their onset on, return the onsets in frames
/// }
/// let (leftDelay, rightDelay) = table.filter(toward: [1, 0, 0], left: l, right: r)   // to the right
/// ```
///
/// ## Coordinates
/// Directions are unit vectors in HEAD coordinates: x to the right, y up, z forward. The grid's
/// azimuth θ (degrees) turns clockwise seen from above, from straight ahead (0°) to the right
/// (90°), behind (180°) and the left (270°); elevation φ (degrees) is up from the horizontal
/// plane. Direction of (θ, φ) = (sin θ · cos φ, sin φ, cos θ · cos φ). (SOFA files use x
/// forward, y left, z up: the loader converts, in one place: `SOFAFile`.)
///
/// ## The grid
/// Azimuths 0, s, 2s, … below 360° (s = `azimuthStep`, rounded so that it divides 360°);
/// elevations from `elevations.lowerBound` to `elevations.upperBound` in steps of about
/// `elevationStep` (rounded so that both ends are rows). A direction above or below the grid's
/// elevations takes the nearest row's filters.
///
/// ## Interpolation law
/// `filter(toward:)` finds the grid cell around the direction and mixes its four corners
/// bilinearly in (azimuth, elevation): weights (1−a)(1−e), a(1−e), (1−a)e, a·e with a and e the
/// fractional positions in the cell. The taps and the delays are mixed separately, with the same
/// weights: the taps are aligned at their onsets, so mixing them does not comb-filter, and the
/// delays glide smoothly from one measurement to the next.
///
/// ## Delays
/// Each measured delay is the onset the measurement function returns (for SOFA files: Data.Delay
/// plus the first tap at or above a tenth of the ear's peak, less a pre-roll of
/// `onsetPreroll` taps). The earliest delay over the whole table (`removedDelay`) is then taken
/// off every delay: that is the travel time from the loudspeaker, the same for both ears; the
/// interaural time differences are kept. Delays are therefore 0 ≤ delay < `maximumDelay`.
public final class HRTFTable: @unchecked Sendable {
    /// What the table was made from (a file name), for messages.
    public let name: String
    /// Frames per second of the taps and the delays.
    public let sampleRate: Int
    /// Taps per ear (for SOFA files, `SOFAFile.irLength(sampleRate:)`: 48 at 48 kHz by default).
    public let irLength: Int
    /// Frames: one more than the largest onset delay in the table, rounded up; every delay
    /// `filter(toward:)` returns is below it.
    public let maximumDelay: Int
    /// Frames taken off every measured delay (the earliest onset of the table).
    public let removedDelay: Float
    /// Degrees between two azimuths of the grid (divides 360).
    public let azimuthStep: Float
    /// Degrees between two elevations of the grid (0 when it has one row).
    public let elevationStep: Float
    /// Degrees: the lowest and highest rows of the grid.
    public let elevations: ClosedRange<Float>
    /// Columns (azimuths) and rows (elevations) of the grid.
    public let azimuthCount: Int
    public let elevationCount: Int
    /// Taps the loaders keep before the onset they find: a trimmed response starts that much
    /// before the threshold crossing, so the rise of the first wavefront is kept.
    public static let onsetPreroll = 3

    /// [row][column][ear][irLength]: left ear first.
    private let taps: UnsafeMutablePointer<Float>
    /// [row][column][ear].
    private let delays: UnsafeMutablePointer<Float>

    /// Builds the grid from a measurement function the loader supplies (the loader samples
    /// libmysofa's interpolated filter at each grid direction). `measure` is called once per grid
    /// point with the point's unit direction (head coordinates) and two buffers of `irLength`
    /// floats (zeroed) to fill with the left and right ear's taps from their onsets on; it returns
    /// the onsets in frames (fractional allowed, negative taken as 0). Taps that are not normal
    /// floats (subnormal, infinite, NaN) are stored as 0. `irLength` ≥ 1,
    /// `azimuthStep` in 0.5…360 degrees, `elevations` within −90…90, `elevationStep` > 0.
    public init(name: String, sampleRate: Int, irLength: Int, azimuthStep: Float, elevations: ClosedRange<Float>, elevationStep: Float,
                measure: (_ direction: SIMD3<Float>, _ left: UnsafeMutableBufferPointer<Float>, _ right: UnsafeMutableBufferPointer<Float>) -> (leftDelay: Float, rightDelay: Float)) {
        precondition(irLength >= 1, "HRTFTable: irLength must be at least 1")
        self.name = name
        self.sampleRate = sampleRate
        self.irLength = irLength
        let columns = max(1, Int((360 / min(360, max(0.5, azimuthStep))).rounded()))
        azimuthCount = columns
        self.azimuthStep = 360 / Float(columns)
        let low = max(-90, min(90, elevations.lowerBound)), high = max(low, min(90, elevations.upperBound))
        self.elevations = low...high
        let rows = high > low ? max(1, Int(((high - low) / max(0.1, elevationStep)).rounded())) + 1 : 1
        elevationCount = rows
        self.elevationStep = rows > 1 ? (high - low) / Float(rows - 1) : 0

        let points = rows * columns
        taps = .allocate(capacity: points * 2 * irLength)
        taps.initialize(repeating: 0, count: points * 2 * irLength)
        delays = .allocate(capacity: points * 2)
        delays.initialize(repeating: 0, count: points * 2)
        var earliest = Float.infinity, latest: Float = 0
        for row in 0..<rows {
            let elevation = (low + Float(row) * self.elevationStep) * .pi / 180
            for column in 0..<columns {
                let azimuth = Float(column) * self.azimuthStep * .pi / 180
                let direction = SIMD3<Float>(sin(azimuth) * cos(elevation), sin(elevation), cos(azimuth) * cos(elevation))
                let point = row * columns + column
                let left = UnsafeMutableBufferPointer(start: taps + point * 2 * irLength, count: irLength)
                let right = UnsafeMutableBufferPointer(start: taps + (point * 2 + 1) * irLength, count: irLength)
                var (leftDelay, rightDelay) = measure(direction, left, right)
                // Subnormal taps would make every sample they touch slow on the real-time thread.
                for k in 0..<irLength {
                    if !left[k].isNormal { left[k] = 0 }
                    if !right[k].isNormal { right[k] = 0 }
                }
                leftDelay = leftDelay.isFinite ? max(0, leftDelay) : 0
                rightDelay = rightDelay.isFinite ? max(0, rightDelay) : 0
                delays[point * 2] = leftDelay
                delays[point * 2 + 1] = rightDelay
                earliest = min(earliest, leftDelay, rightDelay)
                latest = max(latest, leftDelay, rightDelay)
            }
        }
        for i in 0..<points * 2 { delays[i] -= earliest }
        removedDelay = earliest
        maximumDelay = Int((latest - earliest).rounded(.up)) + 1
    }

    deinit {
        taps.deallocate()
        delays.deallocate()
    }

    /// The filter for a direction, interpolated between the grid's neighbours (IRs and delays
    /// separately, bilinearly: see the type's law). `direction` is a vector in HEAD coordinates: x
    /// to the right, y up, z forward (any length; zero is straight ahead). Writes `irLength` taps
    /// to each of `left` and `right` and returns each ear's delay in frames, in
    /// 0 ..< `maximumDelay`. No allocation, no locks: the real-time thread calls it.
    public func filter(toward direction: SIMD3<Float>, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) -> (leftDelay: Float, rightDelay: Float) {
        let (azimuth, elevation) = Self.angles(of: direction)
        // Column position, wrapping round the circle.
        let columnPosition = azimuth / azimuthStep
        var column0 = Int(columnPosition.rounded(.down))
        let a = columnPosition - Float(column0)
        column0 = ((column0 % azimuthCount) + azimuthCount) % azimuthCount
        let column1 = (column0 + 1) % azimuthCount
        // Row position, clamped to the grid's rows.
        var row0 = 0, e: Float = 0
        if elevationCount > 1 {
            let rowPosition = max(0, min(Float(elevationCount - 1), (elevation - elevations.lowerBound) / elevationStep))
            row0 = min(elevationCount - 2, Int(rowPosition.rounded(.down)))
            e = rowPosition - Float(row0)
        }
        let row1 = min(elevationCount - 1, row0 + 1)
        let corners = (row0 * azimuthCount + column0, row0 * azimuthCount + column1, row1 * azimuthCount + column0, row1 * azimuthCount + column1)
        let weights = ((1 - a) * (1 - e), a * (1 - e), (1 - a) * e, a * e)
        for ear in 0..<2 {
            let out = ear == 0 ? left : right
            let p0 = taps + (corners.0 * 2 + ear) * irLength, p1 = taps + (corners.1 * 2 + ear) * irLength
            let p2 = taps + (corners.2 * 2 + ear) * irLength, p3 = taps + (corners.3 * 2 + ear) * irLength
            for k in 0..<irLength {
                out[k] = weights.0 * p0[k] + weights.1 * p1[k] + weights.2 * p2[k] + weights.3 * p3[k]
            }
        }
        func delay(_ ear: Int) -> Float {
            let d = weights.0 * delays[corners.0 * 2 + ear] + weights.1 * delays[corners.1 * 2 + ear]
                + weights.2 * delays[corners.2 * 2 + ear] + weights.3 * delays[corners.3 * 2 + ear]
            return max(0, min(Float(maximumDelay - 1), d))
        }
        return (delay(0), delay(1))
    }

    /// Azimuth in 0 ..< 360 (clockwise from ahead toward the right) and elevation in −90…90, in
    /// degrees, of a head-coordinate vector (x right, y up, z forward); zero is straight ahead.
    public static func angles(of direction: SIMD3<Float>) -> (azimuth: Float, elevation: Float) {
        let horizontal = (direction.x * direction.x + direction.z * direction.z).squareRoot()
        if horizontal == 0 && direction.y == 0 { return (0, 0) }
        var azimuth = atan2(direction.x, direction.z) * 180 / .pi
        if azimuth < 0 { azimuth += 360 }
        if azimuth >= 360 { azimuth = 0 }
        return (horizontal == 0 ? 0 : azimuth, atan2(direction.y, horizontal) * 180 / .pi)
    }

    /// Trims a measured response to the taps after its onset, for loaders: the onset is the first
    /// tap whose magnitude reaches `threshold` × the response's peak, less `onsetPreroll` taps
    /// (not before tap 0). Copies `into.count` taps from there (zeros past the end) and returns
    /// the onset (taps) and the fraction of the response's energy (Σ h²) the copy keeps (1 for a
    /// silent response).
    public static func trimAtOnset(_ response: UnsafeBufferPointer<Float>, into: UnsafeMutableBufferPointer<Float>,
                                   threshold: Float = 0.1) -> (onset: Int, energyKept: Double) {
        var peak: Float = 0, total = 0.0
        for x in response {
            peak = max(peak, abs(x))
            total += Double(x) * Double(x)
        }
        var first = 0
        if peak > 0 {
            while first < response.count && abs(response[first]) < threshold * peak { first += 1 }
        }
        let onset = max(0, first - onsetPreroll)
        var kept = 0.0
        for k in 0..<into.count {
            let x: Float = onset + k < response.count ? response[onset + k] : 0
            into[k] = x
            kept += Double(x) * Double(x)
        }
        return (onset, total > 0 ? kept / total : 1)
    }
}
