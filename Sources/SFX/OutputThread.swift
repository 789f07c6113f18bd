import Foundation
import Glibc
import Synchronization
import CSFXSystem
import SFXCore
import SFXDevice

/// The thread that owns the device and the mixer.
///
/// While a device is open it runs the real-time loop: wait for one period of space, take every
/// queued command, render one period, write it, hand the mixer's events back — nothing else.
/// No allocation, lock, log or I/O but ALSA's happens there; commands arrive and events leave
/// through lock-free rings, and everything it allocates is allocated before it starts. It asks for
/// SCHED_FIFO while it runs that loop and says when it is refused.
///
/// When the device disappears it drops to normal priority, keeps rendering the mixer by the
/// clock (so voices end and completions still arrive) and tries to reopen the device twice a
/// second. With an idle timeout it closes the device when nothing has played for that long and
/// sleeps until the next command.
final class OutputThread: @unchecked Sendable {
    struct Settings {
        var request: PlaybackRequest
        var realtimePriority: Int32
        /// Frames of silence after which the device is closed; 0 keeps it open.
        var idleFrames: Int
    }

    let mixer: Mixer
    let commands: SPSCRing<MixerCommand>
    let notices: SPSCRing<OutputNotice>
    let settings: Settings

    /// Counters the engine reads for its metrics.
    let xruns = Atomic<Int>(0)
    let framesRendered = Atomic<Int>(0)
    let activeVoices = Atomic<Int>(0)
    /// Reports the delivery thread could not take in time (its ring was full); should stay 0.
    let lostNotices = Atomic<Int>(0)
    /// Periods in which queued commands waited because the notice ring lacked `noticeReserve`.
    let heldCommandPeriods = Atomic<Int>(0)
    /// 1 while the device is open and playing, 0 while lost or idle.
    let deviceOpen = Atomic<Int>(0)
    /// True from a device failure until the device is back.
    let deviceLost = Atomic<Bool>(false)
    let stopRequested = Atomic<Bool>(false)
    /// Whether a stop lets the device play what it holds (drain) or drops it.
    let drainOnStop = Atomic<Bool>(true)
    /// Woken by producers when a command is queued while the device is closed for idleness.
    let wake = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)

    /// 1 once SCHED_FIFO was granted, -errno once refused, 0 before the first try.
    let realtimeStatus = Atomic<Int32>(0)
    /// The kernel's id of the output thread (for `chrt -p`, `top -H`), 0 before it runs.
    let threadID = Atomic<Int32>(0)

    /// The format the mixer renders in; a reopened device must offer the same.
    private let parameters: PlaybackParameters
    private let parametersLock = Mutex<PlaybackParameters?>(nil)

    private var pcm: PCMPlayback?
    private let scratch: UnsafeMutablePointer<Float>
    private let scratchFrames: Int
    /// Commands taken in one period at most (see `commandBudget(periodFrames:)`).
    let commandBudget: Int
    /// Free room the notice ring must have before commands are taken (see `takeCommands`).
    private let noticeReserve: Int

    init(pcm: PCMPlayback, mixer: Mixer, commands: SPSCRing<MixerCommand>, notices: SPSCRing<OutputNotice>,
         settings: Settings, commandBudget: Int, noticeReserve: Int) {
        self.pcm = pcm
        self.commandBudget = commandBudget
        self.noticeReserve = noticeReserve
        self.mixer = mixer
        self.commands = commands
        self.notices = notices
        self.settings = settings
        parameters = pcm.parameters
        scratchFrames = max(pcm.parameters.bufferFrames, 4096)
        scratch = .allocate(capacity: scratchFrames * pcm.parameters.channels)
        scratch.initialize(repeating: 0, count: scratchFrames * pcm.parameters.channels)
    }

    deinit { scratch.deallocate() }

    /// The parameters of the device as last opened.
    var currentParameters: PlaybackParameters { parametersLock.withLock { $0 } ?? parameters }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "sfx-output"
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Asks the thread to stop, waits for it, and closes the device, first letting it play what
    /// it holds when `drain` is true.
    func stop(drain: Bool) {
        drainOnStop.store(drain, ordering: .relaxed)
        stopRequested.store(true, ordering: .releasing)
        wake.signal()
        finished.wait()
    }

    // MARK: The thread

    private func run() {
        defer { finished.signal() }
        threadID.store(sfx_gettid(), ordering: .releasing)
        while !stopRequested.load(ordering: .acquiring) {
            if let pcm {
                deviceOpen.store(1, ordering: .releasing)
                let ending = realtimeLoop(pcm)
                deviceOpen.store(0, ordering: .releasing)
                setPriority(realtime: false)
                switch ending {
                case .stopRequested:
                    drainOnStop.load(ordering: .relaxed) ? pcm.drain() : pcm.drop()
                    self.pcm = nil
                    return
                case .lost(let code):
                    self.pcm = nil
                    deviceLost.store(true, ordering: .releasing)
                    notify(.deviceLost(code))
                case .idle:
                    self.pcm = nil
                    notify(.closedWhenIdle)
                    sleepUntilCommand()
                    reopen(announce: false)
                }
            } else {
                renderByClock(for: 0.5)
                reopen(announce: true)
            }
        }
        pcm = nil
    }

    private enum Ending { case stopRequested, lost(Int32), idle }

    /// The real-time loop. Runs until asked to stop, the device fails, or it has been idle.
    private func realtimeLoop(_ pcm: PCMPlayback) -> Ending {
        setPriority(realtime: true)
        let period = pcm.parameters.periodFrames
        var idle = 0
        while !stopRequested.load(ordering: .relaxed) {
            let ready = pcm.wait(timeoutMilliseconds: 200)
            if ready < 0 {
                if let ending = recover(pcm, Int32(ready)) { return ending }
                continue
            }
            var available = pcm.available()
            if available < 0 {
                if let ending = recover(pcm, Int32(available)) { return ending }
                continue
            }
            while available >= period {
                let hadCommands = takeCommands()
                renderPeriod(frames: period)
                let written = pcm.write(scratch, frames: period)
                if written < 0 {
                    if let ending = recover(pcm, Int32(written)) { return ending }
                    break
                }
                available -= period
                idle = (hadCommands || mixer.activeVoiceCount > 0) ? 0 : idle + period
            }
            if settings.idleFrames > 0, idle >= settings.idleFrames { return .idle }
        }
        return .stopRequested
    }

    /// Applies up to `commandBudget` queued commands, oldest first; the rest wait for the next
    /// period, in order. Returns whether any command was taken or is waiting. A burst of plays
    /// can end (steal, reject) more voices than the mixer's event buffer holds, so events are
    /// handed on every `eventBatch` commands.
    ///
    /// No completion is ever lost: commands are taken only while the notice ring has room for
    /// every event that could follow before the next take (`noticeReserve`); otherwise they wait
    /// in the command ring and the period is counted in `heldCommandPeriods`.
    @inline(__always)
    private func takeCommands() -> Bool {
        guard notices.capacity - notices.count >= noticeReserve else {
            heldCommandPeriods.wrappingAdd(1, ordering: .relaxed)
            return commands.count > 0
        }
        var taken = 0
        while taken < commandBudget {
            let batch = min(OutputThread.eventBatch, commandBudget - taken)
            let applied = mixer.apply(from: commands, limit: batch)
            taken += applied
            guard applied == batch else { break }
            handOverEvents()
        }
        return taken > 0
    }

    /// Commands applied in one period at most: two per frame of the period (at least 32, at
    /// most 4,096), so the work they add is the same share of any period. In the release build
    /// a play costs about 0.3 µs when every voice is busy and it must steal (the costliest kind,
    /// a scan of the voices): 256 plays and the render of a 128-frame period (2.67 ms at 48 kHz)
    /// took 85 µs (median) and 214 µs (worst of 510 periods) under SCHED_FIFO; taking a burst of
    /// 8,000 at once took up to 2.4 ms, nearly the whole period (`sfx-bench --burst`). A larger
    /// burst starts over the following periods, in order: 96,000 commands a second at 48 kHz.
    static func commandBudget(periodFrames: Int) -> Int { min(4096, max(32, 2 * periodFrames)) }

    static let eventBatch = 128

    /// The room the notice ring keeps for what can follow one take of commands before the next:
    /// every voice sounding can end and each command can end or reject a voice and release a
    /// cue (and each voice being released can release its cue), plus a margin for xrun and
    /// device notices.
    static func noticeReserve(slots: Int, commandBudget: Int) -> Int { 2 * (slots + commandBudget) + 64 }

    @inline(__always)
    private func renderPeriod(frames: Int) {
        mixer.render(into: scratch, frameCount: frames)
        handOverEvents()
        framesRendered.wrappingAdd(frames, ordering: .relaxed)
        activeVoices.store(mixer.activeVoiceCount, ordering: .relaxed)
    }

    @inline(__always)
    private func handOverEvents() {
        mixer.drainEvents { event, _ in
            if !notices.push(.mixer(event)) { lostNotices.wrappingAdd(1, ordering: .relaxed) }
        }
    }

    /// Handles a negative errno from the device: an xrun or a suspend is recovered and counted;
    /// anything else ends the loop as a lost device.
    private func recover(_ pcm: PCMPlayback, _ code: Int32) -> Ending? {
        if code == -EPIPE || code == -ESTRPIPE || code == -EINTR {
            if code == -EPIPE {
                xruns.wrappingAdd(1, ordering: .relaxed)
                _ = notices.push(.xrun)
            }
            if pcm.recover(code) >= 0 { return nil }
        }
        return .lost(code)
    }

    // MARK: Without a device (ordinary priority)

    /// Keeps the mixer running by the clock for `seconds`, so voices end and report as if played.
    private func renderByClock(for seconds: Double) {
        let rate = Double(parameters.sampleRate)
        let step = 0.01
        var elapsed = 0.0
        while elapsed < seconds, !stopRequested.load(ordering: .relaxed) {
            usleep(UInt32(step * 1_000_000))
            elapsed += step
            _ = takeCommands()
            var frames = Int(rate * step)
            while frames > 0 {
                let chunk = min(frames, scratchFrames)
                renderPeriod(frames: chunk)
                frames -= chunk
            }
        }
    }

    private func sleepUntilCommand() {
        while !stopRequested.load(ordering: .acquiring), commands.count == 0 {
            _ = wake.wait(timeout: .now() + 1)
        }
    }

    private func reopen(announce: Bool) {
        guard !stopRequested.load(ordering: .acquiring) else { return }
        var request = settings.request
        request.sampleRate = parameters.sampleRate
        request.channels = parameters.channels
        guard let reopened = try? PCMPlayback(request) else { return }
        guard reopened.parameters.sampleRate == parameters.sampleRate,
              reopened.parameters.channels == parameters.channels,
              reopened.parameters.bufferFrames <= scratchFrames else { return }
        pcm = reopened
        deviceLost.store(false, ordering: .releasing)
        parametersLock.withLock { $0 = reopened.parameters }
        if announce { notify(.deviceRestored) }
    }

    private func notify(_ notice: OutputNotice) {
        _ = notices.push(notice)
    }

    private func setPriority(realtime: Bool) {
        var param = sched_param()
        param.sched_priority = realtime ? settings.realtimePriority : 0
        let policy = realtime ? SCHED_FIFO : SCHED_OTHER
        let result = pthread_setschedparam(pthread_self(), policy, &param)
        if realtime, realtimeStatus.load(ordering: .relaxed) == 0 {
            realtimeStatus.store(result == 0 ? 1 : -result, ordering: .releasing)
        }
    }
}
