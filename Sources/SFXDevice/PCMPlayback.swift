import CALSA
import Glibc
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
        func outside(_ name: String, _ value: Int, _ range: ClosedRange<Int>) -> (String, String, String)? {
            range.contains(value) ? nil : (name, "\(value)", "\(range.lowerBound)…\(range.upperBound)")
        }
        if let bad = outside("sampleRate", sampleRate, Self.sampleRates) { return bad }
        if let bad = outside("channels", channels, Self.channelCounts) { return bad }
        if let bad = outside("periodFrames", periodFrames, Self.periodSizes) { return bad }
        if let bad = outside("periodCount", periodCount, Self.periodCounts) { return bad }
        if let bad = outside("wakePeriods", wakePeriods, 1...periodCount) { return bad }
        if formats.isEmpty { return ("formats", "[]", "one or more of FLOAT_LE, S32_LE, S16_LE") }
        return nil
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

    public var audioFormat: AudioFormat { AudioFormat(sampleRate: sampleRate, channels: channels) }

    /// The most a frame written now waits before it reaches the DAC: the whole buffer.
    public var bufferLatency: Double { Double(bufferFrames) / Double(sampleRate) }

    public var description: String {
        "\(device): \(format.rawValue) \(sampleRate) Hz \(channels) ch, period \(periodFrames), buffer \(bufferFrames)"
    }
}

/// An open ALSA playback stream, configured for low latency: the period the request asked for
/// (or the nearest), the start threshold at one period (so the stream restarts one period after
/// an xrun instead of after a whole buffer of silence), avail_min at one period unless the
/// request's `wakePeriods` asks for more.
///
/// sfx's ALSA `PlaybackDevice`. `wait`, `available`, `write`, `recover` and `delay` are for the
/// real-time thread: they neither allocate nor throw and report ALSA's negative errno;
/// everything else is for ordinary threads.
public final class PCMPlayback: PlaybackDevice, @unchecked Sendable {
    public let parameters: PlaybackParameters
    private var pcm: OpaquePointer?
    /// Converted samples for the device, allocated once for one period... or however many frames
    /// a write may carry (`maxFrames`).
    private let conversion: UnsafeMutableRawPointer
    private let maxFrames: Int
    /// The PCM's poll descriptors and one more for the engine's wake-up (`wait(…orUntilReadable:)`).
    private let pollDescriptors: UnsafeMutablePointer<pollfd>
    private let pollCapacity: Int
    /// `snd_pcm_hw_params_is_batch` of the negotiated parameters.
    public let positionIsBatched: Bool

    /// Opens `request.device` for playback and negotiates format, rate, channels, period and buffer.
    public init(_ request: PlaybackRequest) throws(ALSAError) {
        (pcm, parameters) = try Self.open(request, capture: false)
        maxFrames = max(parameters.periodFrames, parameters.bufferFrames)
        conversion = .allocate(byteCount: maxFrames * parameters.channels * 4, alignment: 16)
        pollCapacity = Int(max(0, snd_pcm_poll_descriptors_count(pcm))) + 1
        pollDescriptors = .allocate(capacity: pollCapacity)
        pollDescriptors.initialize(repeating: pollfd(), count: pollCapacity)
        positionIsBatched = Self.isBatch(pcm)
    }

    private static func isBatch(_ pcm: OpaquePointer?) -> Bool {
        var hw: OpaquePointer?
        guard snd_pcm_hw_params_malloc(&hw) == 0 else { return false }
        defer { snd_pcm_hw_params_free(hw) }
        return snd_pcm_hw_params_current(pcm, hw) == 0 && snd_pcm_hw_params_is_batch(hw) == 1
    }

    deinit {
        close()
        conversion.deallocate()
        pollDescriptors.deallocate()
    }

    /// Closes the stream; later calls do nothing and report -EBADFD.
    public func close() {
        if let pcm { snd_pcm_close(pcm) }
        pcm = nil
    }

    /// Negotiates `request` on an open PCM: interleaved access, the first format of
    /// `request.formats` it offers, channels, rate (resampling allowed), period and buffer; then
    /// avail_min at `wakePeriods` (one period unless asked) and the start threshold at one period (`capture`: one frame, so
    /// the first read starts the stream), and prepares it.
    /// Opens `request.device` for playback or capture, negotiated as `configure` does; a request
    /// out of range is refused before ALSA sees it. Closes the handle again when it fails.
    static func open(_ request: PlaybackRequest, capture: Bool) throws(ALSAError) -> (OpaquePointer?, PlaybackParameters) {
        ALSALibrary.ready
        let name = request.device
        if let bad = request.invalidSetting {
            throw ALSAError(device: name, operation: "ask for \(bad.setting) \(bad.value) (allowed: \(bad.allowed))", code: -EINVAL)
        }
        var handle: OpaquePointer?
        try check(snd_pcm_open(&handle, name, capture ? SND_PCM_STREAM_CAPTURE : SND_PCM_STREAM_PLAYBACK, 0),
                  name, capture ? "open for capture" : "open for playback")
        do {
            return (handle, try configure(handle, request, capture: capture))
        } catch {
            snd_pcm_close(handle)
            throw error
        }
    }

