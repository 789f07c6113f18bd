/// The shape the capture side takes beside `PlaybackDevice`: the recorder's thread waits for a
/// period, reads it, and hands it on, under the same real-time rules (no allocation, lock, log
/// or I/O other than the device's in `wait`, `available`, `read` and `recover`; failures as a
/// negative errno). `PCMCapture` is the ALSA conformer (`SystemCaptureDevices` opens it);
/// `SFX.Recorder` and `SFX.LevelMonitor` read it on their capture thread. A capture stream
/// starts with its first `read`: wait only once it runs.
public protocol CaptureDevice: AnyObject {
    /// What the device agreed to: format, rate, channels, period, buffer.
    var parameters: CaptureParameters { get }

    /// Waits until at least one period can be read or `timeoutMilliseconds` pass.
    /// Returns 1 when ready, 0 on timeout, or a negative errno.
    func wait(timeoutMilliseconds: Int32) -> Int32

    /// Frames that can be read now without blocking, or a negative errno (-EPIPE after an overrun).
    func available() -> Int

    /// Reads up to `frames` interleaved float frames into `samples`. Returns the frames read or
    /// a negative errno.
    func read(into samples: UnsafeMutablePointer<Float>, frames: Int) -> Int

    /// Recovers from -EPIPE, -ESTRPIPE or -EINTR; returns 0 or a negative errno.
    func recover(_ error: Int32) -> Int32

    /// Stops at once, dropping what was captured and not read.
    func drop()

    /// Releases the device. Later calls do nothing and report -EBADFD.
    func close()
}

/// Opens capture devices (the recorder's side of `PlaybackDeviceFactory`).
public protocol CaptureDeviceFactory: Sendable {
    /// Opens a device as near `request` as it can; throws one line naming the device and the fix.
    func open(_ request: CaptureRequest) throws(ALSAError) -> any CaptureDevice
}

extension CaptureDeviceFactory {
    /// Capture was once asked for with a playback request.
    @available(*, deprecated, message: "ask with a CaptureRequest")
    public func open(_ request: PlaybackRequest) throws(ALSAError) -> any CaptureDevice {
        try open(CaptureRequest(request))
    }
}
