import SFXCore

/// What to ask ALSA for when capturing (the recorder's and the level monitor's side of
/// `PlaybackRequest`). Every value is a request: the device may give the nearest it supports,
/// and `PCMCapture.parameters` says what was negotiated. The stream wakes its reader every
/// period and starts with its first read.
public struct CaptureRequest: Sendable, Equatable {
    /// An ALSA PCM name ("default", "hw:1,0", "sfxcard", …).
    public var device: String = "default"
    public var sampleRate: Int = 48_000
    public var channels: Int = 1
    /// Frames per period: what one read waits for.
    public var periodFrames: Int = 480
    /// Periods in the buffer: how far the reader may fall behind before the device overruns.
    public var periodCount: Int = 4
    /// Sample formats in the order of preference; the device gets the first it offers.
    public var formats: [SampleFormat] = [.float32, .s32, .s16]

    public init(device: String = "default", sampleRate: Int = 48_000, channels: Int = 1,
                periodFrames: Int = 480, periodCount: Int = 4) {
        self.device = device
        self.sampleRate = sampleRate
        self.channels = channels
        self.periodFrames = periodFrames
        self.periodCount = periodCount
    }

    /// The same numbers as a playback request gives them.
    public init(_ request: PlaybackRequest) {
        self.init(device: request.device, sampleRate: request.sampleRate, channels: request.channels,
                  periodFrames: request.periodFrames, periodCount: request.periodCount)
        formats = request.formats
    }

    /// The ranges a request may ask for (those of playback: one ALSA negotiates both).
    public static let sampleRates = PlaybackRequest.sampleRates
    public static let channelCounts = PlaybackRequest.channelCounts
    public static let periodSizes = PlaybackRequest.periodSizes
    public static let periodCounts = PlaybackRequest.periodCounts

    /// The first setting outside its range, with the range, or nil.
    public var invalidSetting: (setting: String, value: String, allowed: String)? {
        PCMStream.outOfRange("sampleRate", sampleRate, Self.sampleRates) ?? PCMStream.outOfRange("channels", channels, Self.channelCounts)
            ?? PCMStream.outOfRange("periodFrames", periodFrames, Self.periodSizes)
            ?? PCMStream.outOfRange("periodCount", periodCount, Self.periodCounts) ?? PCMStream.formatsOutOfRange(formats)
    }
}

/// What a capture device agreed to.
public struct CaptureParameters: Sendable, Equatable, Codable, CustomStringConvertible {
    public var device: String
    public var format: SampleFormat
    public var sampleRate: Int
    public var channels: Int
    public var periodFrames: Int
    public var bufferFrames: Int

    public init(device: String, format: SampleFormat, sampleRate: Int, channels: Int, periodFrames: Int, bufferFrames: Int) {
        self.device = device
        self.format = format
        self.sampleRate = sampleRate
        self.channels = channels
        self.periodFrames = periodFrames
        self.bufferFrames = bufferFrames
    }

    init(_ negotiated: PCMStream.Negotiated) {
        self.init(device: negotiated.device, format: negotiated.format, sampleRate: negotiated.sampleRate,
                  channels: negotiated.channels, periodFrames: negotiated.periodFrames, bufferFrames: negotiated.bufferFrames)
    }

    public var audioFormat: AudioFormat { AudioFormat(sampleRate: sampleRate, channels: channels) }

    public var description: String {
        "\(device): \(format.rawValue) \(sampleRate) Hz \(channels) ch, period \(periodFrames), buffer \(bufferFrames)"
    }
}
