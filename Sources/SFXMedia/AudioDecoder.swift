import FoundationEssentials
import Glibc
import SFXCore

/// How long and how large a sound may be to become a cue (cues live in memory for their whole life).
public struct CueLimits: Sendable, Hashable {
    /// The longest cue, in seconds. Longer files are refused (cues are held whole in memory).
    public var maximumDuration: Double
    /// The most memory one cue may take, in bytes: its frames at the decoder's format × its
    /// channels × 4 (32-bit float samples). 64 MB by default, room for 30 s of stereo at
    /// 192 kHz (46 MB). A source whose cue would be larger is refused before anything is
    /// decoded (from the length its header gives), and decoding stops at the limit when the
    /// header does not say or lies. Decoding itself needs only this much plus a few blocks:
    /// sources are read, downmixed and resampled 4096 frames at a time, whatever their
    /// channels and rate.
    public var maximumBytes: Int

    public init(maximumDuration: Double = 30, maximumBytes: Int = 64_000_000) {
        self.maximumDuration = maximumDuration
        self.maximumBytes = maximumBytes
    }

    /// 30 seconds, 64 MB.
    public static let standard = CueLimits()

    func maximumFrames(at sampleRate: Int) -> Int {
        Int((maximumDuration * Double(sampleRate)).rounded(.down))
    }

    /// The bytes a cue made from `frames` source frames at `sampleRate` takes at `format`.
    static func cueBytes(frames: Int64, from sampleRate: Int, to format: AudioFormat) -> Int64 {
        let cueFrames = (Double(frames) * Double(format.sampleRate) / Double(sampleRate)).rounded()
        let bytes = cueFrames * Double(format.channels) * Double(MemoryLayout<Float>.size)
        return bytes >= Double(Int64.max) ? Int64.max : Int64(bytes)
    }

    /// The most source frames at `sampleRate` whose cue at `format` fits in `maximumBytes`.
    func maximumSourceFrames(at sampleRate: Int, for format: AudioFormat) -> Int {
        let cueFrames = Double(maximumBytes) / Double(format.channels * MemoryLayout<Float>.size)
        return Int((cueFrames * Double(sampleRate) / Double(format.sampleRate)).rounded(.down))
    }
}

/// Turns sound files and caller PCM into `Cue`s at the engine's `AudioFormat`, once, at load time.
///
/// ```swift
/// let decoder = AudioDecoder(format: .standard)                 // 48 kHz stereo cues
/// let coin = try decoder.decode(contentsOf: URL(filePath: "coin.ogg"))
/// let beep = try decoder.cue(interleaved: samples, sampleRate: 22_050, channels: 1, name: "beep")
/// ```
///
/// Files: anything libsndfile 1.2 reads (WAV, AIFF/AIFC, FLAC, Ogg Vorbis, Opus, MP3, CAF, AU, …),
/// and through FFmpeg what it cannot (M4A/AAC, ALAC, WMA, …).
/// Both paths do the same two steps, in this order:
///
/// 1. Channels: mono is copied to both sides, stereo to mono is averaged, and more channels are
///    downmixed by position (the file's channel map, or 5.1 for six unlabelled channels, at
///    ITU-style weights) or else averaged with equal weight. See `ChannelPosition`.
/// 2. Rate: libsoxr at very high quality, flushed so the cue has exactly round(n · out / in)
///    frames. At equal rates the samples pass through untouched, so a 16-bit file decodes to
///    exactly its values divided by 32768.
///
/// Both steps run on blocks of 4096 frames as the file is read, so memory is the cue plus a
/// block, whatever the source's channels and rate.
///
/// Failures throw `MediaError` (missing, not a regular file, unreadable, not audio, truncated,
/// corrupt, empty, impossible header, too long or too large for `limits`, unsupported
/// encoding); no input makes it trap or block.
public struct AudioDecoder: Sendable {
    /// The format every cue comes out in.
    public var format: AudioFormat
    public var limits: CueLimits

    public init(format: AudioFormat = .standard, limits: CueLimits = .standard) {
        self.format = format
        self.limits = limits
    }

    /// Frames read, downmixed and resampled at a time.
    static let blockFrames = 4096