    static func configure(_ pcm: OpaquePointer?, _ request: PlaybackRequest, capture: Bool = false) throws(ALSAError) -> PlaybackParameters {
        let name = request.device
        var hw: OpaquePointer?
        snd_pcm_hw_params_malloc(&hw)
        defer { snd_pcm_hw_params_free(hw) }
        try check(snd_pcm_hw_params_any(pcm, hw), name, "read hardware parameters")
        try check(snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED), name, "set interleaved access")
        guard let format = request.formats.first(where: { snd_pcm_hw_params_test_format(pcm, hw, $0.alsa) == 0 }) else {
            throw ALSAError(device: name, operation: "set a float, S32 or S16 sample format", code: -EINVAL)
        }
        try check(snd_pcm_hw_params_set_format(pcm, hw, format.alsa), name, "set format \(format.rawValue)")
        var channels = UInt32(request.channels)
        try check(snd_pcm_hw_params_set_channels_near(pcm, hw, &channels), name, "set \(request.channels) channels")
        guard channels == 1 || channels == 2 else {
            throw ALSAError(device: name, operation: "set mono or stereo (device offers \(channels) channels)", code: -EINVAL)
        }
        var rate = UInt32(request.sampleRate)
        try check(snd_pcm_hw_params_set_rate_resample(pcm, hw, 1), name, "allow resampling")
        try check(snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, nil), name, "set rate \(request.sampleRate) Hz")
        var period = snd_pcm_uframes_t(request.periodFrames)
        try check(snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, nil), name, "set period \(request.periodFrames)")
        var buffer = snd_pcm_uframes_t(request.periodFrames * request.periodCount)
        try check(snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer), name, "set buffer \(buffer)")
        try check(snd_pcm_hw_params(pcm, hw), name, "apply hardware parameters")
        snd_pcm_hw_params_get_period_size(hw, &period, nil)
        snd_pcm_hw_params_get_buffer_size(hw, &buffer)

        var sw: OpaquePointer?
        snd_pcm_sw_params_malloc(&sw)
        defer { snd_pcm_sw_params_free(sw) }
        try check(snd_pcm_sw_params_current(pcm, sw), name, "read software parameters")
        let startThreshold = capture ? 1 : period
        try check(snd_pcm_sw_params_set_start_threshold(pcm, sw, startThreshold), name, "set start threshold")
        let wake = snd_pcm_uframes_t(request.wakeFrames(periodFrames: Int(period), bufferFrames: Int(buffer)))
        try check(snd_pcm_sw_params_set_avail_min(pcm, sw, wake), name, "set avail_min")
        try check(snd_pcm_sw_params(pcm, sw), name, "apply software parameters")
        try check(snd_pcm_prepare(pcm), name, "prepare")
        return PlaybackParameters(device: name, format: format, sampleRate: Int(rate), channels: Int(channels),
                                  periodFrames: Int(period), bufferFrames: Int(buffer), startThreshold: Int(startThreshold),
                                  wakeFrames: wake == period ? nil : Int(wake))
    }

    // MARK: Real-time thread

    /// Frames that can be written now without blocking, or a negative errno (-EPIPE after an xrun).
    @inline(__always)
    public func available() -> Int {
        guard let pcm else { return -Int(EBADFD) }
        return Int(snd_pcm_avail_update(pcm))
    }

    /// Waits until at least avail_min frames can be written, or `timeoutMilliseconds` pass.
    /// Returns 1 when ready, 0 on timeout, or a negative errno.
    @inline(__always)
    public func wait(timeoutMilliseconds: Int32) -> Int32 {
        guard let pcm else { return -EBADFD }
        return snd_pcm_wait(pcm, timeoutMilliseconds)
    }

    /// Converts `frames` interleaved float frames to the device format and writes them, blocking
    /// only when the buffer is full. Returns frames written (fewer than `frames` when an error
    /// came after some were taken) or a negative errno (-EPIPE: xrun, -ESTRPIPE: suspended,
    /// -ENODEV: gone).
    public func write(_ samples: UnsafePointer<Float>, frames: Int) -> Int {
        guard let pcm else { return -Int(EBADFD) }
        var done = 0
        while done < frames {
            let chunk = min(frames - done, maxFrames)
            let source = samples + done * parameters.channels
            let count = chunk * parameters.channels
            let written: snd_pcm_sframes_t
            switch parameters.format {
            case .float32:
                written = snd_pcm_writei(pcm, source, snd_pcm_uframes_t(chunk))
            case .s32:
                let out = conversion.assumingMemoryBound(to: Int32.self)
                for i in 0..<count { out[i] = Int32(clamping: Int64((Double(source[i]) * 2_147_483_648.0).rounded())) }
                written = snd_pcm_writei(pcm, out, snd_pcm_uframes_t(chunk))
            case .s16:
                let out = conversion.assumingMemoryBound(to: Int16.self)
                for i in 0..<count { out[i] = Int16(clamping: Int32((source[i] * 32768).rounded())) }
                written = snd_pcm_writei(pcm, out, snd_pcm_uframes_t(chunk))
            }
            // An error after some chunks were taken reports those (ALSA's own convention for a
            // partial write): the caller writes the rest again and gets the error then.
            if written < 0 { return done > 0 ? done : Int(written) }
            done += Int(written)
        }
        return done
    }

    /// Recovers from an xrun (-EPIPE) or a suspend (-ESTRPIPE); returns 0 or a negative errno.
    public func recover(_ error: Int32) -> Int32 {
        guard let pcm else { return -EBADFD }
        return snd_pcm_recover(pcm, error, 1)
    }

    /// Frames between what was written last and what the DAC plays now (0 once the DAC has
    /// passed it), or a negative errno.
    public func delay() -> Int {
        let delay = signedDelay()
        return delay.error < 0 ? Int(delay.error) : max(0, delay.frames)
    }

    /// `snd_pcm_delay`'s delay, negative when the DAC has passed what was written, and its
    /// error apart (a negative delay was taken for an errno: a rewind that went past the DAC
    /// by 54 frames ended the stream as "device lost", errno 54).
    public func signedDelay() -> (frames: Int, error: Int32) {
        guard let pcm else { return (0, -EBADFD) }
        var frames: snd_pcm_sframes_t = 0
        let result = snd_pcm_delay(pcm, &frames)
        return result < 0 ? (0, result) : (Int(frames), 0)
    }

    /// Waits for the PCM's descriptors (as `snd_pcm_wait` does) and `descriptor` together: 1 when
    /// the PCM is ready, 2 when `descriptor` is readable, 0 on timeout, or a negative errno
    /// (-EPIPE after an xrun, -ESTRPIPE when suspended, -ENODEV when gone, as `snd_pcm_wait`).
    public func wait(timeoutMilliseconds: Int32, orUntilReadable descriptor: Int32) -> Int32 {
        guard let pcm else { return -EBADFD }
        let count = snd_pcm_poll_descriptors(pcm, pollDescriptors, UInt32(pollCapacity - 1))
        if count < 0 { return count }
        let devices = Int(count)
        pollDescriptors[devices] = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ready = poll(pollDescriptors, nfds_t(devices + 1), timeoutMilliseconds)
        if ready < 0 { return errno == EINTR ? 0 : -errno }
        if ready == 0 { return 0 }
        if pollDescriptors[devices].revents & Int16(POLLIN) != 0 { return 2 }
        var revents: UInt16 = 0
        let result = snd_pcm_poll_descriptors_revents(pcm, pollDescriptors, UInt32(devices), &revents)
        if result < 0 { return result }
        if revents & UInt16(POLLERR | POLLNVAL) != 0 {
            // As snd_pcm_wait reports it: the state says what went wrong. (Raw values: matching
            // the imported enum itself would instantiate its metadata, a heap call, the first time.)
            let state = snd_pcm_state(pcm).rawValue
            if state == SND_PCM_STATE_XRUN.rawValue { return -EPIPE }
            if state == SND_PCM_STATE_SUSPENDED.rawValue { return -ESTRPIPE }
            if state == SND_PCM_STATE_DISCONNECTED.rawValue { return -ENODEV }
            return -EIO
        }
        return 1
    }

    /// ALSA PCMs may rewind: hardware and most plugins do; `rewindable` says how far.
    public var canRewind: Bool { true }

    /// Frames written and not yet played that ALSA can take back, as of the position read by the
    /// last `available` (ioplug plugins answer from it), or a negative errno.
    public func rewindable() -> Int {
        guard let pcm else { return -Int(EBADFD) }
        return Int(snd_pcm_rewindable(pcm))
    }

    /// `snd_pcm_rewind`: frames taken back or a negative errno.
    public func rewind(_ frames: Int) -> Int {
        guard let pcm else { return -Int(EBADFD) }
        return Int(snd_pcm_rewind(pcm, snd_pcm_uframes_t(max(0, frames))))
    }

    /// `snd_pcm_forward`: frames moved forward over, or a negative errno.
    public func forward(_ frames: Int) -> Int {
        guard let pcm else { return -Int(EBADFD) }
        return Int(snd_pcm_forward(pcm, snd_pcm_uframes_t(max(0, frames))))
    }

    /// Stops at once, dropping what is buffered.
    public func drop() { if let pcm { snd_pcm_drop(pcm) } }

    /// Plays what is buffered, then stops.
    public func drain() { if let pcm { snd_pcm_drain(pcm) } }
}
