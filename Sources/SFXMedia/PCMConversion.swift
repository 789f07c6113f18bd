import CSoxr
import SFXCore

/// Where a channel of a multichannel sound belongs, as libsndfile's channel maps name it
/// (the raw values are libsndfile's `SF_CHANNEL_MAP_*` numbers).
public enum ChannelPosition: Int, Sendable, Codable, CaseIterable {
    case invalid = 0, mono, left, right, center
    case frontLeft, frontRight, frontCenter, rearCenter, rearLeft, rearRight, lfe
    case frontLeftOfCenter, frontRightOfCenter, sideLeft, sideRight
    case topCenter, topFrontLeft, topFrontRight, topFrontCenter, topRearLeft, topRearRight, topRearCenter
    case ambisonicW, ambisonicX, ambisonicY, ambisonicZ

    /// The order WAV and FLAC give six unlabelled channels: 5.1 as FL FR FC LFE BL BR.
    public static let fivePointOne: [ChannelPosition] = [.frontLeft, .frontRight, .frontCenter, .lfe, .rearLeft, .rearRight]

    /// This channel's share of the left and right outputs of a stereo downmix (ITU-R BS.775 style:
    /// centre and surround channels at -3 dB, LFE dropped), or nil when it has no defined place.
    var stereoWeights: (left: Float, right: Float)? {
        let half: Float = 0.707_106_77
        switch self {
        case .invalid: return nil
        case .left, .frontLeft, .frontLeftOfCenter: return (1, 0)
        case .right, .frontRight, .frontRightOfCenter: return (0, 1)
        case .mono, .center, .frontCenter: return (half, half)
        case .rearLeft, .sideLeft, .topFrontLeft, .topRearLeft: return (half, 0)
        case .rearRight, .sideRight, .topFrontRight, .topRearRight: return (0, half)
        case .rearCenter, .topCenter, .topFrontCenter, .topRearCenter: return (0.5, 0.5)
        case .ambisonicW: return (1, 1)
        case .lfe, .ambisonicX, .ambisonicY, .ambisonicZ: return (0, 0)
        }
    }
}

/// The matrix that turns any number of source channels into the cue's mono or stereo.
///
/// - One source channel: copied to every output (mono to stereo duplicates).
/// - Known positions (from the file's channel map, or 5.1 assumed for six unlabelled channels,
///   or left/right for two): each channel adds its `stereoWeights` to left and right; a row
///   whose weights sum above 1 is scaled down to sum to 1, so a full-scale downmix never clips.
///   Mono output is the average of that stereo pair, so stereo to mono averages.
/// - Anything else (3, 4, 5, 7 or more unlabelled channels, or a map with unknown or silent
///   positions): every output is the equal-weight average of all channels.
struct ChannelMatrix: Equatable {
    /// `rows[output][input]` coefficients.
    let rows: [[Float]]

    init(sourceChannels: Int, map: [ChannelPosition]?, targetChannels: Int) {
        if sourceChannels == 1 {
            rows = Array(repeating: [1], count: targetChannels)
            return
        }
        let positions = map.flatMap { $0.count == sourceChannels ? $0 : nil } ?? ChannelMatrix.assumedLayout(sourceChannels)
        let weights = positions?.compactMap(\.stereoWeights) ?? []
        guard weights.count == sourceChannels,
              let left = ChannelMatrix.normalized(weights.map(\.left)),
              let right = ChannelMatrix.normalized(weights.map(\.right)) else {
            rows = Array(repeating: [Float](repeating: 1 / Float(sourceChannels), count: sourceChannels), count: targetChannels)
            return
        }
        rows = targetChannels == 2 ? [left, right] : [zip(left, right).map { ($0 + $1) / 2 }]
    }

    /// `row` scaled to sum to 1 if it sums above 1; nil if it is silent.
    private static func normalized(_ row: [Float]) -> [Float]? {
        let sum = row.reduce(0, +)
        guard sum > 0 else { return nil }
        return sum > 1 ? row.map { $0 / sum } : row
    }

