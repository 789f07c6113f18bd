import SFXPlayback
import FoundationEssentials
import Glibc
import SFXDevice
import SFXMedia

/// What a `Recorder` records: format, rate, channels, quality, device, limits, prompt, place.
public struct RecorderSettings: Sendable {
    /// The file format (default M4A: AAC in MPEG-4).
    public var format: RecordingFormat = .m4a
    /// Asked of the device; the file takes what the device gives (8000 … 192000).
    public var sampleRate = 48_000
    /// 1 or 2.
    public var channels = 1
    /// AAC's bit rate (16000 … 512000 b/s; nil: 64 kb/s a channel).
    public var bitRate: Int?
    /// 0 … 1 for the libsndfile codecs (Opus, Vorbis, MP3 quality; FLAC effort); nil: their default.
    public var quality: Double?
    /// What an M4A becomes at `stop()`: `.standard` (the default) rewrites the fragments written
    /// while recording as a standard MPEG-4 file (durations in its `moov`, before the `mdat`);
    /// `.fragmented` keeps the fragmented file, for those who stream fragments. Other formats
    /// ignore it.
    public var container: RecordingContainer = .standard
    /// Noise suppression, automatic gain and a high-pass for a voice (`.standard`), as phones
    /// apply by default; `.off` (the default) keeps the frames as captured. See `VoiceProcessing`.
    public var voiceProcessing: VoiceProcessing = .off
    /// Leaves out leading and trailing silence (no speech by voice activity detection), keeping
    /// `trimMargin` of it before the first speech and after the last. The file and the final
    /// event's duration are the trimmed length (`minDuration` applies to it); `currentTime`
    /// counts what was captured.
    public var trimSilence = false
    public var trimMargin: Duration = .milliseconds(200)
    /// Any ALSA capture PCM ("default", "hw:1,0", "plughw:1", a plugin).
    public var device = "default"
    /// Frames a capture period holds: the meters' update interval (nil: 10 ms at the rate).
    public var periodFrames: Int?
    /// Periods in the device buffer (2 … 64): the slack the capture thread has.
    public var periodCount = 8
    /// Stop by itself after this long (nil: no limit).
    public var maxDuration: Duration?
    /// Shorter recordings are removed, with a `.discarded` event that says why (nil: keep all).
    public var minDuration: Duration?
    /// A sound the recorder's `engine` plays before capture starts; capture begins after the sound
    /// has ended at the device (its completion, plus the output latency, plus `promptMargin`), so
    /// the tone is never in the file.
    public var prompt: SoundID?
    public var promptMargin: Duration = .milliseconds(50)
    /// The file to create (it must not exist). nil: a new timestamped name in `directory`.
    public var url: URL?
    /// Where timestamped recordings go (nil: `Recorder.defaultDirectory()`,
    /// `$XDG_DATA_HOME/sfx/recordings`).
    public var directory: URL?
    /// SCHED_FIFO priority of the capture thread (1 … 99).
    public var realtimePriority: Int32 = 70
    /// Opens the capture device (ALSA by default; a test may give its own).
    public var captureDevices: any CaptureDeviceFactory = SystemCaptureDevices()

    public init(format: RecordingFormat = .m4a) {
        self.format = format
    }

    /// The device request these settings make.
    var request: CaptureRequest {
        CaptureRequest(device: device, sampleRate: sampleRate, channels: channels,
                       periodFrames: periodFrames ?? max(sampleRate / 100, CaptureRequest.periodSizes.lowerBound), periodCount: periodCount)
    }

    /// Throws the first setting out of range.
    func validate() throws(SettingError) {
        try SettingError.check("sampleRate", sampleRate, in: 8_000...192_000)
        try SettingError.check("channels", channels, in: CaptureRequest.channelCounts)
        if let periodFrames { try SettingError.check("periodFrames", periodFrames, in: CaptureRequest.periodSizes) }
        try SettingError.check("periodCount", periodCount, in: CaptureRequest.periodCounts)
        try SettingError.check("realtimePriority", Int(realtimePriority), in: 1...99)
        if let bitRate { try SettingError.check("bitRate", bitRate, in: 16_000...512_000) }
        if let quality, !(quality.isFinite && (0...1).contains(quality)) {
            throw SettingError(setting: "quality", value: "\(quality)", allowed: "a number from 0 to 1")
        }
        try voiceProcessing.validate()
        try SettingError.check("trimMargin", trimMargin, in: .zero ... .seconds(5))
        let day = Duration.seconds(86_400)
        if let maxDuration, maxDuration <= .zero || maxDuration > day {
            throw SettingError(setting: "maxDuration", value: "\(maxDuration)", allowed: "more than 0 s, up to 24 h")
        }
        if let minDuration, minDuration < .zero || minDuration > day {
            throw SettingError(setting: "minDuration", value: "\(minDuration)", allowed: "0 s to 24 h")
        }
        if let minDuration, let maxDuration, minDuration > maxDuration {
            throw SettingError(setting: "minDuration", value: "\(minDuration)", allowed: "no more than maxDuration (\(maxDuration))")
        }
    }
}
