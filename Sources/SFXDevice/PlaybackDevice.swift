/// The seam between the engine and whatever plays its samples: ALSA (`PCMPlayback`), the null
/// device that consumes by the clock (`NullPlaybackDevice`), or a device of a test's own.
///
/// It follows the shape of OpenAL Soft's backends (open, reset, start, stop, clock latency), cut
/// to what a real-time writer needs: a factory opens a device with the negotiated `parameters`
/// (open + reset); the stream starts by itself once a period is written (start threshold);
/// `drain` and `drop` stop it; `delay` is the clock latency.
///
/// ## Real-time calls
/// `wait`, `available`, `write`, `recover` and `delay` are called from the real-time thread: a
/// conformer must not allocate, lock, log or do I/O other than its device's there, and reports
/// failures as a negative errno (never throws): -EPIPE after an underrun, -ESTRPIPE when
/// suspended, -ENODEV when the device is gone. Everything else is for ordinary threads.
///
/// The output thread holds a device by a class reference and calls `PCMPlayback` and
/// `NullPlaybackDevice` through code specialised for them; other conformers go through the
/// protocol's witness table.
public protocol PlaybackDevice: AnyObject {
    /// What the device agreed to; never changes while it is open.
    var parameters: PlaybackParameters { get }

    /// Waits until at least one period can be written or `timeoutMilliseconds` pass.
    /// Returns 1 when ready, 0 on timeout, or a negative errno.
    func wait(timeoutMilliseconds: Int32) -> Int32

    /// Frames that can be written now without blocking, or a negative errno.
    func available() -> Int

    /// Writes `frames` interleaved float frames (in `parameters.channels`), blocking only while
    /// the buffer is full. Returns the frames written or a negative errno.
    func write(_ samples: UnsafePointer<Float>, frames: Int) -> Int

    /// Recovers from -EPIPE, -ESTRPIPE or -EINTR so that writing can go on; returns 0 or a
    /// negative errno (the device is then lost).
    func recover(_ error: Int32) -> Int32

    /// Frames between the last one written and the one the DAC plays now, or a negative errno.
    func delay() -> Int

    /// Plays what is buffered, then stops.
    func drain()

    /// Stops at once, dropping what is buffered.
    func drop()

    /// Releases the device. Later calls do nothing and report -EBADFD.
    func close()
}

/// Opens playback devices: how the engine opens its output at start, and reopens it after the
/// device was lost or closed while idle.
public protocol PlaybackDeviceFactory: Sendable {
    /// Opens a device as near `request` as it can; throws one line naming the device and the fix.
    func open(_ request: PlaybackRequest) throws(ALSAError) -> any PlaybackDevice
}

/// The devices of the system: `NullPlaybackDevice.name` ("null") opens the null device, any
/// other name an ALSA PCM (`PCMPlayback`).
public struct SystemPlaybackDevices: PlaybackDeviceFactory {
    public init() {}

    public func open(_ request: PlaybackRequest) throws(ALSAError) -> any PlaybackDevice {
        if request.device == NullPlaybackDevice.name { return try NullPlaybackDevice(request) }
        return try PCMPlayback(request)
    }
}