    private static func assumedLayout(_ channels: Int) -> [ChannelPosition]? {
        switch channels {
        case 2: return [.left, .right]
        case 6: return ChannelPosition.fivePointOne
        default: return nil
        }
    }

    /// True when the matrix passes every channel through unchanged.
    private var isIdentity: Bool {
        rows.count == rows[0].count && rows.indices.allSatisfy { o in rows[o].indices.allSatisfy { rows[o][$0] == (o == $0 ? 1 : 0) } }
    }

    /// `frames` interleaved frames of `rows[0].count` channels, remixed.
    func apply(_ input: UnsafeBufferPointer<Float>, frames: Int) -> [Float] {
        let inChannels = rows[0].count
        if isIdentity { return Array(input.prefix(frames * inChannels)) }
        var output = [Float](repeating: 0, count: frames * rows.count)
        for frame in 0..<frames {
            for (o, row) in rows.enumerated() {
                output[frame * rows.count + o] = (0..<inChannels).reduce(0) { $0 + row[$1] * input[frame * inChannels + $1] }
            }
        }
        return output
    }
}

/// Sample-rate conversion with libsoxr at very high quality (SOXR_VHQ), done once at load time.
enum Resampler {
    /// The number of frames an ideal converter makes from `frames` input frames: round(n · out / in).
    static func idealLength(frames: Int, from inputRate: Int, to outputRate: Int) -> Int {
        Int((Double(frames) * Double(outputRate) / Double(inputRate)).rounded())
    }

    /// Resamples interleaved `samples` of `channels` channels. The stream is flushed (input set
    /// to NULL) so the filter's tail comes out, and the result is cut to exactly the ideal length.
    static func resample(_ samples: [Float], channels: Int, from inputRate: Int, to outputRate: Int) throws -> [Float] {
        guard inputRate != outputRate else { return samples }
        let inputFrames = samples.count / channels
        let ideal = idealLength(frames: inputFrames, from: inputRate, to: outputRate)
        var ioSpec = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
        var quality = soxr_quality_spec(UInt(SOXR_VHQ), 0)
        var createError: soxr_error_t?
        guard let soxr = soxr_create(Double(inputRate), Double(outputRate), UInt32(channels), &createError, &ioSpec, &quality, nil) else {
            throw MediaError(.failed(detail: "libsoxr: \(createError.map { String(cString: $0) } ?? "cannot create a resampler")"), subject: "resampler")
        }
        defer { soxr_delete(soxr) }
        // Room for the ideal length plus the few frames soxr may add when rounding its tail.
        let capacity = ideal + 64
        var output = [Float](repeating: 0, count: capacity * channels)
        var consumed = 0
        var produced = 0
        try samples.withUnsafeBufferPointer { input in
            try output.withUnsafeMutableBufferPointer { out in
                while produced < capacity {
                    let remaining = inputFrames - consumed
                    // A NULL input tells soxr the stream has ended, so it flushes its filter.
                    let inPointer = remaining > 0 ? UnsafeRawPointer(input.baseAddress! + consumed * channels) : nil
                    var used = 0
                    var made = 0
                    if let error = soxr_process(soxr, inPointer, remaining, &used,
                                                UnsafeMutableRawPointer(out.baseAddress! + produced * channels),
                                                capacity - produced, &made) {
                        throw MediaError(.failed(detail: "libsoxr: \(String(cString: error))"), subject: "resampler")
                    }
                    consumed += used
                    produced += made
                    if remaining == 0 && made == 0 { break }
                }
            }
        }
        // soxr delivers round(n · out / in) frames give or take one; the cue is exactly the ideal
        // length (a missing last frame stays zero, as the array was zero-filled).
        return Array(output.prefix(ideal * channels))
    }
}
