import Glibc
import Synchronization
import SFXDevice

/// A playback device that fails on demand, for tests of the output thread's failure policy
/// without ALSA. It plays by the clock like the null device (it wraps one) until told to fail:
/// writes then return `writeError`, and with `timesOut` the stream is stuck: every wait sleeps
/// its whole timeout and returns 0, and no frame is available. Everything it is told and counts
/// is atomic, so the real-time thread never locks.
final class ScriptedDevice: PlaybackDevice, @unchecked Sendable {
    private let inner: NullPlaybackDevice
    /// A negative errno every write returns while nonzero.
    let writeError = Atomic<Int32>(0)
    /// What `recover` returns (0: recovered, like a sound server's plugin that keeps failing).
    let recoverResult = Atomic<Int32>(0)
    /// Whether every wait times out.
    let timesOut = Atomic<Bool>(false)
    let writes = Atomic<Int>(0)
    let failedWrites = Atomic<Int>(0)
    let recovers = Atomic<Int>(0)
    let closed = Atomic<Bool>(false)

    init(_ request: PlaybackRequest) throws(ALSAError) {
        var request = request
        request.device = NullPlaybackDevice.name
        inner = try NullPlaybackDevice(request)
    }

    var parameters: PlaybackParameters { inner.parameters }

    func wait(timeoutMilliseconds: Int32) -> Int32 {
        if timesOut.load(ordering: .relaxed) {
            usleep(UInt32(timeoutMilliseconds) * 1000)
            return 0
        }
        return inner.wait(timeoutMilliseconds: timeoutMilliseconds)
    }

    /// Nothing while the stream is stuck (`timesOut`): it takes no frames.
    func available() -> Int { timesOut.load(ordering: .relaxed) ? 0 : inner.available() }

    func write(_ samples: UnsafePointer<Float>, frames: Int) -> Int {
        writes.wrappingAdd(1, ordering: .relaxed)
        let error = writeError.load(ordering: .relaxed)
        if error != 0 {
            failedWrites.wrappingAdd(1, ordering: .relaxed)
            return Int(error)
        }
        return inner.write(samples, frames: frames)
    }

    func recover(_ error: Int32) -> Int32 {
        recovers.wrappingAdd(1, ordering: .relaxed)
        return recoverResult.load(ordering: .relaxed)
    }

    func delay() -> Int { inner.delay() }
    func drain() { inner.drain() }
    func drop() { inner.drop() }

    func close() {
        inner.close()
        closed.store(true, ordering: .relaxed)
    }
}

/// Opens `ScriptedDevice`s, or refuses with `openError` while it is nonzero; keeps the last one.
final class ScriptedDevices: PlaybackDeviceFactory {
    let openError = Atomic<Int32>(0)
    let attempts = Atomic<Int>(0)
    private let latest = Mutex<ScriptedDevice?>(nil)

    var device: ScriptedDevice? { latest.withLock { $0 } }

    func open(_ request: PlaybackRequest) throws(ALSAError) -> any PlaybackDevice {
        attempts.wrappingAdd(1, ordering: .relaxed)
        let error = openError.load(ordering: .relaxed)
        if error != 0 { throw ALSAError(device: request.device, operation: "open for playback", code: error) }
        let device = try ScriptedDevice(request)
        latest.withLock { $0 = device }
        return device
    }
}
