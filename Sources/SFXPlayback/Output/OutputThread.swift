import FoundationEssentials
import SFXSystem
import Dispatch
import Glibc
import Synchronization
import CSFXSystem
import SFXCore
import SFXDevice

/// The thread that owns the device and the mixer.
///
/// It is written against `PlaybackDevice` and opens and reopens its device through a
/// `PlaybackDeviceFactory` (ALSA, the null device, or a test's own). While a device is open it
/// runs the real-time loop (`outputLoop`): wait for a period of space, write what an xrun left
/// unwritten, place the queued commands, render and write every free period, hand the mixer's
/// events back — nothing else. How commands are placed, and when their events leave, is a
/// `CommandPlacement`'s: the classic path's takes them at the start of each period rendered
/// (`ClassicPlacement`), rewind mode's starts them by rewinding (`RewindPlacement`); the loop is
/// the same for both. No allocation, lock, log or I/O but the device's happens there; commands
/// arrive and events leave through lock-free rings, and everything it allocates is allocated
/// before it starts. It asks for SCHED_FIFO while it runs that loop and says when it is refused.
/// The loop is specialised for `PCMPlayback` and `NullPlaybackDevice`, and for each placement:
/// no witness-table lookup, reference counting or exclusivity check in it (the release build
/// merges the two specialisations into one body that calls the device's methods through
/// function pointers); other devices run the same loop through the protocol.
///
/// When the device disappears it drops to normal priority, closes it, runs the same loop on a
/// `NullPlaybackDevice` with the classic placement (the null device consumes by the clock, so
/// voices end and completions still arrive) and tries to reopen it through the factory, waiting
/// 0.25 s, then twice as long after each failed try, up to 1 s. A device that keeps failing
/// counts as lost too: a sound server that went away can leave its ALSA plugin answering every
/// write with EPIPE while `snd_pcm_recover` reports success, and a SCHED_FIFO thread retrying
/// that at once would take a whole core and starve the machine (`FailurePolicy`). With an idle
/// timeout it closes the device when nothing has played for that long and sleeps until the next
/// command.
///
/// In rewind mode (`Settings.rewind`, the engine's default) the device has a deep buffer and a
/// command wakes the thread at once through `kick()`; `RewindPlacement` starts it a millisecond
/// ahead of the DAC by rewinding. A device that cannot rewind, or only pretends to, ends the loop
/// with `.fallBack`: the thread reopens it with the classic request and runs the loop with the
/// classic placement for the rest of the session (`rewindState` says which and why).
final class OutputThread: @unchecked Sendable {
    struct Settings {
        var request: PlaybackRequest
        /// Opens the device again after it was lost or closed while idle.
        var devices: any PlaybackDeviceFactory = SystemPlaybackDevices()
        var realtimePriority: Int32
        /// Frames of silence after which the device is closed; 0 keeps it open.
        var idleFrames: Int
        /// Rewind mode: open devices with `RewindMode.request(for: request)` and start commands
        /// by rewinding when the device can.
        var rewind = false
    }

    let mixer: Mixer
    let commands: SPSCRing<MixerCommand>
    let notices: SPSCRing<OutputNotice>
    let settings: Settings

