import CALSA
import Glibc
import SFXCore

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
        let opened = try PCMStream.open(PCMStream.Shape(request), direction: .playback)
        pcm = opened.pcm
        parameters = PlaybackParameters(opened.negotiated)
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