    /// Decodes the file at `url` into a cue named `name` (default: the file's name).
    public func decode(contentsOf url: URL, name: String? = nil) throws -> Cue {
        try decode(file: RawFilePath(url), name: name ?? url.lastPathComponent)
    }

    /// Decodes the file at `file` (any bytes a Linux file name may hold) into a cue named
    /// `name` (default: the file's name).
    ///
    /// Only regular files are read (a FIFO or a device is refused at once), and memory stays
    /// bounded by the cue: the file is decoded block by block, each block downmixed and fed to
    /// the resampler, and a file whose cue would pass `limits` is refused — before decoding
    /// when its header gives its length, at the limit when it does not.
    public func decode(file: RawFilePath, name: String? = nil) throws -> Cue {
        try decode(file: file, raw: nil, name: name)
    }

    /// Decodes `file` as headerless PCM laid out as `raw` says (nil: a sound file with a header,
    /// as `decode(file:name:)`). Bytes after the last whole frame are ignored.
    public func decode(file: RawFilePath, raw: RawPCMFormat?, name: String? = nil) throws -> Cue {
        let sound = try AudioSources.open(file, raw: raw)   // libsndfile, else FFmpeg
        let path = sound.path
        let rate = sound.sampleRate
        let channels = sound.channels
        let durationFrames = limits.maximumFrames(at: rate)
        let memoryFrames = limits.maximumSourceFrames(at: rate, for: format)
        func tooLong(_ frames: Int64) -> MediaError {
            MediaError(.tooLong(seconds: Double(frames) / Double(rate), limit: limits.maximumDuration), subject: path)
        }
        func tooLarge(_ frames: Int64?) -> MediaError {
            MediaError(.tooLarge(channels: channels, sampleRate: rate, seconds: frames.map { Double($0) / Double(rate) },
                                 cueBytes: frames.map { CueLimits.cueBytes(frames: $0, from: rate, to: format) } ?? Int64.max,
                                 cueFormat: "\(format)", limit: limits.maximumBytes), subject: path)
        }
        if let promised = sound.frames {
            if promised > durationFrames { throw tooLong(promised) }
            if promised > memoryFrames { throw tooLarge(promised) }
        }
        let limit = min(durationFrames, memoryFrames)
        let assembler = try CueAssembler(sourceChannels: channels, map: sound.channelMap, sampleRate: rate, format: format,
                                         expectedFrames: sound.frames.map { Int($0) })
        var block = [Float](repeating: 0, count: AudioDecoder.blockFrames * channels)
        var frames = 0
        try block.withUnsafeMutableBufferPointer { buffer in
            // Up to one frame past the limit is read, to tell a file that ends there from a
            // longer one whose header did not say so.
            while frames <= limit {
                let got = sound.read(into: buffer.baseAddress!, frames: min(AudioDecoder.blockFrames, limit + 1 - frames))
                guard got > 0 else { break }
                guard UnsafeBufferPointer(rebasing: buffer[0..<(got * channels)]).allSatisfy(\.isFinite) else {
                    throw MediaError(.corrupt(detail: "NaN or infinite samples"), subject: path)
                }
                frames += got
                if frames <= limit {
                    try assembler.append(UnsafePointer(buffer.baseAddress!), frames: got, subject: path)
                }
            }
        }
        if frames > limit {
            throw limit == durationFrames ? tooLong(Int64(frames)) : tooLarge(nil)
        }
        try sound.finishReading(framesRead: frames)
        guard frames > 0 else { throw MediaError(.noFrames, subject: path) }
        return try assembler.finish(name: name ?? file.lastComponent.description, subject: path)
    }

