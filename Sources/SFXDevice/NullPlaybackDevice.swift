import Glibc

/// A playback device with no hardware behind it: it consumes frames by CLOCK_MONOTONIC at its
/// rate, as a DAC would, and throws them away. The engine plays on it while its real device is
/// lost (so voices end and completions arrive on time), and any engine can open it by name
/// (`PlaybackRequest(device: "null")`) to run without sound.
///
/// It takes the request's numbers as they are (FLOAT_LE, the rate, channels, period and buffer
/// asked for). The stream starts when a period has been written (the start threshold) and
/// plays from that moment; `wait` sleeps until the request's `wakePeriods` (one unless asked)
/// of the buffer have been consumed. It never underruns: a stream left to run dry simply stops,
/// and starts again with the next period written. It rewinds exactly: every frame written and not yet consumed can be taken
/// back. Its real-time calls only read the clock and sleep (`clock_nanosleep`, or `ppoll` on the
/// engine's wake-up descriptor).
public final class NullPlaybackDevice: PlaybackDevice, @unchecked Sendable {
    /// The device name that opens it through `SystemPlaybackDevices`.
    public static let name = "null"

    public let parameters: PlaybackParameters
    private let rate: Int64
    private let bufferFrames: Int64
    private let periodFrames: Int64
    /// Room `wait` waits for (avail_min).
    private let wakeFrames: Int64
    /// Whether the stream is consuming (from `startNanoseconds`, CLOCK_MONOTONIC).
    private var running = false
    private var startNanoseconds: Int64 = 0
    /// Frames written since the stream (re)started.
    private var writtenFrames: Int64 = 0
    private var closed = false

    /// Checks the request's numbers and takes them as the parameters.
    public init(_ request: PlaybackRequest) throws(ALSAError) {
        if let bad = request.invalidSetting {
            throw ALSAError(device: Self.name, operation: "ask for \(bad.setting) \(bad.value) (allowed: \(bad.allowed))", code: -EINVAL)
        }
        let buffer = request.periodFrames * request.periodCount
        let wake = request.wakeFrames(periodFrames: request.periodFrames, bufferFrames: buffer)
        parameters = PlaybackParameters(device: Self.name, format: .float32, sampleRate: request.sampleRate,
                                        channels: request.channels, periodFrames: request.periodFrames,
                                        bufferFrames: buffer, startThreshold: request.periodFrames,
                                        wakeFrames: wake == request.periodFrames ? nil : wake)
        rate = Int64(request.sampleRate)
        bufferFrames = Int64(parameters.bufferFrames)
        periodFrames = Int64(parameters.periodFrames)
        wakeFrames = Int64(wake)
    }

    // MARK: Real-time calls

    public func wait(timeoutMilliseconds: Int32) -> Int32 {
        wait(timeoutMilliseconds: timeoutMilliseconds, orUntilReadable: -1)   // poll ignores a negative descriptor
    }

    public func wait(timeoutMilliseconds: Int32, orUntilReadable descriptor: Int32) -> Int32 {
        guard !closed else { return -EBADFD }
        let now = Self.now()
        let room = bufferFrames - filled(at: now)
        if room >= wakeFrames { return 1 }
        let due = nanoseconds(ofFrame: played(at: now) + wakeFrames - room)
        let limit = now + Int64(max(0, timeoutMilliseconds)) * 1_000_000
        let until = min(due, limit)
        var wake = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        // poll's whole milliseconds, then the last fraction asleep (clock_nanosleep).
        while true {
            let left = until - Self.now()
            if left < 1_000_000 {
                if left > 0 { Self.sleep(until: until) }
                return due > limit ? 0 : 1
            }
            if poll(&wake, 1, Int32(left / 1_000_000)) > 0 { return 2 }
        }
    }

    public var canRewind: Bool { true }

    /// Frames written and not yet consumed: all of them can be taken back.
    public func rewindable() -> Int {
        guard !closed else { return -Int(EBADFD) }
        return Int(filled(at: Self.now()))
    }

    public func rewind(_ frames: Int) -> Int {
        guard !closed else { return -Int(EBADFD) }
        let taken = min(Int64(max(0, frames)), filled(at: Self.now()))
        writtenFrames -= taken
        return Int(taken)
    }

    public func available() -> Int {
        guard !closed else { return -Int(EBADFD) }
        return Int(bufferFrames - filled(at: Self.now()))
    }

    public func write(_ samples: UnsafePointer<Float>, frames: Int) -> Int {
        guard !closed else { return -Int(EBADFD) }
        var left = Int64(frames)
        while left > 0 {
            let now = Self.now()
            let room = bufferFrames - filled(at: now)
            if room == 0 {
                Self.sleep(until: nanoseconds(ofFrame: played(at: now) + min(left, periodFrames)))
                continue
            }
            let chunk = min(room, left)
            writtenFrames += chunk
            left -= chunk
            if !running, writtenFrames >= periodFrames {
                running = true
                startNanoseconds = now
            }
        }
        return frames
    }

    public func recover(_ error: Int32) -> Int32 { closed ? -EBADFD : 0 }

    public func delay() -> Int {
        guard !closed else { return -Int(EBADFD) }
        return Int(filled(at: Self.now()))
    }

    // MARK: Ordinary threads

    public func drain() {
        guard !closed, writtenFrames > 0 else { return }
        if !running {
            running = true
            startNanoseconds = Self.now()
        }
        Self.sleep(until: nanoseconds(ofFrame: writtenFrames))
        drop()
    }

    public func drop() {
        running = false
        writtenFrames = 0
    }

    public func close() {
        drop()
        closed = true
    }

    // MARK: The clock

    /// Frames the DAC has consumed of the running stream at `now`.
    private func played(at now: Int64) -> Int64 {
        guard running else { return 0 }
        let elapsed = max(0, now - startNanoseconds)
        return elapsed / 1_000_000_000 * rate + elapsed % 1_000_000_000 * rate / 1_000_000_000
    }

    /// Frames written and not yet consumed; a stream that ran dry stops here.
    private func filled(at now: Int64) -> Int64 {
        let left = writtenFrames - played(at: now)
        guard running, left <= 0 else { return running ? left : writtenFrames }
        running = false
        writtenFrames = 0
        return 0
    }

    /// When frame `frame` of the running stream reaches the DAC (CLOCK_MONOTONIC ns, rounded up).
    private func nanoseconds(ofFrame frame: Int64) -> Int64 {
        startNanoseconds + frame / rate * 1_000_000_000 + (frame % rate * 1_000_000_000 + rate - 1) / rate
    }

    private static func now() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    private static func sleep(until deadline: Int64) {
        var when = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &when, nil) == EINTR {}
    }
}
