import SFXPlayback
import FoundationEssentials
import SFXSystem
import Dispatch
import Glibc
import Synchronization
import CSFXSystem
import SFXDevice

/// The capture thread: the recorder's (and the monitor's) real-time loop over a `CaptureDevice`.
///
/// Each turn: wait for a period, read it, meter it, and — while recording — hand it to the
/// writer through a `SampleRing`. No allocation, lock, log or I/O but the device's happens in
/// the loop; what it reports (frames, overruns, a lost device, the length limit) is in atomics.
/// It asks for SCHED_FIFO and records whether it got it.
///
/// Pause and resume cut nothing into the file but the paused time: the last period before a
/// pause fades out and the first after a resume fades in (one period, 10 ms by default, linear),
/// so the join has no gap and no click. The first period of a recording is not faded: the file
/// begins with the very first captured frame.
final class CaptureLoop: @unchecked Sendable {
    enum Mode: Int { case metering = 0, recording = 1, paused = 2 }

    let device: any CaptureDevice
    let meter: LevelMeter
    /// Where recorded frames go; nil for a monitor.
    let ring: SampleRing?
    /// Frames the recording may hold (`Int.max`: no limit).
    let frameLimit: Int
    let realtimePriority: Int32

    let mode = Atomic<Int>(Mode.metering.rawValue)
    let framesCaptured = Atomic<Int>(0)
    /// Frames handed to the writer (the recording's length so far).
    let framesRecorded = Atomic<Int>(0)
    let overruns = Atomic<Int>(0)
    /// Frames missing from the recording at overruns (and other recovered errors): the device
    /// drops what it holds, and nothing is captured until the stream restarts. Measured on the
    /// monotonic clock, from the last read before the error to the first after it.
    let framesMissed = Atomic<Int>(0)
    /// Frames lost because the writer fell a whole ring behind (should stay 0).
    let framesDropped = Atomic<Int>(0)
    let limitReached = Atomic<Bool>(false)
    /// The negative errno that ended the loop (the device is gone), 0 while it runs.
    let failure = Atomic<Int32>(0)
    /// 1 once SCHED_FIFO was granted, -errno once refused.
    let realtimeStatus = Atomic<Int32>(0)
    /// The kernel's id of the capture thread (for `chrt -p`, `top -H`), 0 before it runs.
    let threadID = Atomic<Int32>(0)
    private let stopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let buffer: UnsafeMutablePointer<Float>
    private let periodFrames: Int

    init(device: any CaptureDevice, ring: SampleRing?, frameLimit: Int, realtimePriority: Int32) {
        self.device = device
        self.ring = ring
        self.frameLimit = frameLimit
        self.realtimePriority = realtimePriority
        let parameters = device.parameters
        meter = LevelMeter(channels: parameters.channels, sampleRate: parameters.sampleRate)
        periodFrames = parameters.periodFrames
        buffer = .allocate(capacity: periodFrames * parameters.channels)
        buffer.initialize(repeating: 0, count: periodFrames * parameters.channels)
    }

    deinit { buffer.deallocate() }

    func start(mode initial: Mode) {
        mode.store(initial.rawValue, ordering: .releasing)
        Threads.start(name: "sfx-capture", stackSize: 1 << 20) { [self] in
            run()
        }
    }

    /// Ends the loop and waits for it (at most one wait, 200 ms).
    func stop() {
        guard !stopRequested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        finished.wait()
    }

    private func run() {
        defer { finished.signal() }
        threadID.store(sfx_gettid(), ordering: .releasing)
        var param = sched_param()
        param.sched_priority = realtimePriority
        let result = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param)
        realtimeStatus.store(result == 0 ? 1 : -result, ordering: .releasing)
        if let pcm = device as? PCMCapture { loop(pcm) } else { loop(device) }
        param.sched_priority = 0
        pthread_setschedparam(pthread_self(), SCHED_OTHER, &param)
    }

    /// The real-time loop, specialised per device type.
    private func loop<Device: CaptureDevice>(_ device: Device) {
        let channels = device.parameters.channels
        var previous = Mode(rawValue: mode.load(ordering: .acquiring)) ?? .metering
        var failures = 0
        // A capture stream starts with its first read: until then there is nothing to wait for.
        var running = false
        let rate = Double(device.parameters.sampleRate)
        // When the last read ended, and when the last one before an error did (0: no error since).
        var lastRead: Int64 = 0
        var gapFrom: Int64 = 0
        while !stopRequested.load(ordering: .acquiring) {
            // 1. Wait for a period.
            let ready = running ? device.wait(timeoutMilliseconds: 200) : 1
            if ready == 0 { continue }
            // 2. Read it (recovering from an overrun).
            let got = ready < 0 ? Int(ready) : device.read(into: buffer, frames: periodFrames)
            if got < 0 {
                if got == -Int(EPIPE) { overruns.wrappingAdd(1, ordering: .relaxed) }
                if gapFrom == 0, lastRead != 0 { gapFrom = lastRead }
                failures += 1
                running = false
                if device.recover(Int32(got)) < 0 || failures > 8 {
                    failure.store(Int32(got), ordering: .releasing)
                    return
                }
                continue
            }
            running = true
            failures = 0
            let readAt = Self.monotonicNanoseconds()
            if gapFrom != 0 {
                // What was captured between the two reads, less what this read brought.
                let missed = Int((Double(readAt - gapFrom) * rate / 1e9).rounded()) - got
                if missed > 0, mode.load(ordering: .relaxed) == Mode.recording.rawValue {
                    framesMissed.wrappingAdd(missed, ordering: .relaxed)
                }
                gapFrom = 0
            }
            lastRead = readAt
            framesCaptured.wrappingAdd(got, ordering: .relaxed)
            // 3. Meter it.
            meter.process(buffer, frames: got)
            // 4. Hand it on while recording, fading at a pause and a resume.
            let now = Mode(rawValue: mode.load(ordering: .acquiring)) ?? .metering
            defer { previous = now }
            guard let ring, now == .recording || (now == .paused && previous == .recording) else { continue }
            if now == .paused { fade(frames: got, channels: channels, rising: false) }
            if now == .recording && previous == .paused { fade(frames: got, channels: channels, rising: true) }
            let recorded = framesRecorded.load(ordering: .relaxed)
            let take = min(got, frameLimit - recorded)
            let written = ring.write(buffer, count: take * channels) / channels
            if written < take { framesDropped.wrappingAdd(take - written, ordering: .relaxed) }
            framesRecorded.store(recorded + take, ordering: .releasing)
            if recorded + take >= frameLimit {
                limitReached.store(true, ordering: .releasing)
                mode.store(Mode.metering.rawValue, ordering: .releasing)
            }
        }
    }

    /// CLOCK_MONOTONIC in nanoseconds (the vDSO: no system call, real-time safe).
    private static func monotonicNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// Scales the period by a linear ramp: 0→1 (`rising`) or 1→0 over its frames.
    private func fade(frames: Int, channels: Int, rising: Bool) {
        let step = 1 / Float(frames)
        for f in 0..<frames {
            let ramp = rising ? Float(f) * step : 1 - Float(f + 1) * step
            for c in 0..<channels { buffer[f * channels + c] *= ramp }
        }
    }
}
