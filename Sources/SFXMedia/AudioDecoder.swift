import Foundation
import SFXCore

/// How long a sound may be to become a cue (cues live in memory for their whole life).
public struct CueLimits: Sendable, Hashable {
    /// The longest cue, in seconds. Longer files are refused; stream them with `Player` instead.
    public var maximumDuration: Double

    public init(maximumDuration: Double = 30) {
        self.maximumDuration = maximumDuration
    }

    /// 30 seconds.
    public static let standard = CueLimits()

    func maximumFrames(at sampleRate: Int) -> Int {
        Int((maximumDuration * Double(sampleRate)).rounded(.down))
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
/// Files: anything libsndfile 1.2 reads (WAV, AIFF/AIFC, FLAC, Ogg Vorbis, Opus, MP3, CAF, AU, …).
/// Both paths do the same two steps, in this order:
///
/// 1. Channels: mono is copied to both sides, stereo to mono is averaged, and more channels are
///    downmixed by position (the file's channel map, or 5.1 for six unlabelled channels, at
///    ITU-style weights) or else averaged with equal weight. See `ChannelPosition`.
/// 2. Rate: libsoxr at very high quality, flushed so the cue has exactly round(n · out / in)
///    frames. At equal rates the samples pass through untouched, so a 16-bit file decodes to
///    exactly its values divided by 32768.
///
/// Failures throw `MediaError` (missing, unreadable, not audio, truncated, corrupt, empty,
/// impossible header, too long for `limits`, unsupported encoding); no input makes it trap.
public struct AudioDecoder: Sendable {
    /// The format every cue comes out in.
    public var format: AudioFormat
    public var limits: CueLimits

    public init(format: AudioFormat = .standard, limits: CueLimits = .standard) {
        self.format = format
        self.limits = limits
    }

    /// Decodes the file at `url` into a cue named `name` (default: the file's name).
    public func decode(contentsOf url: URL, name: String? = nil) throws -> Cue {
        let path = url.path
        let file = try SoundFile(path: path)
        let rate = file.sampleRate
        let channels = file.channels
        let maximumFrames = limits.maximumFrames(at: rate)
        if let promised = file.frames, promised > maximumFrames {
            throw MediaError(.tooLong(seconds: Double(promised) / Double(rate), limit: limits.maximumDuration), subject: path)
        }
        let samples = try file.readAll(maximumFrames: maximumFrames + 1)
        let frames = samples.count / channels
        if frames > maximumFrames {
            throw MediaError(.tooLong(seconds: Double(frames) / Double(rate), limit: limits.maximumDuration), subject: path)
        }
        guard frames > 0 else { throw MediaError(.noFrames, subject: path) }
        return try convert(samples, sampleRate: rate, channels: channels, map: file.channelMap,
                           name: name ?? url.lastPathComponent, subject: path)
    }

    /// Makes a cue from a caller's interleaved float samples at any rate and channel count.
    /// `channelMap`, when given, names each channel's position (one entry per channel).
    public func cue(interleaved samples: UnsafeBufferPointer<Float>, sampleRate: Int, channels: Int,
                    channelMap: [ChannelPosition]? = nil, name: String) throws -> Cue {
        func invalid(_ detail: String) -> MediaError { MediaError(.invalidBuffer(detail: detail), subject: name) }
        guard (1...SoundFile.maximumSampleRate).contains(sampleRate) else {
            throw invalid("sample rate \(sampleRate) Hz is outside 1 to \(SoundFile.maximumSampleRate); pass the buffer's real rate")
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
        guard samples.allSatisfy(\.isFinite) else {
            throw invalid("it holds NaN or infinite samples; pass finite values (normally -1 to 1)")
        }
        return try convert(Array(samples), sampleRate: sampleRate, channels: channels, map: channelMap, name: name, subject: name)
    }

    /// `cue(interleaved:…)` for an array.
    public func cue(interleaved samples: [Float], sampleRate: Int, channels: Int,
                    channelMap: [ChannelPosition]? = nil, name: String) throws -> Cue {
        try samples.withUnsafeBufferPointer {
            try cue(interleaved: $0, sampleRate: sampleRate, channels: channels, channelMap: channelMap, name: name)
        }
    }

    /// The shared conversion: channels first (so fewer channels are resampled), then rate.
    private func convert(_ samples: [Float], sampleRate: Int, channels: Int, map: [ChannelPosition]?,
                         name: String, subject: String) throws -> Cue {
        let matrix = ChannelMatrix(sourceChannels: channels, map: map, targetChannels: format.channels)
        let mixed = samples.withUnsafeBufferPointer { matrix.apply($0, frames: samples.count / channels) }
        let resampled: [Float]
        do {
            resampled = try Resampler.resample(mixed, channels: format.channels, from: sampleRate, to: format.sampleRate)
        } catch let error as MediaError {
            throw MediaError(error.reason, subject: subject)
        }
        guard !resampled.isEmpty else {
            throw MediaError(.invalidBuffer(detail: "too short to last one frame at \(format.sampleRate) Hz"), subject: subject)
        }
        return Cue(name: name, format: format, interleaved: resampled)
    }
}
