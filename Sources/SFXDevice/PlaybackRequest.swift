import CALSA
import SFXCore

/// A sample format sfx can hand to ALSA. The mixer works in float; the device gets one of these.
public enum SampleFormat: String, Sendable, CaseIterable, Codable {
    case float32 = "FLOAT_LE"
    case s32 = "S32_LE"
    case s16 = "S16_LE"

    public var bytesPerSample: Int {
        switch self {
        case .float32, .s32: 4
        case .s16: 2
        }
    }

    var alsa: snd_pcm_format_t {
        switch self {
        case .float32: SND_PCM_FORMAT_FLOAT_LE
        case .s32: SND_PCM_FORMAT_S32_LE
        case .s16: SND_PCM_FORMAT_S16_LE
        }
    }
}

/// What to ask ALSA for. Every value is a request: the device may give the nearest it supports,
/// and `PCMPlayback.parameters` says what was negotiated.
public struct PlaybackRequest: Sendable {
    /// Any ALSA PCM name: "default", "hw:0,0", "plughw:1", "dmix", a plugin device…
    public var device: String = "default"
    public var sampleRate: Int = 48_000
    public var channels: Int = 2
    /// Frames per period: the unit the real-time thread renders and writes.
    public var periodFrames: Int = 128
    /// Periods in the device buffer.
    public var periodCount: Int = 3
    /// Formats in order of preference.
    public var formats: [SampleFormat] = [.float32, .s32, .s16]
    /// Periods of room the device waits for before it wakes the real-time thread (ALSA's
    /// avail_min): 1 on the classic path, which writes a period at a time; rewind mode waits for
    /// several, since a command wakes it anyway (`RewindMode`). At most half the buffer as
    /// negotiated, so at least half of it is still queued at every wake-up.
    public var wakePeriods: Int = 1

    public init(device: String = "default", sampleRate: Int = 48_000, channels: Int = 2,
                periodFrames: Int = 128, periodCount: Int = 3) {
        self.device = device
        self.sampleRate = sampleRate
        self.channels = channels
        self.periodFrames = periodFrames
        self.periodCount = periodCount
    }

    /// avail_min for the parameters a device agreed to: `wakePeriods` periods, at most half the
    /// buffer (whole periods), at least one period.
    public func wakeFrames(periodFrames: Int, bufferFrames: Int) -> Int {
        periodFrames * max(1, min(wakePeriods, bufferFrames / periodFrames / 2))
    }

    /// The values each number may take; `PCMPlayback` refuses a request outside them.
    public static let sampleRates = 8_000...384_000
    public static let channelCounts = 1...2
    public static let periodSizes = 16...16_384
    public static let periodCounts = 2...64

    /// The first setting out of its range, as (name, value, allowed range), or nil when every
    /// number is valid.
    public var invalidSetting: (setting: String, value: String, allowed: String)? {
        PCMStream.outOfRange("sampleRate", sampleRate, Self.sampleRates) ?? PCMStream.outOfRange("channels", channels, Self.channelCounts)
            ?? PCMStream.outOfRange("periodFrames", periodFrames, Self.periodSizes)
            ?? PCMStream.outOfRange("periodCount", periodCount, Self.periodCounts)
            ?? PCMStream.outOfRange("wakePeriods", wakePeriods, 1...max(1, periodCount)) ?? PCMStream.formatsOutOfRange(formats)
    }
}

/// What the device agreed to.
public struct PlaybackParameters: Sendable, Equatable, Codable, CustomStringConvertible {
    public var device: String
    public var format: SampleFormat
    public var sampleRate: Int
    public var channels: Int
    public var periodFrames: Int
    public var bufferFrames: Int
    public var startThreshold: Int
    /// Frames of room the device waits for before waking the real-time thread (avail_min); nil:
    /// one period.
    public var wakeFrames: Int?

    public init(device: String, format: SampleFormat, sampleRate: Int, channels: Int, periodFrames: Int,
                bufferFrames: Int, startThreshold: Int, wakeFrames: Int? = nil) {
        self.device = device
        self.format = format
        self.sampleRate = sampleRate
        self.channels = channels
        self.periodFrames = periodFrames
        self.bufferFrames = bufferFrames
        self.startThreshold = startThreshold
        self.wakeFrames = wakeFrames
    }

    public var audioFormat: AudioFormat { AudioFormat(sampleRate: sampleRate, channels: channels) }

    /// The most a frame written now waits before it reaches the DAC: the whole buffer.
    public var bufferLatency: Double { Double(bufferFrames) / Double(sampleRate) }

    public var description: String {
        "\(device): \(format.rawValue) \(sampleRate) Hz \(channels) ch, period \(periodFrames), buffer \(bufferFrames)"
    }
}
