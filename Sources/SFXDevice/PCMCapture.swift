import CALSA
import Glibc

/// An open ALSA capture stream: sfx's ALSA `CaptureDevice`. It negotiates as `PCMPlayback` does
/// (`PCMStream`: the request's formats in order, rate, channels, period, buffer; avail_min at
/// one period) and starts with the first read.
///
/// `wait`, `available`, `read` and `recover` are for the real-time thread: they neither
/// allocate nor throw and report ALSA's negative errno; everything else is for ordinary threads.
public final class PCMCapture: CaptureDevice, @unchecked Sendable {
    public let parameters: CaptureParameters
    private var pcm: OpaquePointer?
    /// Samples in the device format before conversion to float, for up to `maxFrames` frames.
    private let conversion: UnsafeMutableRawPointer
    private let maxFrames: Int

    /// Opens `request.device` for capture and negotiates format, rate, channels, period and buffer.
    public init(_ request: CaptureRequest) throws(ALSAError) {
        let opened = try PCMStream.open(PCMStream.Shape(request), direction: .capture)
        pcm = opened.pcm
        parameters = CaptureParameters(opened.negotiated)
        maxFrames = max(parameters.periodFrames, parameters.bufferFrames)
        conversion = .allocate(byteCount: maxFrames * parameters.channels * 4, alignment: 16)
    }

    deinit {
        close()
        conversion.deallocate()
    }

    // MARK: Real-time thread

    public func wait(timeoutMilliseconds: Int32) -> Int32 {
        guard let pcm else { return -EBADFD }
        return snd_pcm_wait(pcm, timeoutMilliseconds)
    }

    public func available() -> Int {
        guard let pcm else { return -Int(EBADFD) }
        return Int(snd_pcm_avail_update(pcm))
    }

    /// Reads `frames` frames, converted to float, blocking until they have arrived. Returns the
    /// frames read or a negative errno (-EPIPE: overrun, -ESTRPIPE: suspended, -ENODEV: gone).
    public func read(into samples: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        guard let pcm else { return -Int(EBADFD) }
        var done = 0
        while done < frames {
            let chunk = min(frames - done, maxFrames)
            let target = samples + done * parameters.channels
            let got: snd_pcm_sframes_t
            switch parameters.format {
            case .float32:
                got = snd_pcm_readi(pcm, target, snd_pcm_uframes_t(chunk))
            case .s32:
                got = snd_pcm_readi(pcm, conversion, snd_pcm_uframes_t(chunk))
                let source = conversion.assumingMemoryBound(to: Int32.self)
                if got > 0 { for i in 0..<(Int(got) * parameters.channels) { target[i] = Float(Double(source[i]) / 2_147_483_648.0) } }
            case .s16:
                got = snd_pcm_readi(pcm, conversion, snd_pcm_uframes_t(chunk))
                let source = conversion.assumingMemoryBound(to: Int16.self)
                if got > 0 { for i in 0..<(Int(got) * parameters.channels) { target[i] = Float(source[i]) / 32_768 } }
            }
            if got < 0 { return Int(got) }
            done += Int(got)
        }
        return done
    }

    public func recover(_ error: Int32) -> Int32 {
        guard let pcm else { return -EBADFD }
        return snd_pcm_recover(pcm, error, 1)
    }

    // MARK: Ordinary threads

    public func drop() { if let pcm { snd_pcm_drop(pcm) } }

    /// Closes the stream; later calls do nothing and report -EBADFD.
    public func close() {
        if let pcm { snd_pcm_close(pcm) }
        pcm = nil
    }
}

/// The capture devices of the system: any ALSA PCM name, opened as a `PCMCapture`.
public struct SystemCaptureDevices: CaptureDeviceFactory {
    public init() {}

    public func open(_ request: CaptureRequest) throws(ALSAError) -> any CaptureDevice {
        try PCMCapture(request)
    }
}

extension PCMCapture {
    /// Capture was once asked for with a playback request.
    @available(*, deprecated, message: "ask with a CaptureRequest")
    public convenience init(_ request: PlaybackRequest) throws(ALSAError) {
        try self.init(CaptureRequest(request))
    }
}