    /// Makes a cue from a caller's interleaved float samples at any rate and channel count.
    /// `channelMap`, when given, names each channel's position (one entry per channel).
    public func cue(interleaved samples: UnsafeBufferPointer<Float>, sampleRate: Int, channels: Int,
                    channelMap: [ChannelPosition]? = nil, name: String) throws -> Cue {
        func invalid(_ detail: String) -> MediaError { MediaError(.invalidBuffer(detail: detail), subject: name) }
        guard SoundFile.sampleRates.contains(sampleRate) else {
            throw invalid("sample rate \(sampleRate) Hz is outside the \(SoundFile.minimumSampleRate) to \(SoundFile.maximumSampleRate) Hz sfx converts; pass the buffer's real rate")
        }
        guard (1...SoundFile.maximumChannels).contains(channels) else {
            throw invalid("\(channels) channels is outside 1 to \(SoundFile.maximumChannels); pass the buffer's real channel count")
        }
        guard samples.count % channels == 0 else {
            throw invalid("\(samples.count) samples is not a whole number of \(channels)-channel frames; pass complete frames")
        }
        guard !samples.isEmpty else { throw invalid("the buffer is empty; pass at least one frame") }
        if let channelMap, channelMap.count != channels {
            throw invalid("the channel map names \(channelMap.count) channels but the buffer has \(channels); give one position per channel")
        }
        let frames = samples.count / channels
        if frames > limits.maximumFrames(at: sampleRate) {
            throw MediaError(.tooLong(seconds: Double(frames) / Double(sampleRate), limit: limits.maximumDuration), subject: name)
        }
        if frames > limits.maximumSourceFrames(at: sampleRate, for: format) {
            throw MediaError(.tooLarge(channels: channels, sampleRate: sampleRate, seconds: Double(frames) / Double(sampleRate),
                                       cueBytes: CueLimits.cueBytes(frames: Int64(frames), from: sampleRate, to: format),
                                       cueFormat: "\(format)", limit: limits.maximumBytes), subject: name)
        }
        guard samples.allSatisfy(\.isFinite) else {
            throw invalid("it holds NaN or infinite samples; pass finite values (normally -1 to 1)")
        }
        let assembler = try CueAssembler(sourceChannels: channels, map: channelMap, sampleRate: sampleRate, format: format,
                                         expectedFrames: frames)
        var start = 0
        while start < frames {
            let count = min(AudioDecoder.blockFrames, frames - start)
            try assembler.append(samples.baseAddress! + start * channels, frames: count, subject: name)
            start += count
        }
        return try assembler.finish(name: name, subject: name)
    }

    /// `cue(interleaved:…)` for an array.
    public func cue(interleaved samples: [Float], sampleRate: Int, channels: Int,
                    channelMap: [ChannelPosition]? = nil, name: String) throws -> Cue {
        try samples.withUnsafeBufferPointer {
            try cue(interleaved: $0, sampleRate: sampleRate, channels: channels, channelMap: channelMap, name: name)
        }
    }
}

/// The shared conversion, block by block: channels first (so fewer channels are resampled),
/// then rate; memory is the cue being built plus one block.
final class CueAssembler {
    private let matrix: ChannelMatrix
    private let format: AudioFormat
    private let resampler: StreamingResampler
    private var mixed: [Float]

    init(sourceChannels: Int, map: [ChannelPosition]?, sampleRate: Int, format: AudioFormat, expectedFrames: Int?) throws {
        matrix = ChannelMatrix(sourceChannels: sourceChannels, map: map, targetChannels: format.channels)
        self.format = format
        resampler = try StreamingResampler(channels: format.channels, from: sampleRate, to: format.sampleRate,
                                           blockFrames: AudioDecoder.blockFrames, expectedInputFrames: expectedFrames)
        mixed = [Float](repeating: 0, count: AudioDecoder.blockFrames * format.channels)
    }

    /// Adds `frames` interleaved source frames (at most `AudioDecoder.blockFrames`).
    func append(_ block: UnsafePointer<Float>, frames: Int, subject: String) throws {
        precondition(frames <= AudioDecoder.blockFrames)
        do {
            try mixed.withUnsafeMutableBufferPointer { out in
                matrix.apply(block, frames: frames, into: out.baseAddress!)
                try resampler.append(UnsafePointer(out.baseAddress!), frames: frames)
            }
        } catch let error as MediaError {
            throw MediaError(error.reason, subject: subject)
        }
    }

    /// The finished cue.
    func finish(name: String, subject: String) throws -> Cue {
        let samples: [Float]
        do {
            samples = try resampler.finish()
        } catch let error as MediaError {
            throw MediaError(error.reason, subject: subject)
        }
        guard !samples.isEmpty else {
            throw MediaError(.invalidBuffer(detail: "too short to last one frame at \(format.sampleRate) Hz"), subject: subject)
        }
        return Cue(name: name, format: format, interleaved: samples)
    }
}