    /// Counters the engine reads for its metrics.
    let xruns = Atomic<Int>(0)
    /// Xruns within `FailurePolicy.startupSeconds` of the device's (re)opening: a sound server's
    /// stream often runs dry while the server settles, which says nothing of steady playback.
    let startupXruns = Atomic<Int>(0)
    let framesRendered = Atomic<Int>(0)
    let activeVoices = Atomic<Int>(0)
    let virtualVoices = Atomic<Int>(0)
    /// Reports the delivery thread could not take in time (its ring was full); should stay 0.
    let lostNotices = Atomic<Int>(0)
    /// Periods in which queued commands waited because the notice ring lacked `noticeReserve`.
    let heldCommandPeriods = Atomic<Int>(0)
    /// 1 while the device is open and playing, 0 while lost or idle.
    let deviceOpen = Atomic<Int>(0)
    /// True from a device failure until the device is back.
    let deviceLost = Atomic<Bool>(false)
    /// The device's delay (`snd_pcm_delay`) as last read while it played, in frames: what sfx
    /// queued and what the device, or the sound server behind a plugin, holds after it; -1
    /// while no device plays.
    let outputDelayFrames = Atomic<Int>(-1)
    /// The DAC's frame at a CLOCK_MONOTONIC instant, for `EngineClock`, read with the delay.
    let clockAnchor = ClockAnchor()
    /// How often the loop reads the delay (seconds).
    static let delayReadInterval = 0.05
    /// Set when a card that may be the device has appeared (`retrySoon`): the next try to open
    /// it comes at once rather than after the back-off.
    let retryRequested = Atomic<Bool>(false)
    let stopRequested = Atomic<Bool>(false)
    /// Whether a stop lets the device play what it holds (drain) or drops it.
    let drainOnStop = Atomic<Bool>(true)
    /// Woken by producers when a command is queued while the device is closed for idleness.
    let wake = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)

    /// 1 once SCHED_FIFO was granted, -errno once refused, 0 before the first try.
    let realtimeStatus = Atomic<Int32>(0)

    /// Rewind mode: a `RewindCode`, or -errno when rewinding failed.
    let rewindState = Atomic<Int>(RewindCode.off)
    /// Rewinds done, and the frames they took back.
    let rewinds = Atomic<Int>(0)
    let rewoundFrames = Atomic<Int>(0)
    /// The device pointer's granularity in frames, measured at the last probe (0 before).
    let pointerGranularity = Atomic<Int>(0)
    /// Whether the device's delay followed its DAC frame by frame at the last probe: rewinds then
    /// need no slack for the pointer's granularity.
    let delayFollowsDAC = Atomic<Bool>(false)
    /// The mixer frame at which the last commands started by rewinding were applied.
    let lastPlacement = Atomic<Int>(-1)
    /// The mixer frame the device now open started at (its frame 0): a device reopened after the
    /// probe found a coarse pointer starts where the mixer was then.
    let deviceStartFrame = Atomic<Int>(0)
    /// Whether producers must wake the thread (`kick`) for each command.
    let wantsKicks = Atomic<Bool>(false)
    /// The read end of a pipe a command makes readable (`kick`), polled with the device in
    /// rewind mode; `kickDescriptor` is its write end. Both non-blocking and close-on-exec.
    let wakeDescriptor: Int32
    private let kickDescriptor: Int32
    /// Rewind mode's snapshots and held events (nil when rewind mode is off).
    let history: RewindHistory?
    /// Rewind mode is on for this session (false after a fall-back). Output thread only.
    var rewindEnabled: Bool
    /// The kernel's id of the output thread (for `chrt -p`, `top -H`), 0 before it runs.
    let threadID = Atomic<Int32>(0)

    /// The format the mixer renders in; a reopened device must offer the same.
    private let parameters: PlaybackParameters
    private let parametersLock = Mutex<PlaybackParameters?>(nil)

    private var device: (any PlaybackDevice)?
    /// Plays by the clock while the device is lost.
    private let standIn: NullPlaybackDevice
    let scratch: UnsafeMutablePointer<Float>
    let scratchFrames: Int
    /// Frames the mixer rendered that the device did not take: an xrun or a suspend came in the
    /// middle of a write. They are written first once the device is recovered (or the next one
    /// opened), so an xrun costs a gap in time, never a piece of the sound: what was rendered is
    /// heard, in order (a stream does not jump ahead by the frames of a failed write). Rewind
    /// mode counts on it: the mixer's frame is the device's end of the buffer. Allocated with
    /// `scratch`; output thread only.
    private let unwritten: UnsafeMutablePointer<Float>
    private var unwrittenFrames = 0
    /// Commands taken in one period at most (see `commandBudget(periodFrames:)`).
    let commandBudget: Int
    /// Free room the notice ring must have before commands are taken (see
    /// `ClassicPlacement.beforePeriod`).
    let noticeReserve: Int

    /// `device` nil: the engine opened without its device (`NoDevicePolicy`); the thread starts
    /// as after a loss, mixing by the clock at `parameters` (`PlaybackParameters.awaited`) and
    /// trying the device until it opens.
    init(device: (any PlaybackDevice)?, parameters: PlaybackParameters, mixer: Mixer, commands: SPSCRing<MixerCommand>,
         notices: SPSCRing<OutputNotice>, settings: Settings, commandBudget: Int, noticeReserve: Int) {
        self.device = device
        self.commandBudget = commandBudget
        self.noticeReserve = noticeReserve
        self.mixer = mixer
        self.commands = commands
        self.notices = notices
        self.settings = settings
        self.parameters = parameters
        if device == nil {
            deviceLost.store(true, ordering: .relaxed)
            parametersLock.withLock { $0 = parameters }
        }
        scratchFrames = max(parameters.bufferFrames, 4096)
        scratch = .allocate(capacity: scratchFrames * parameters.channels)
        scratch.initialize(repeating: 0, count: scratchFrames * parameters.channels)
        unwritten = .allocate(capacity: scratchFrames * parameters.channels)
        unwritten.initialize(repeating: 0, count: scratchFrames * parameters.channels)
        standIn = Self.standIn(for: parameters, scratchFrames: scratchFrames)
        (wakeDescriptor, kickDescriptor) = Self.wakePipe()
        rewindEnabled = settings.rewind && wakeDescriptor >= 0
        history = rewindEnabled ? RewindHistory(mixer: mixer, snapshots: 64, events: 4 * noticeReserve) : nil
        rewindState.store(rewindEnabled ? RewindCode.starting : RewindCode.off, ordering: .releasing)
        wantsKicks.store(rewindEnabled, ordering: .releasing)
    }

    /// Wakes the thread in rewind mode so that a command starts at once; any thread may call it
    /// (one write of a byte to a pipe; a full pipe is readable already).
    func kick() {
        var one: UInt8 = 1
        _ = write(kickDescriptor, &one, 1)
    }

    private static func wakePipe() -> (Int32, Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return (-1, -1) }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        return (ends[0], ends[1])
    }

    /// A null device in the mixer's format, with periods of 10 ms or the device's when longer
    /// (nobody listens while the device is lost: no need to wake more often), three to a buffer.
    private static func standIn(for parameters: PlaybackParameters, scratchFrames: Int) -> NullPlaybackDevice {
        let period = min(max(parameters.periodFrames, parameters.sampleRate / 100, PlaybackRequest.periodSizes.lowerBound),
                         scratchFrames, PlaybackRequest.periodSizes.upperBound)
        let request = PlaybackRequest(device: NullPlaybackDevice.name, sampleRate: parameters.sampleRate,
                                      channels: parameters.channels, periodFrames: period, periodCount: 3)
        // The numbers come from a device that opened, within PlaybackRequest's ranges.
        guard let device = try? NullPlaybackDevice(request) else {
            fatalError("the null device refused \(parameters)")
        }
        return device
    }

    deinit {
        scratch.deallocate()
        unwritten.deallocate()
        if wakeDescriptor >= 0 { Glibc.close(wakeDescriptor) }
        if kickDescriptor >= 0 { Glibc.close(kickDescriptor) }
    }

    /// The parameters of the device as last opened.
    var currentParameters: PlaybackParameters { parametersLock.withLock { $0 } ?? parameters }

    func start() {
        Threads.start(name: "sfx-output", stackSize: 1 << 20) { [self] in
            run()
        }
    }

    /// A card that may be the device has appeared (a hot-plug watcher says so): without a device,
    /// the thread tries it at once, and from the first wait again after a failure. Any thread.
    func retrySoon() {
        guard deviceLost.load(ordering: .acquiring) else { return }
        retryRequested.store(true, ordering: .releasing)
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
            if let device {
                deviceOpen.store(1, ordering: .releasing)
                let ending = play(device)
                deviceOpen.store(0, ordering: .releasing)
                setPriority(realtime: false)
                switch ending {
                case .stopRequested, .timeUp:   // (.timeUp ends only the stand-in's runs)
                    drainOnStop.load(ordering: .relaxed) ? device.drain() : device.drop()
                    device.close()
                    self.device = nil
                    return
                case .lost(let code):
                    device.drop()
                    device.close()
                    self.device = nil
                    // A device that failed again soon after reopening keeps the longer wait.
                    if playedWell { retryDelay = FailurePolicy.firstRetry }
                    if !deviceLost.exchange(true, ordering: .acquiringAndReleasing) { notify(.deviceLost(code)) }
                case .idle:
                    device.close()
                    self.device = nil
                    notify(.closedWhenIdle)
                    sleepUntilCommand()
                    reopen(announce: false)
                case .fallBack(let why):
                    rewindEnabled = false
                    wantsKicks.store(false, ordering: .relaxed)
                    device.drop()
                    device.close()
                    self.device = nil
                    reopen(announce: false)
                    // Said once the classic device is open: the engine waits for this verdict.
                    rewindState.store(Self.code(why), ordering: .releasing)
                }
            } else {
                playByClock(for: retryDelay)
                // A try a watcher asked for that failed (the card's nodes not yet usable) is
                // followed by the first wait again, not a longer one.
                if !reopen(announce: true) { retryDelay = retriedEarly ? FailurePolicy.firstRetry : min(retryDelay * 2, FailurePolicy.maxRetry) }
                retriedEarly = false
            }
        }
        device = nil
    }

    enum Ending { case stopRequested, lost(Int32), idle, timeUp, fallBack(RewindRefusal) }

    private static func code(_ refusal: RewindRefusal) -> Int {
        switch refusal {
        case .nothingRewindable: RewindCode.nothingRewindable
        case .ignored: RewindCode.ignored
        case .failed(let code): -Int(code)
        }
    }

    /// Runs the real-time loop on `device` with rewind mode's placement while it is on and the
    /// device says it may rewind, the classic one otherwise.
    private func play(_ device: any PlaybackDevice) -> Ending {
        deviceStartFrame.store(mixer.frameTime, ordering: .releasing)
        if rewindEnabled, !device.canRewind {
            // A device that says it cannot rewind plays on the classic path as it was opened.
            rewindEnabled = false
            wantsKicks.store(false, ordering: .relaxed)
            rewindState.store(RewindCode.nothingRewindable, ordering: .releasing)
        }
        if rewindEnabled, let history {
            var rewind = RewindPlacement(self, history: history, parameters: device.parameters)
            return play(device, &rewind)
        }
        var classic = ClassicPlacement(self)
        return play(device, &classic)
    }

    /// The loop specialised for the devices sfx has.
    private func play<Placement: CommandPlacement>(_ device: any PlaybackDevice, _ placement: inout Placement) -> Ending {
        if let alsa = device as? PCMPlayback { return outputLoop(alsa, &placement) }
        if let null = device as? NullPlaybackDevice { return outputLoop(null, &placement) }
        return outputLoop(device, &placement)
    }

    /// When failures mean the device is gone, and how often to try it again.
    enum FailurePolicy {
        /// Errors in a row, without a period written between them, after which the device is lost.
        static let maxConsecutiveFailures = 8
        /// Or this long failing without a period written (seconds).
        static let maxFailingSeconds = 0.25
        /// Waits for space that time out in a row (200 ms each) before the device is lost: a
        /// stream that takes nothing for that long is not playing.
        static let maxSilentWaits = 2
        /// The first wait before reopening a lost device, doubled after each failed try up to `maxRetry` (seconds).
        static let firstRetry = 0.25
        static let maxRetry = 1.0
        /// A device that played this long after opening resets the wait to `firstRetry` (seconds).
        static let wellPlayedSeconds = 2.0
        /// Xruns this soon after (re)opening count as start-up xruns too (seconds).
        static let startupSeconds = 0.2
    }

    /// The wait before the next reopening (ordinary thread state, output thread only).
    private var retryDelay = FailurePolicy.firstRetry
    /// The last wait was cut short by `retrySoon` (output thread only).
    private var retriedEarly = false
    /// Whether the device last open played `wellPlayedSeconds` before it ended.
    var playedWell = false

    /// The current failure streak of the real-time loop.
    struct Streak {
        var failures = 0
        var since = 0.0
        var silentWaits = 0
    }

    /// The real-time loop, on either path: `placement` says how queued commands are placed and
    /// when their events leave (`ClassicPlacement`, `RewindPlacement`); the rest is the same.
    /// Runs until asked to stop, the device fails (an error it cannot recover, or errors that
    /// keep coming: `FailurePolicy`), it has been idle, or the placement ends it (rewind mode's
    /// `.fallBack`). With a `deadline` (CLOCK_MONOTONIC seconds) it runs at normal priority until
    /// then and never idles: how the stand-in plays while the device is lost.
    func outputLoop<Device: PlaybackDevice, Placement: CommandPlacement>(
        _ device: Device, _ placement: inout Placement, until deadline: Double = .infinity) -> Ending {
        let byClock = deadline < .infinity
        if !byClock { setPriority(realtime: true); playedWell = false }
        let period = device.parameters.periodFrames
        let opened = monotonicSeconds()
        let wellPlayedFrames = Int(Double(device.parameters.sampleRate) * FailurePolicy.wellPlayedSeconds)
        var written = 0, idle = 0, streak = Streak()
        var nextDelayRead = 0.0
        placement.commitAll()
        defer {
            placement.commitAll()
            if !byClock { outputDelayFrames.store(-1, ordering: .relaxed) }
        }
        while !stopRequested.load(ordering: .relaxed) {
            // Wait for room (or a command); the room, less what an xrun left, which goes first.
            let ready = placement.wait(device)
            if ready == 0 {
                streak.silentWaits += 1
                if streak.silentWaits >= FailurePolicy.maxSilentWaits { return .lost(-ETIMEDOUT) }
            }
            var available = ready < 0 ? Int(ready) : device.available()
            if available >= 0 { let kept = writeUnwritten(device); available = kept < 0 ? kept : available - kept }
            // Commands placed before the fill (rewind mode: by rewinding).
            let placed = available < 0 ? .failed(Int32(available)) : placement.place(device, available: &available)
            guard case .goOn = placed else {
                if let ending = settle(placed, device, &streak, opened, &placement) { return ending }
                continue
            }
            // Every free period: the placement's step, the render, its events, the write.
            while available >= period {
                placement.beforePeriod()
                mixer.render(into: scratch, frameCount: period)
                placement.rendered()
                clockAnchor.mixedFrame.store(mixer.frameTime, ordering: .relaxed)
                framesRendered.wrappingAdd(period, ordering: .relaxed)
                let result = writeScratch(device, frames: period)
                if result < 0 {
                    if let ending = fail(device, Int32(result), &streak, opened, &placement) { return ending }
                    break
                }
                streak = Streak()
                written += period
                available -= period
                if written >= wellPlayedFrames, !byClock { playedWell = true }
                idle = (placement.busy || mixer.activeVoiceCount > 0 || mixer.effectsSounding) ? 0 : idle + period
            }
            activeVoices.store(mixer.activeVoiceCount, ordering: .relaxed)
            clockAnchor.mixedFrame.store(mixer.frameTime, ordering: .relaxed)   // after a rewind too
            virtualVoices.store(mixer.virtualVoiceCount, ordering: .relaxed)
            // Rewind mode's probe, and the events of what the DAC passed.
            let filled = placement.filled(device, written: written)
            guard case .goOn = filled else {
                if let ending = settle(filled, device, &streak, opened, &placement) { return ending }
                continue
            }
            if byClock {
                if monotonicSeconds() >= deadline { return .timeUp }
                if retryRequested.exchange(false, ordering: .acquiringAndReleasing) {
                    retriedEarly = true
                    return .timeUp
                }
            } else {
                // The output's latency as the device (or the server) says, now and then.
                let now = monotonicSeconds()
                if now >= nextDelayRead, written > 0 {
                    let delay = device.delay()
                    if delay >= 0 {
                        outputDelayFrames.store(delay, ordering: .relaxed)
                        publishClock(delay: delay)
                    }
                    nextDelayRead = now + Self.delayReadInterval
                }
                if settings.idleFrames > 0, idle >= settings.idleFrames { return .idle }
            }
        }
        return .stopRequested
    }

    /// What a placement's step other than `.goOn` means to the loop: its end, a failure (`fail`),
    /// or nothing (nil: wait again).
    @inline(__always)
    private func settle<Device: PlaybackDevice, Placement: CommandPlacement>(
        _ step: PlacementStep, _ device: Device, _ streak: inout Streak, _ opened: Double,
        _ placement: inout Placement) -> Ending? {
        switch step {
        case .goOn, .waitAgain: nil
        case .end(let ending): ending
        case .failed(let code): fail(device, code, &streak, opened, &placement)
        }
    }

    /// Handles a negative errno from the device, every failure of the loop: the placement first
    /// lets go of what it could have written again (`commitAll`: rewind mode's events may all
    /// leave); then an xrun or a suspend is recovered and counted (once per streak of errors, so
    /// a failing device cannot flood the event ring); anything else, or errors that keep coming
    /// without a period written (`FailurePolicy`), ends the loop as a lost device.
    func fail<Device: PlaybackDevice, Placement: CommandPlacement>(
        _ device: Device, _ code: Int32, _ streak: inout Streak, _ opened: Double, _ placement: inout Placement) -> Ending? {
        placement.commitAll()
        let now = monotonicSeconds()
        streak.failures += 1
        if streak.failures == 1 {
            streak.since = now
            if code == -EPIPE {
                xruns.wrappingAdd(1, ordering: .relaxed)
                if now - opened < FailurePolicy.startupSeconds { startupXruns.wrappingAdd(1, ordering: .relaxed) }
                _ = notices.push(.xrun)
            }
        } else if streak.failures >= FailurePolicy.maxConsecutiveFailures
                    || now - streak.since >= FailurePolicy.maxFailingSeconds {
            return .lost(code)
        }
        return recover(device, code)
    }

    /// Recovers from an xrun or a suspend; anything else ends the loop as a lost device.
    private func recover<Device: PlaybackDevice>(_ device: Device, _ code: Int32) -> Ending? {
        if code == -EPIPE || code == -ESTRPIPE || code == -EINTR {
            if device.recover(code) >= 0 { return nil }
        }
        return .lost(code)
    }

    /// Writes the first `frames` frames of `scratch`: 0, or the negative errno that stopped the
    /// write, what the device did not take then kept in `unwritten`.
    @inline(__always)
    func writeScratch<Device: PlaybackDevice>(_ device: Device, frames: Int) -> Int {
        let channels = parameters.channels
        var done = 0
        while done < frames {
            let result = device.write(scratch + done * channels, frames: frames - done)
            if result <= 0 {
                let kept = min(frames - done, scratchFrames - unwrittenFrames)
                (unwritten + unwrittenFrames * channels).update(from: scratch + done * channels, count: kept * channels)
                unwrittenFrames += kept
                return result < 0 ? result : -Int(EIO)
            }
            done += result
        }
        return 0
    }

    /// Writes what a failed write left (`writeScratch`), before anything newer: the first write
    /// to a device recovered or opened since. Returns the frames written (0 when none were left)
    /// or the negative errno of a device that fails again, which counts in the failure streak
    /// like any write; what it did not take is still kept.
    func writeUnwritten<Device: PlaybackDevice>(_ device: Device) -> Int {
        guard unwrittenFrames > 0 else { return 0 }
        let channels = parameters.channels
        var done = 0
        var failure = 0
        while done < unwrittenFrames {
            let result = device.write(unwritten + done * channels, frames: unwrittenFrames - done)
            if result <= 0 { failure = result < 0 ? result : -Int(EIO); break }
            done += result
        }
        let left = unwrittenFrames - done
        if left > 0, done > 0 { unwritten.update(from: unwritten + done * channels, count: left * channels) }
        unwrittenFrames = left
        return left > 0 ? failure : done
    }

    /// Publishes where the DAC is (`clockAnchor`): the frame `delay` frames before the end of
    /// what the device holds (the mixer's frame, less what a failed write left), now.
    @inline(__always)
    private func publishClock(delay: Int) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        clockAnchor.publish(dacFrame: mixer.frameTime - unwrittenFrames - delay,
                            nanoseconds: Int(now.tv_sec) * 1_000_000_000 + Int(now.tv_nsec))
    }

    /// CLOCK_MONOTONIC in seconds (a vDSO call: no system call, no allocation).
    @inline(__always)
    func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
    }

    // MARK: Without a device (ordinary priority)

    /// Plays on the null device for `seconds`, so voices end and report as if played.
    private func playByClock(for seconds: Double) {
        var classic = ClassicPlacement(self)
        _ = outputLoop(standIn, &classic, until: monotonicSeconds() + seconds)
        standIn.drop()
    }

    private func sleepUntilCommand() {
        while !stopRequested.load(ordering: .acquiring), commands.count == 0 {
            // Rewind mode's last events may not all have fitted in the notice ring when the
            // device closed: keep handing them over while asleep, or their completions never come.
            var waiting = false
            if let history {
                deliverCommitted(history)
                waiting = history.hasUndelivered
            }
            _ = wake.wait(timeout: .now() + (waiting ? 0.01 : 1))
        }
    }

    /// Opens the device again with the format the mixer renders in; returns whether it did.
    @discardableResult
    private func reopen(announce: Bool) -> Bool {
        guard !stopRequested.load(ordering: .acquiring) else { return false }
        var request = !rewindEnabled ? settings.request
            : RewindMode.coarseRequest(for: settings.request)
        request.sampleRate = parameters.sampleRate
        request.channels = parameters.channels
        guard let reopened = try? settings.devices.open(request) else { return false }
        guard reopened.parameters.sampleRate == parameters.sampleRate,
              reopened.parameters.channels == parameters.channels,
              reopened.parameters.bufferFrames <= scratchFrames else {
            reopened.close()
            return false
        }
        device = reopened
        parametersLock.withLock { $0 = reopened.parameters }
        if deviceLost.exchange(false, ordering: .acquiringAndReleasing), announce { notify(.deviceRestored) }
        return true
    }

    private func notify(_ notice: OutputNotice) {
        _ = notices.push(notice)
    }

    func setPriority(realtime: Bool) {
        var param = sched_param()
        param.sched_priority = realtime ? settings.realtimePriority : 0
        let policy = realtime ? SCHED_FIFO : SCHED_OTHER
        let result = pthread_setschedparam(pthread_self(), policy, &param)
        if realtime, realtimeStatus.load(ordering: .relaxed) == 0 {
            realtimeStatus.store(result == 0 ? 1 : -result, ordering: .releasing)
        }
    }
}
