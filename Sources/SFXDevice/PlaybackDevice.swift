import Glibc

/// The seam between the engine and whatever plays its samples: ALSA (`PCMPlayback`), the null
/// device that consumes by the clock (`NullPlaybackDevice`), or a device of a test's own.
///
/// It follows the shape of OpenAL Soft's backends (open, reset, start, stop, clock latency), cut
/// to what a real-time writer needs: a factory opens a device with the negotiated `parameters`
/// (open + reset); the stream starts by itself once a period is written (start threshold);
/// `drain` and `drop` stop it; `delay` is the clock latency.
///
/// ## Rewinding
/// A device that can take back frames written and not yet played (`rewindable`, `rewind`) lets
/// the engine's rewind mode start a sound a millisecond ahead of the DAC with a deep buffer; a
/// device that cannot keeps the defaults (nothing rewindable) and the engine plays as before.
/// A rewind is only as good as the device's word: the engine checks that `delay` dropped by
/// what was rewound (some plugins answer a rewind and play everything written all the same).
///
/// ## Real-time calls
/// `wait`, `available`, `write`, `recover`, `delay`, `rewindable` and `rewind` are called from the real-time thread: a
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
    /// the buffer is full. Returns the frames written (fewer than `frames` when an error came
    /// after some were taken: the next write reports it) or a negative errno.
    func write(_ samples: UnsafePointer<Float>, frames: Int) -> Int

    /// Recovers from -EPIPE, -ESTRPIPE or -EINTR so that writing can go on; returns 0 or a
    /// negative errno (the device is then lost).
    func recover(_ error: Int32) -> Int32

    /// Frames between the last one written and the one the DAC plays now (0 when the DAC has
    /// passed the last one written), or a negative errno.
    func delay() -> Int

    /// `delay` with its sign: ALSA reports a negative delay when the DAC has passed the last
    /// frame written (a rewind that went back past the DAC, or an underrun not yet noticed),
    /// which is not an error; `error` is a negative errno, or 0.
    func signedDelay() -> (frames: Int, error: Int32)

    /// Waits as `wait(timeoutMilliseconds:)` does, and returns 2 as soon as `descriptor` (the
    /// engine's wake-up pipe) is readable; it does not read it.
    func wait(timeoutMilliseconds: Int32, orUntilReadable descriptor: Int32) -> Int32

    /// Whether the device may rewind (`rewindable`, `rewind`); the engine still checks that it
    /// does. False by default.
    var canRewind: Bool { get }

    /// Whether the device says its position moves in batches (ALSA's SNDRV_PCM_INFO_BATCH,
    /// `snd_pcm_hw_params_is_batch`): its pointer may lag the DAC by up to a period, so rewind
    /// mode stays a period clear of it. False by default.
    var positionIsBatched: Bool { get }

    /// Frames written and not yet played that the device can take back now, as of a fresh
    /// position (call `available` first), 0 when it cannot rewind, or a negative errno.
    func rewindable() -> Int

    /// Takes back the last `frames` frames written (at most `rewindable()`), so the next write
    /// replaces them. Returns the frames rewound or a negative errno.
    func rewind(_ frames: Int) -> Int

    /// Moves forward over `frames` frames after a rewind (at most what was rewound), as if they
    /// had been written again unchanged. Returns the frames moved or a negative errno.
    func forward(_ frames: Int) -> Int

    /// Plays what is buffered, then stops.
    func drain()

    /// Stops at once, dropping what is buffered.
    func drop()

    /// Releases the device. Later calls do nothing and report -EBADFD.
    func close()
}

extension PlaybackDevice {
    /// A device whose delay is never negative: `delay` told apart from its errors.
    public func signedDelay() -> (frames: Int, error: Int32) {
        let delay = delay()
        return delay < 0 ? (0, Int32(clamping: delay)) : (delay, 0)
    }

    /// A device without a wake-up descriptor of its own waits for the device alone.
    public func wait(timeoutMilliseconds: Int32, orUntilReadable descriptor: Int32) -> Int32 {
        wait(timeoutMilliseconds: timeoutMilliseconds)
    }

    public var canRewind: Bool { false }

    public var positionIsBatched: Bool { false }

    /// A device that cannot rewind has nothing rewindable.
    public func rewindable() -> Int { 0 }

    public func rewind(_ frames: Int) -> Int { -Int(ENOSYS) }

    public func forward(_ frames: Int) -> Int { -Int(ENOSYS) }
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
