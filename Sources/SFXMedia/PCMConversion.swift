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
        if isIdentity { return Array(input.prefix(frames * rows[0].count)) }
        var output = [Float](repeating: 0, count: frames * rows.count)
        output.withUnsafeMutableBufferPointer { apply(input.baseAddress!, frames: frames, into: $0.baseAddress!) }
        return output
    }

    /// `frames` interleaved frames of `rows[0].count` channels from `input`, remixed into
    /// `output` (room for `frames × rows.count` samples). Allocates nothing.
    func apply(_ input: UnsafePointer<Float>, frames: Int, into output: UnsafeMutablePointer<Float>) {
        let inChannels = rows[0].count
        let outChannels = rows.count
        for o in 0..<outChannels {
            rows[o].withUnsafeBufferPointer { row in
                for frame in 0..<frames {
                    let source = input + frame * inChannels
                    var sum: Float = 0
                    for i in 0..<inChannels { sum += row[i] * source[i] }
                    output[frame * outChannels + o] = sum
                }
            }
        }
    }
}

/// Sample-rate conversion with libsoxr at very high quality (SOXR_VHQ), done once at load time.
enum Resampler {
    /// The number of frames an ideal converter makes from `frames` input frames: round(n · out / in).
    static func idealLength(frames: Int, from inputRate: Int, to outputRate: Int) -> Int {
        Int((Double(frames) * Double(outputRate) / Double(inputRate)).rounded())
    }

    /// A libsoxr stream of interleaved floats at its very high quality (the caller deletes it).
    static func makeSoxr(channels: Int, from inputRate: Int, to outputRate: Int) throws -> soxr_t {
        var ioSpec = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
        var quality = soxr_quality_spec(UInt(SOXR_VHQ), 0)
        var createError: soxr_error_t?
        guard let soxr = soxr_create(Double(inputRate), Double(outputRate), UInt32(channels), &createError, &ioSpec, &quality, nil) else {
            throw MediaError(.failed(detail: "libsoxr: \(createError.map { String(cString: $0) } ?? "cannot create a resampler")"), subject: "resampler")
        }
        return soxr
    }

    /// Resamples interleaved `samples` of `channels` channels. The stream is flushed (input set
    /// to NULL) so the filter's tail comes out, and the result is cut to exactly the ideal length.
    static func resample(_ samples: [Float], channels: Int, from inputRate: Int, to outputRate: Int) throws -> [Float] {
        guard inputRate != outputRate else { return samples }
        let inputFrames = samples.count / channels
        let ideal = idealLength(frames: inputFrames, from: inputRate, to: outputRate)
        let soxr = try makeSoxr(channels: channels, from: inputRate, to: outputRate)
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

/// Sample-rate conversion with libsoxr at very high quality, fed in blocks, so that memory is
/// the output plus one fixed block whatever the input's length and whatever the ratio of the
/// rates (libsoxr takes only the input that fills the block, and is called again for the rest):
/// `append` each block, then `finish`.
/// The result is what `Resampler.resample` gives for the whole input at once: the stream is
/// flushed and cut (or zero-padded) to exactly round(n · out / in) frames. At equal rates the
/// samples pass through untouched.
final class StreamingResampler {
    let channels: Int
    let inputRate: Int
    let outputRate: Int
    /// The converted frames so far, interleaved.
    private(set) var output: [Float] = []
    private var inputFrames = 0
    private let soxr: soxr_t?
    private var scratch: [Float]
    /// The frames one libsoxr call may produce: fixed, so that a large ratio of rates costs calls,
    /// not memory.
    static let scratchFrames = 8_192
    private var scratchFrames: Int { StreamingResampler.scratchFrames }

    /// `expectedInputFrames`, when known, reserves the output once instead of growing it.
    init(channels: Int, from inputRate: Int, to outputRate: Int, blockFrames: Int, expectedInputFrames: Int? = nil) throws {
        self.channels = channels
        self.inputRate = inputRate
        self.outputRate = outputRate
        if let expectedInputFrames {
            output.reserveCapacity((Resampler.idealLength(frames: expectedInputFrames, from: inputRate, to: outputRate) + 64) * channels)
        }
        scratch = inputRate == outputRate ? [] : [Float](repeating: 0, count: StreamingResampler.scratchFrames * channels)
        if inputRate == outputRate {
            soxr = nil
            return
        }
        let soxr = try Resampler.makeSoxr(channels: channels, from: inputRate, to: outputRate)
        self.soxr = soxr
    }

    deinit {
        if let soxr { soxr_delete(soxr) }
    }

    /// The size of the conversion's own buffer, in samples (what a test checks stays fixed).
    var scratchSamples: Int { scratch.count }

    /// The number of frames the finished output will have.
    var idealLength: Int { Resampler.idealLength(frames: inputFrames, from: inputRate, to: outputRate) }

    /// Converts `frames` interleaved frames.
    func append(_ input: UnsafePointer<Float>, frames: Int) throws {
        inputFrames += frames
        guard soxr != nil else {
            output.append(contentsOf: UnsafeBufferPointer(start: input, count: frames * channels))
            return
        }
        var consumed = 0
        while consumed < frames {
            let before = output.count
            let used = try process(input + consumed * channels, frames: frames - consumed)
            if used == 0 && output.count == before {
                throw MediaError(.failed(detail: "libsoxr took no input and gave no output"), subject: "resampler")
            }
            consumed += used
        }
    }

    /// Flushes the filter's tail and returns the output, exactly `idealLength` frames.
    func finish() throws -> [Float] {
        if soxr != nil {
            // A NULL input tells soxr the stream has ended, so it flushes its filter; stop once it
            // gives nothing more or the output is comfortably past its ideal length.
            while output.count / channels < idealLength + 64 {
                let before = output.count
                _ = try process(nil, frames: 0)
                if output.count == before { break }
            }
        }
        let ideal = idealLength * channels
        if output.count > ideal {
            output.removeLast(output.count - ideal)
        } else if output.count < ideal {
            // soxr delivers the ideal length give or take one frame; a missing last frame is zero.
            output.append(contentsOf: repeatElement(0, count: ideal - output.count))
        }
        return output
    }

    /// One soxr_process call; appends what it made and returns the input frames it used.
    private func process(_ input: UnsafePointer<Float>?, frames: Int) throws -> Int {
        var used = 0
        var made = 0
        let error = scratch.withUnsafeMutableBufferPointer { out in
            soxr_process(soxr, input.map(UnsafeRawPointer.init), frames, &used,
                         UnsafeMutableRawPointer(out.baseAddress!), scratchFrames, &made)
        }
        if let error {
            throw MediaError(.failed(detail: "libsoxr: \(String(cString: error))"), subject: "resampler")
        }
        output.append(contentsOf: scratch[0..<(made * channels)])
        return used
    }
}
