import CSndFile

/// The layout of headerless PCM (`aplay -f S16_LE -r 48000 -c 2`, `sox -t raw`): what a file
/// or a pipe without a header cannot say about itself.
///
/// ```swift
/// let format = try RawPCMFormat(name: "S16_LE", sampleRate: 48_000, channels: 2)
/// let cue = try AudioDecoder().decode(file: RawFilePath("take.raw"), raw: format)
/// ```
///
/// Sample formats carry aplay's names (`S16_LE`, `S24_3LE`, `FLOAT_LE`, …, case ignored); `cd`
/// and `dat` are aplay's shorthands (S16_LE at 44100 and 48000 Hz, stereo).
public struct RawPCMFormat: Sendable, Hashable, CustomStringConvertible {
    public enum Sample: String, Sendable, CaseIterable {
        case s8 = "S8", u8 = "U8", s16le = "S16_LE", s16be = "S16_BE", s24le = "S24_3LE", s24be = "S24_3BE"
        case s32le = "S32_LE", s32be = "S32_BE", floatLE = "FLOAT_LE", floatBE = "FLOAT_BE"
        case float64LE = "FLOAT64_LE", float64BE = "FLOAT64_BE", muLaw = "MU_LAW", aLaw = "A_LAW"

        /// Bytes per sample.
        public var bytes: Int {
            switch self {
            case .s8, .u8, .muLaw, .aLaw: 1
            case .s16le, .s16be: 2
            case .s24le, .s24be: 3
            case .s32le, .s32be, .floatLE, .floatBE: 4
            case .float64LE, .float64BE: 8
            }
        }

        /// libsndfile's SF_FORMAT_RAW format word for the sample.
        var libsndfileFormat: Int32 {
            let little = Int32(SF_ENDIAN_LITTLE), big = Int32(SF_ENDIAN_BIG)
            let (subtype, endian): (Int32, Int32) = switch self {
            case .s8: (Int32(SF_FORMAT_PCM_S8), 0)
            case .u8: (Int32(SF_FORMAT_PCM_U8), 0)
            case .s16le: (Int32(SF_FORMAT_PCM_16), little)
            case .s16be: (Int32(SF_FORMAT_PCM_16), big)
            case .s24le: (Int32(SF_FORMAT_PCM_24), little)
            case .s24be: (Int32(SF_FORMAT_PCM_24), big)
            case .s32le: (Int32(SF_FORMAT_PCM_32), little)
            case .s32be: (Int32(SF_FORMAT_PCM_32), big)
            case .floatLE: (Int32(SF_FORMAT_FLOAT), little)
            case .floatBE: (Int32(SF_FORMAT_FLOAT), big)
            case .float64LE: (Int32(SF_FORMAT_DOUBLE), little)
            case .float64BE: (Int32(SF_FORMAT_DOUBLE), big)
            case .muLaw: (Int32(SF_FORMAT_ULAW), 0)
            case .aLaw: (Int32(SF_FORMAT_ALAW), 0)
            }
            return Int32(SF_FORMAT_RAW) | subtype | endian
        }
    }

    public var sample: Sample
    public var sampleRate: Int
    public var channels: Int

    /// Checks the rate and channels against what a sound file may have.
    public init(sample: Sample, sampleRate: Int, channels: Int) throws(FormatError) {
        guard (1...SoundFile.maximumSampleRate).contains(sampleRate) else { throw .sampleRate(sampleRate) }
        guard (1...SoundFile.maximumChannels).contains(channels) else { throw .channels(channels) }
        self.sample = sample
        self.sampleRate = sampleRate
        self.channels = channels
    }

    /// `name` as aplay's `-f` takes it; `sampleRate` and `channels` default to `cd`'s or `dat`'s
    /// for those shorthands, else to 48000 Hz mono.
    public init(name: String, sampleRate: Int? = nil, channels: Int? = nil) throws(FormatError) {
        let upper = name.uppercased()
        switch upper {
        case "CD": try self.init(sample: .s16le, sampleRate: sampleRate ?? 44_100, channels: channels ?? 2)
        case "DAT": try self.init(sample: .s16le, sampleRate: sampleRate ?? 48_000, channels: channels ?? 2)
        default:
            let aliases: [String: Sample] = ["S24_3LE": .s24le, "S24_3BE": .s24be, "FLOAT": .floatLE, "FLOAT32_LE": .floatLE,
                                             "FLOAT32_BE": .floatBE, "FLOAT64": .float64LE, "MULAW": .muLaw, "ALAW": .aLaw]
            guard let sample = Sample(rawValue: upper) ?? aliases[upper] else { throw .unknownSample(name) }
            try self.init(sample: sample, sampleRate: sampleRate ?? 48_000, channels: channels ?? 1)
        }
    }

    /// Bytes per frame.
    public var frameBytes: Int { sample.bytes * channels }

    /// "S16_LE 48000 Hz 2 ch".
    public var description: String { "\(sample.rawValue) \(sampleRate) Hz \(channels) ch" }

    /// The names `init(name:)` takes, for help and messages.
    public static var names: String { Sample.allCases.map(\.rawValue).joined(separator: ", ") + ", cd, dat" }

    /// A format that cannot be, in one line naming the value and what to give instead.
    public enum FormatError: Error, Sendable, Equatable, CustomStringConvertible {
        case unknownSample(String)
        case sampleRate(Int)
        case channels(Int)

        public var description: String {
            switch self {
            case .unknownSample(let name) where ["S24_LE", "S24_BE", "U24_LE", "U24_BE"].contains(name.uppercased()):
                return "raw sample format '\(name)' (24 bits in 4 bytes) is not read; convert it to S32_LE, or give S24_3LE for packed 3-byte samples"
            case .unknownSample(let name):
                return "unknown raw sample format '\(name)'; use one of \(RawPCMFormat.names)"
            case .sampleRate(let rate):
                return "raw sample rate \(rate) Hz is outside 1 to \(SoundFile.maximumSampleRate); give the rate the audio was made at"
            case .channels(let count):
                return "raw channel count \(count) is outside 1 to \(SoundFile.maximumChannels); give the channels the audio has"
            }
        }
    }
}
