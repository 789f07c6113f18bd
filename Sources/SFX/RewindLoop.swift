import Glibc
import SFXCore
import SFXDevice

/// Rewind mode's real-time loop: the device holds a deep buffer (20 ms or more), and a command
/// wakes the thread at once (a wake-up pipe, polled with the device), which rewinds the
/// device to `RewindMode.guardSeconds` ahead of its DAC, restores the mixer as it was there
/// (re-rendering from the newest snapshot before that frame), applies the command, and writes
/// again from there. What was already playing goes on sample for sample: the mixer is a pure
/// function of its state and commands, so the frames written again equal those written first,
/// plus the new voice, exactly as an offline mix with the voice started at that frame.
///
/// Each step, in order: wait for a period of room or a command; start queued commands by
/// rewinding (`startByRewinding`); keep the buffer full, a snapshot before each period
/// (`fill`); commit what the DAC has passed and hand its events on (`commit`). Every command
/// applies to the mixer once: a rewind never goes back before the last command applied, and a
/// snapshot is saved right after it. Stops, volume and pan changes go the same way as plays:
/// one path for every command keeps the order of commands the order of their effects, and a
/// stop or a fade is heard a millisecond after it is asked for too.
///
/// The first rewind, a probe right after the buffer is first filled, checks that the device
/// rewinds at all (`rewindable` > 0) and that its delay dropped by what was rewound (a device
/// that answers a rewind and plays everything written anyway is not rewound again); otherwise
/// the loop ends with `.fallBack` and the engine reopens the device for the classic path.
extension OutputThread {
    func rewindLoop<Device: PlaybackDevice>(_ device: Device, history: RewindHistory) -> Ending {
        setPriority(realtime: true)
        let period = device.parameters.periodFrames
        let bufferFrames = device.parameters.bufferFrames
        let guardFrames = RewindMode.guardFrames(sampleRate: device.parameters.sampleRate)
        let opened = monotonicSeconds()
        let wellPlayedFrames = Int(Double(device.parameters.sampleRate) * FailurePolicy.wellPlayedSeconds)
        var written = 0
        var idle = 0
        var streak = Streak()
        var verified = false
        playedWell = false
        history.commitAll()
        deliverCommitted(history)
        lastCommandFrame = mixer.frameTime
        defer {
            history.commitAll()
            deliverCommitted(history)
        }
        while !stopRequested.load(ordering: .relaxed) {
            let ready = device.wait(timeoutMilliseconds: 200, orUntilReadable: wakeDescriptor)
            if ready < 0 {
                if let ending = failRewinding(device, Int32(ready), &streak, opened: opened, history) { return ending }
                continue
            }
            if ready == 2 { clearWake() }
            if ready == 0 {
                streak.silentWaits += 1
                if streak.silentWaits >= FailurePolicy.maxSilentWaits { return .lost(-ETIMEDOUT) }
            }
            var available = device.available()
            if available < 0 {
                if let ending = failRewinding(device, Int32(available), &streak, opened: opened, history) { return ending }
                continue
            }
            var hadCommands = false
            if verified, commands.count > 0 {
                switch startByRewinding(device, history, guardFrames: guardFrames, probe: false) {
                case .refused(let why): return .fallBack(why)
                case .failed(let code):
                    if let ending = failRewinding(device, code, &streak, opened: opened, history) { return ending }
                    continue
                case .rewound: hadCommands = true
                case .notNow: break
                }
                available = device.available()
                if available < 0 { continue }
            }
            while available >= period {
                if takeCommandsRewinding(history) {
                    hadCommands = true
                    lastCommandFrame = mixer.frameTime
                    lastPlacement.store(mixer.frameTime, ordering: .releasing)
                }
                history.save(mixer)
                mixer.render(into: scratch, frameCount: period)
                postEvents(history)
                let result = device.write(scratch, frames: period)
                if result < 0 {
                    if let ending = failRewinding(device, Int32(result), &streak, opened: opened, history) { return ending }
                    break
                }
                streak = Streak()
                written += period
                framesRendered.wrappingAdd(period, ordering: .relaxed)
                if written >= wellPlayedFrames { playedWell = true }
                available -= period
                idle = (hadCommands || mixer.activeVoiceCount > 0) ? 0 : idle + period
            }
            // The probe, as soon as the buffer is first full: the engine waits for its verdict
            // before it hands itself out (`waitForRewindVerdict`).
            if !verified, written >= bufferFrames {
                switch startByRewinding(device, history, guardFrames: guardFrames, probe: true) {
                case .refused(let why): return .fallBack(why)
                case .failed(let code):
                    if let ending = failRewinding(device, code, &streak, opened: opened, history) { return ending }
                    continue
                case .rewound:
                    verified = true
                    rewindState.store(RewindCode.active, ordering: .releasing)
                case .notNow: break
                }
            }
            activeVoices.store(mixer.activeVoiceCount, ordering: .relaxed)
            commit(device, history)
            if settings.idleFrames > 0, idle >= settings.idleFrames { return .idle }
        }
        return .stopRequested
    }

    enum RewindOutcome {
        case rewound, notNow, failed(Int32), refused(RewindRefusal)
    }

