import CALSA
import Glibc

/// Opening an ALSA PCM, for playback (`PCMPlayback`) and capture (`PCMCapture`) alike: what the
/// two directions share (the names of their requests and parameters are their own:
/// `PlaybackRequest`/`PlaybackParameters`, `CaptureRequest`/`CaptureParameters`).
enum PCMStream {
    enum Direction {
        case playback, capture

        var alsa: snd_pcm_stream_t { self == .playback ? SND_PCM_STREAM_PLAYBACK : SND_PCM_STREAM_CAPTURE }
    }

    /// What to negotiate, from either request.
    struct Shape {
        var device: String
        var sampleRate: Int
        var channels: Int
        var periodFrames: Int
        var periodCount: Int
        var formats: [SampleFormat]
        /// avail_min for the negotiated period and buffer.
        var wakeFrames: (_ periodFrames: Int, _ bufferFrames: Int) -> Int
        /// A setting out of range, refused before ALSA sees it.
        var invalidSetting: (setting: String, value: String, allowed: String)?

        init(_ request: PlaybackRequest) {
            device = request.device
            sampleRate = request.sampleRate
            channels = request.channels
            periodFrames = request.periodFrames
            periodCount = request.periodCount
            formats = request.formats
            wakeFrames = { request.wakeFrames(periodFrames: $0, bufferFrames: $1) }
            invalidSetting = request.invalidSetting
        }

        init(_ request: CaptureRequest) {
            device = request.device
            sampleRate = request.sampleRate
            channels = request.channels
            periodFrames = request.periodFrames
            periodCount = request.periodCount
            formats = request.formats
            wakeFrames = { period, _ in period }
            invalidSetting = request.invalidSetting
        }
    }

    /// A request's setting outside its range, with the range; nil when it is inside. A request
    /// checks its settings in order with `??`, then `formatsOutOfRange`: an array of labelled
    /// tuples made for the check cost every engine's start a quarter of a millisecond (its type
    /// is built by the runtime at first use).
    static func outOfRange(_ name: String, _ value: Int, _ range: ClosedRange<Int>) -> (setting: String, value: String, allowed: String)? {
        range.contains(value) ? nil : (name, "\(value)", "\(range.lowerBound)…\(range.upperBound)")
    }

    /// An empty list of formats, as `outOfRange` reports a number; nil for a list with one.
    static func formatsOutOfRange(_ formats: [SampleFormat]) -> (setting: String, value: String, allowed: String)? {
        formats.isEmpty ? ("formats", "[]", "one or more of FLOAT_LE, S32_LE, S16_LE") : nil
    }

    /// What was negotiated.
    struct Negotiated {
        var device: String
        var format: SampleFormat
        var sampleRate: Int
        var channels: Int
        var periodFrames: Int
        var bufferFrames: Int
        var startThreshold: Int
        var wakeFrames: Int
    }

    /// Opens `shape.device` in `direction` and negotiates it: interleaved access, the first of
    /// `shape.formats` it offers, channels, rate (resampling allowed), period and buffer; then
    /// avail_min (`shape.wakeFrames`) and the start threshold (playback: one period; capture: one
    /// frame, so the first read starts the stream), and prepares it. A shape out of range is
    /// refused before ALSA sees it; the handle is closed again when anything fails.
    static func open(_ shape: Shape, direction: Direction) throws(ALSAError) -> (pcm: OpaquePointer?, negotiated: Negotiated) {
        ALSALibrary.ready
        let name = shape.device
        if let bad = shape.invalidSetting {
            throw ALSAError(device: name, operation: "ask for \(bad.setting) \(bad.value) (allowed: \(bad.allowed))", code: -EINVAL)
        }
        var handle: OpaquePointer?
        try check(snd_pcm_open(&handle, name, direction.alsa, 0),
                  name, direction == .capture ? "open for capture" : "open for playback")
        do {
            return (handle, try configure(handle, shape, direction: direction))
        } catch {
            snd_pcm_close(handle)
            throw error
        }
    }

    private static func configure(_ pcm: OpaquePointer?, _ shape: Shape, direction: Direction) throws(ALSAError) -> Negotiated {
        let name = shape.device
        var hw: OpaquePointer?
        snd_pcm_hw_params_malloc(&hw)
        defer { snd_pcm_hw_params_free(hw) }
        try check(snd_pcm_hw_params_any(pcm, hw), name, "read hardware parameters")
        try check(snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED), name, "set interleaved access")
        guard let format = shape.formats.first(where: { snd_pcm_hw_params_test_format(pcm, hw, $0.alsa) == 0 }) else {
            throw ALSAError(device: name, operation: "set a float, S32 or S16 sample format", code: -EINVAL)
        }
        try check(snd_pcm_hw_params_set_format(pcm, hw, format.alsa), name, "set format \(format.rawValue)")
        var channels = UInt32(shape.channels)
        try check(snd_pcm_hw_params_set_channels_near(pcm, hw, &channels), name, "set \(shape.channels) channels")
        guard channels == 1 || channels == 2 else {
            throw ALSAError(device: name, operation: "set mono or stereo (device offers \(channels) channels)", code: -EINVAL)
        }
        var rate = UInt32(shape.sampleRate)
        try check(snd_pcm_hw_params_set_rate_resample(pcm, hw, 1), name, "allow resampling")
        try check(snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, nil), name, "set rate \(shape.sampleRate) Hz")
        var period = snd_pcm_uframes_t(shape.periodFrames)
        try check(snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, nil), name, "set period \(shape.periodFrames)")
        var buffer = snd_pcm_uframes_t(shape.periodFrames * shape.periodCount)
        try check(snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer), name, "set buffer \(buffer)")
        try check(snd_pcm_hw_params(pcm, hw), name, "apply hardware parameters")
        snd_pcm_hw_params_get_period_size(hw, &period, nil)
        snd_pcm_hw_params_get_buffer_size(hw, &buffer)

        var sw: OpaquePointer?
        snd_pcm_sw_params_malloc(&sw)
        defer { snd_pcm_sw_params_free(sw) }
        try check(snd_pcm_sw_params_current(pcm, sw), name, "read software parameters")
        let startThreshold = direction == .capture ? 1 : period
        try check(snd_pcm_sw_params_set_start_threshold(pcm, sw, startThreshold), name, "set start threshold")
        let wake = snd_pcm_uframes_t(shape.wakeFrames(Int(period), Int(buffer)))
        try check(snd_pcm_sw_params_set_avail_min(pcm, sw, wake), name, "set avail_min")
        try check(snd_pcm_sw_params(pcm, sw), name, "apply software parameters")
        try check(snd_pcm_prepare(pcm), name, "prepare")
        return Negotiated(device: name, format: format, sampleRate: Int(rate), channels: Int(channels),
                          periodFrames: Int(period), bufferFrames: Int(buffer), startThreshold: Int(startThreshold),
                          wakeFrames: Int(wake))
    }
}

extension PlaybackParameters {
    init(_ negotiated: PCMStream.Negotiated) {
        self.init(device: negotiated.device, format: negotiated.format, sampleRate: negotiated.sampleRate,
                  channels: negotiated.channels, periodFrames: negotiated.periodFrames, bufferFrames: negotiated.bufferFrames,
                  startThreshold: negotiated.startThreshold,
                  wakeFrames: negotiated.wakeFrames == negotiated.periodFrames ? nil : negotiated.wakeFrames)
    }
}