    /// Takes the queued commands and starts them as near the DAC as the device allows: rewinds
    /// to `guardFrames` ahead of it (never before the last command applied), restores the mixer
    /// there, applies the commands and writes again up to where the buffer ended. A `probe`
    /// applies nothing: it only checks that the device rewinds. `.notNow` leaves the commands to
    /// the next period written (nothing rewindable now, or no snapshot that old).
    func startByRewinding<Device: PlaybackDevice>(_ device: Device, _ history: RewindHistory,
                                                  guardFrames: Int, probe: Bool) -> RewindOutcome {
        let end = mixer.frameTime
        let delayBefore = device.delay()
        if delayBefore < 0 { return .failed(Int32(delayBefore)) }
        let rewindable = device.rewindable()
        if rewindable < 0 { return probe ? .refused(.failed(errno: Int32(-rewindable))) : .notNow }
        if rewindable == 0 { return probe ? .refused(.nothingRewindable) : .notNow }
        let target = max(end - (min(rewindable, delayBefore) - guardFrames), lastCommandFrame)
        guard target < end, let snapshot = history.latest(atOrBefore: target),
              history.frame(of: snapshot) >= lastCommandFrame else { return .notNow }
        if !probe, !hasRoomForCommands(history) {
            heldCommandPeriods.wrappingAdd(1, ordering: .relaxed)
            return .notNow
        }
        let rewound = device.rewind(end - target)
        if rewound < 0 { return probe ? .refused(.failed(errno: Int32(-rewound))) : .failed(Int32(rewound)) }
        if rewound == 0 { return .notNow }
        let delayAfter = device.delay()
        if delayAfter < 0 { return .failed(Int32(delayAfter)) }
        // The DAC only moves on: an honest rewind of n frames drops the delay by n or more.
        if delayBefore - delayAfter < rewound - rewound / 4 { return .refused(.ignored) }
        let from = end - rewound
        history.restore(snapshot, into: mixer)
        renderSilently(upTo: from, history)
        if !probe {
            _ = takeCommandsRewinding(history)
            lastCommandFrame = from
            lastPlacement.store(from, ordering: .releasing)
            history.save(mixer)
        }
        var done = from
        while done < end {
            let frames = min(end - done, scratchFrames)
            mixer.render(into: scratch, frameCount: frames)
            postEvents(history)
            let result = device.write(scratch, frames: frames)
            if result < 0 { return .failed(Int32(result)) }
            done += frames
        }
        rewinds.wrappingAdd(1, ordering: .relaxed)
        rewoundFrames.wrappingAdd(rewound, ordering: .relaxed)
        return .rewound
    }

    /// Renders from the restored snapshot up to `frame` without writing: the same samples as the
    /// first time, already in the device; only the mixer's state (and its events) is wanted.
    private func renderSilently(upTo frame: Int, _ history: RewindHistory) {
        while mixer.frameTime < frame {
            mixer.render(into: scratch, frameCount: min(frame - mixer.frameTime, scratchFrames))
            postEvents(history)
        }
    }

    /// The frames before the DAC's position can no longer be rewritten: their events leave.
    /// Anything else released only for frames that can no longer be rewound (a streaming voice's
    /// ring, whose producer may overwrite what the mixer has read) is released here, from
    /// `history.committedState`, never from the live mixer, which has read ahead.
    private func commit<Device: PlaybackDevice>(_ device: Device, _ history: RewindHistory) {
        let delay = device.delay()
        if delay >= 0 { history.commit(upTo: mixer.frameTime - delay) }
        deliverCommitted(history)
    }

    /// Lets out what the committed frames allow: their events, and the frames streaming voices
    /// have read by then (from the oldest snapshot kept; from the live mixer once nothing can be
    /// rewound, after `commitAll`).
    func deliverCommitted(_ history: RewindHistory) {
        history.deliver { event in notices.push(.mixer(event)) }
        (history.committedState ?? mixer).releaseStreams()
    }

    /// Room for every event the commands of one take could cause, in the history and in the
    /// notice ring (see `takeCommands`).
    private func hasRoomForCommands(_ history: RewindHistory) -> Bool {
        history.eventRoom >= noticeReserve && notices.capacity - notices.count >= noticeReserve
    }

    /// `takeCommands` for rewind mode: events go to the history, not straight out.
    private func takeCommandsRewinding(_ history: RewindHistory) -> Bool {
        guard commands.count > 0 else { return false }
        guard hasRoomForCommands(history) else {
            heldCommandPeriods.wrappingAdd(1, ordering: .relaxed)
            return true
        }
        var taken = 0
        while taken < commandBudget {
            let batch = min(OutputThread.eventBatch, commandBudget - taken)
            let applied = mixer.apply(from: commands, limit: batch)
            taken += applied
            postEvents(history)
            guard applied == batch else { break }
        }
        return taken > 0
    }

    @inline(__always)
    private func postEvents(_ history: RewindHistory) {
        let lost = history.post(from: mixer)
        if lost > 0 { lostNotices.wrappingAdd(lost, ordering: .relaxed) }
    }

    /// `fail` for rewind mode: after an xrun the device starts from empty, so nothing written
    /// can be rewound: every event may leave and no snapshot is kept.
    private func failRewinding<Device: PlaybackDevice>(_ device: Device, _ code: Int32, _ streak: inout Streak,
                                                       opened: Double, _ history: RewindHistory) -> Ending? {
        history.commitAll()
        deliverCommitted(history)
        lastCommandFrame = mixer.frameTime
        return fail(device, code, &streak, opened: opened)
    }

    /// Empties the wake-up pipe (into a buffer on the stack).
    private func clearWake() {
        var bytes: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        while withUnsafeMutableBytes(of: &bytes, { read(wakeDescriptor, $0.baseAddress, $0.count) }) == 64 {}
    }
}

/// `OutputThread.rewindState` values.
enum RewindCode {
    static let off = 0
    static let starting = 1
    static let active = 2
    static let nothingRewindable = 3
    static let ignored = 4
    /// Negative: failed with that errno.
}
