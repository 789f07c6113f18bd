import Glibc
import SFXCore
import SFXDevice

/// Rewind mode's way of placing commands: the device holds a deep buffer (20 ms or more), and a
/// command wakes the thread at once (a wake-up pipe, polled with the device), which rewinds the
/// device to `RewindMode.guardSeconds` ahead of its DAC, restores the mixer as it was there
/// (re-rendering from the newest snapshot before that frame), applies the command, and writes
/// again from there. What was already playing goes on sample for sample: the mixer is a pure
/// function of its state and commands, so the frames written again equal those written first,
/// plus the new voice, exactly as an offline mix with the voice started at that frame.
///
/// Its steps in the output loop, in order: wait for a period of room or a command (`wait`);
/// start queued commands by rewinding (`place`, `startByRewinding`); a snapshot before each
/// period of the fill (`beforePeriod`), whose events go to the history (`rendered`); commit what
/// the DAC has passed and hand its events on (`filled`, `commit`). Every command applies to the
/// mixer once: a rewind never goes back before the last command applied, and a snapshot is saved
/// right after it. Stops, volume and pan changes go the same way as plays: one path for every
/// command keeps the order of commands the order of their effects, and a stop or a fade is heard
/// a millisecond after it is asked for too. A device failure commits everything (`commitAll`):
/// after an xrun the device starts from empty, so nothing written can be rewound, every event
/// may leave and no snapshot is kept.
///
/// Right after the buffer is first filled, it measures how coarsely the device's pointer moves
/// and whether its delay follows the DAC (`measurePosition`). Then the first rewind, a probe,
/// checks that the device rewinds at all (`rewindable` > 0) and that its delay dropped by what
/// was rewound (a device that answers a rewind and plays everything written anyway is not
/// rewound again); otherwise the loop ends with `.fallBack` and the engine reopens the device
/// for the classic path. Devices are opened with small periods from the start
/// (`RewindMode.coarseRequest`), so a coarse pointer is never a reason to reopen one: reopening
/// with the same request would only find the same pointer again.
struct RewindPlacement: CommandPlacement {
    let output: OutputThread
    let history: RewindHistory
    private let bufferFrames: Int
    private let guardFrames: Int
    /// How far the pointer may lag the DAC, in frames: a period until measured, 0 once the
    /// delay was found to follow the DAC.
    private var granularity: Int
    private var measured = false
    /// The probe saw the device rewind: from then on commands start by rewinding.
    private var verified = false
    /// Commands never move before this frame (the last frame at which commands were applied).
    private var lastCommandFrame = 0
    /// This turn: whether commands were started; whether the fill takes them.
    private var hadCommands = false
    private var fillTakesCommands = false
    /// Where the device's pointer was this turn (a mixer frame): what `filled` may commit.
    private var played = 0

    init(_ output: OutputThread, history: RewindHistory, parameters: PlaybackParameters) {
        self.output = output
        self.history = history
        bufferFrames = parameters.bufferFrames
        guardFrames = RewindMode.guardFrames(sampleRate: parameters.sampleRate)
        granularity = parameters.periodFrames
    }

    private var mixer: Mixer { output.mixer }

    /// Waits for room or a command (the wake-up pipe, which it then empties).
    func wait<Device: PlaybackDevice>(_ device: Device) -> Int32 {
        let ready = device.wait(timeoutMilliseconds: 200, orUntilReadable: output.wakeDescriptor)
        if ready == 2 { clearWake() }
        return ready
    }

    /// Once rewinding works, commands start by rewinding, never at the end of the buffer (up to
    /// 40 ms late): one that comes while the buffer is filled waits for the next turn, at once
    /// (its kick left the pipe readable). Only when a rewind is not possible now, or before the
    /// probe, does the fill take them.
    mutating func place<Device: PlaybackDevice>(_ device: Device, available: inout Int) -> PlacementStep {
        hadCommands = false
        fillTakesCommands = !verified
        if verified, output.commands.count > 0 {
            switch startByRewinding(device, probe: false) {
            case .refused(let why): return .end(.fallBack(why))
            case .failed(let code): return .failed(code)
            case .rewound: hadCommands = true
            case .notNow: fillTakesCommands = true
            }
            available = device.available()
            if available < 0 { return .waitAgain }
        }
        // Where the device's pointer was, by the room just read: what the commit may let go of
        // (the pointer never leads the DAC), without asking the device again.
        played = mixer.frameTime - (bufferFrames - available)
        return .goOn
    }

    /// Every free period is written with a snapshot before it, a period at a time (as a plugin
    /// expects: ALSA's `pulse` plugin shows a one-write buffer as nothing rewindable, where
    /// period writes show its real behaviour, a rewind it ignores).
    mutating func beforePeriod() {
        if fillTakesCommands, takeCommands() {
            hadCommands = true
            lastCommandFrame = mixer.frameTime
            output.lastPlacement.store(mixer.frameTime, ordering: .releasing)
        }
        history.save(mixer)
    }

    @inline(__always)
    func rendered() { postEvents() }

    var busy: Bool { hadCommands || output.commands.count > 0 }

    /// The probe, as soon as the buffer is first full (the engine waits for its verdict before
    /// it hands itself out: `waitForRewindVerdict`); then the commit of what the DAC passed.
    mutating func filled<Device: PlaybackDevice>(_ device: Device, written: Int) -> PlacementStep {
        if !verified, written >= bufferFrames {
            if !measured {
                let position = output.measurePosition(device)
                output.pointerGranularity.store(position.pointer, ordering: .releasing)
                output.delayFollowsDAC.store(position.delayFollowsDAC, ordering: .releasing)
                // A delay that follows the DAC says where the DAC is whatever the pointer
                // does: no slack for the pointer is needed then.
                granularity = position.delayFollowsDAC ? 0 : position.pointer
                measured = true
            }
            switch startByRewinding(device, probe: true) {
            case .refused(let why): return .end(.fallBack(why))
            case .failed(let code): return .failed(code)
            case .rewound:
                verified = true
                output.rewindState.store(RewindCode.active, ordering: .releasing)
            case .notNow: break
            }
        }
        commit(upTo: played)
        return .goOn
    }

    mutating func commitAll() {
        history.commitAll()
        output.deliverCommitted(history)
        lastCommandFrame = mixer.frameTime
    }

    enum RewindOutcome {
        case rewound, notNow, failed(Int32), refused(RewindRefusal)
    }

    /// Takes the queued commands and starts them as near the DAC as the device allows: rewinds
    /// to `guardFrames` ahead of where the DAC may be (`rewindPoint`; never before the last
    /// command applied), restores the mixer there, applies the commands and writes again up to
    /// where the buffer ended. A `probe` applies nothing: it only checks that the device
    /// rewinds. `.notNow` leaves the commands to the next period written (nothing rewindable
    /// now, or no snapshot that old).
    ///
    /// The time between reading the position and writing the first frame again is what the
    /// guard must cover, so the costly part comes first: the snapshot is restored and rendered
    /// (silently) up to the rewind point while the device still holds every frame; then the
    /// position is read again, the device rewound to it, and the frames nearest the DAC are
    /// written first, in chunks that double.
    mutating func startByRewinding<Device: PlaybackDevice>(_ device: Device, probe: Bool) -> RewindOutcome {
        let end = mixer.frameTime
        let first = rewindPoint(device, end: end)
        if first.delay < 0 { return .failed(Int32(first.delay)) }
        if first.rewindable < 0 { return probe ? .refused(.failed(errno: Int32(-first.rewindable))) : .notNow }
        if first.rewindable == 0 { return probe ? .refused(.nothingRewindable) : .notNow }
        guard first.target < end, let snapshot = history.restorable(atOrBefore: first.target),
              history.frame(of: snapshot) >= lastCommandFrame else { return .notNow }
        if !probe, !hasRoomForCommands() {
            output.heldCommandPeriods.wrappingAdd(1, ordering: .relaxed)
            return .notNow
        }
        history.restore(snapshot, into: mixer)
        renderSilently(upTo: first.target)
        // The DAC went on while that ran: the position again, and the rewind point moves on
        // with it (never back).
        let point = rewindPoint(device, end: end)
        // An underrun found here leaves the device as it was, all it holds played: the mixer
        // goes back to the end of it (not from the rewind point again, which repeated frames).
        if point.delay < 0 { return putBack(end, .failed(Int32(point.delay))) }
        guard point.rewindable > 0, point.target < end else { return putBack(end, .notNow) }
        let target = max(first.target, point.target)
        renderSilently(upTo: target)
        let rewound = device.rewind(end - target)
        if rewound < 0 {
            return putBack(end, probe ? .refused(.failed(errno: Int32(-rewound))) : .failed(Int32(rewound)))
        }
        if rewound == 0 { return putBack(end, .notNow) }
        // Negative when the rewind went back past the DAC (it moved on meanwhile): not an error.
        let delayAfter = device.signedDelay()
        if delayAfter.error < 0 { return .failed(delayAfter.error) }
        // The DAC only moves on: an honest rewind of n frames drops the delay by n or more.
        if point.delay - delayAfter.frames < rewound - rewound / 4 { return putBack(end, .refused(.ignored)) }
        var from = end - rewound
        if delayAfter.frames < 0 {
            // The DAC passed the rewind point while the rewind was made (the thread was held up
            // for longer than the guard): it played those frames as first written. Move forward
            // over them, so that what is written next follows what it played; the commands start
            // there. (Written again, they came too late and the recording jumped.)
            let forwarded = device.forward(min(-delayAfter.frames, rewound))
            if forwarded > 0 { from += forwarded }
        }
        renderSilently(upTo: from)
        if !probe {
            _ = takeCommands()
            lastCommandFrame = from
            output.lastPlacement.store(from, ordering: .releasing)
            history.save(mixer)
        }
        var done = from
        var chunk = RewindMode.firstChunkFrames(guardFrames: guardFrames)
        while done < end {
            let frames = min(end - done, output.scratchFrames, chunk)
            mixer.render(into: output.scratch, frameCount: frames)
            postEvents()
            let result = output.writeScratch(device, frames: frames)
            if result < 0 { return .failed(Int32(result)) }
            done += frames
            chunk = max(chunk, done - from)
        }
        output.rewinds.wrappingAdd(1, ordering: .relaxed)
        output.rewoundFrames.wrappingAdd(rewound, ordering: .relaxed)
        return .rewound
    }

    /// Where a rewind may go back to (`target`), with the position it was read from. The
    /// device's pointer (`end - rewindable`, read fresh) may lag the DAC by up to `granularity`
    /// frames, and its delay says where the DAC is as far as the device knows: the rewind point
    /// is the guard past the later of pointer + granularity and the DAC by the delay, and never
    /// before the last command applied. `granularity` is 0 where the delay was measured to follow
    /// the DAC: the later of the two is then the DAC. Negative `delay` or `rewindable`: that call
    /// failed.
    private func rewindPoint<Device: PlaybackDevice>(_ device: Device,
                                                     end: Int) -> (target: Int, delay: Int, rewindable: Int) {
        let available = device.available()   // a fresh pointer for `rewindable`
        if available < 0 { return (end, available, 0) }
        let delay = device.delay()
        if delay < 0 { return (end, delay, 0) }
        let rewindable = device.rewindable()
        if rewindable <= 0 { return (end, delay, rewindable) }
        let clear = min(rewindable - granularity, delay) - guardFrames
        return (max(end - clear, lastCommandFrame), delay, rewindable)
    }

    /// After the mixer was restored for a rewind that did not happen: renders (silently) back up
    /// to `end`, the frames the device still holds, and returns `outcome`.
    private func putBack(_ end: Int, _ outcome: RewindOutcome) -> RewindOutcome {
        renderSilently(upTo: end)
        return outcome
    }

    /// Renders from the restored snapshot up to `frame` without writing: the same samples as the
    /// first time, already in the device; only the mixer's state (and its events) is wanted.
    private func renderSilently(upTo frame: Int) {
        while mixer.frameTime < frame {
            mixer.render(into: output.scratch, frameCount: min(frame - mixer.frameTime, output.scratchFrames))
            postEvents()
        }
    }

    /// The frames before the device's position (`played`, a mixer frame) can no longer be
    /// rewritten: their events leave.
    /// Anything else released only for frames that can no longer be rewound (a streaming voice's
    /// ring, whose producer may overwrite what the mixer has read) is released here, from
    /// `history.committedState`, never from the live mixer, which has read ahead.
    private func commit(upTo played: Int) {
        history.commit(upTo: played)
        output.deliverCommitted(history)
    }

    /// Room for every event the commands of one take could cause, in the history and in the
    /// notice ring (see `ClassicPlacement.beforePeriod`).
    private func hasRoomForCommands() -> Bool {
        history.eventRoom >= output.noticeReserve && output.notices.capacity - output.notices.count >= output.noticeReserve
    }

    /// Takes queued commands (`OutputThread.takeCommands`), their events into the history;
    /// true when any were taken or wait for room.
    private func takeCommands() -> Bool {
        guard output.commands.count > 0 else { return false }
        guard hasRoomForCommands() else {
            output.heldCommandPeriods.wrappingAdd(1, ordering: .relaxed)
            return true
        }
        let taken = output.takeCommands { postEvents() }
        postEvents()
        if taken > 0 { history.commandsApplied() }
        return taken > 0
    }

    @inline(__always)
    private func postEvents() {
        let lost = history.post(from: mixer)
        if lost > 0 { output.lostNotices.wrappingAdd(lost, ordering: .relaxed) }
    }

    /// Empties the wake-up pipe (into a buffer on the stack).
    private func clearWake() {
        var bytes: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        while withUnsafeMutableBytes(of: &bytes, { read(output.wakeDescriptor, $0.baseAddress, $0.count) }) == 64 {}
    }
}

extension OutputThread {
    /// How precisely the device says where its DAC is (`measurePosition`).
    struct PositionPrecision {
        /// How coarsely the pointer moves, in frames (1: it follows the DAC).
        var pointer: Int
        /// Whether `snd_pcm_delay` follows the DAC frame by frame, whatever the pointer does.
        var delayFollowsDAC: Bool
    }

    /// How coarsely the device's pointer moves, in frames (`measurePosition`'s pointer).
    func measureGranularity<Device: PlaybackDevice>(_ device: Device) -> Int { measurePosition(device).pointer }

    /// How precisely the device reports its position: samples `available` and `delay` 48 times
    /// over 1.25 periods (the buffer is full and nothing is written meanwhile, so nothing runs
    /// dry and the delay only falls; at least one period passes, so a pointer that moves per
    /// period moves once at least) and compares each step with the frames the clock says passed.
    ///
    /// A pointer that follows the DAC steps by about that much (within 2 frames: rounding and
    /// the read of the clock): granularity 1. Otherwise it moves in jumps, and the largest step
    /// seen is the granularity (a late sample that spans two jumps only overstates it, which
    /// costs latency, not frames). A device that says its position moves in batches counts as a
    /// period at least. The delay is judged the same way: a delay that falls with the clock
    /// within 2 frames at every sample follows the DAC (an HDA card's, a card that interpolates
    /// between period interrupts, the virtual card's); one that falls in steps does not, and
    /// then the pointer's granularity is what a rewind must keep clear of.
    func measurePosition<Device: PlaybackDevice>(_ device: Device) -> PositionPrecision {
        let parameters = device.parameters
        let rate = Double(parameters.sampleRate)
        let samples = 48
        let interval = 1.25 * Double(parameters.periodFrames) / rate / Double(samples)
        var pause = timespec(tv_sec: 0, tv_nsec: Int(interval * 1e9))
        var last = device.available()
        var lastDelay = device.delay()
        var lastTime = monotonicSeconds()
        if last < 0 { return PositionPrecision(pointer: parameters.periodFrames, delayFollowsDAC: false) }
        var largestStep = 0
        var largestExcess = 0.0
        var largestDelayError = lastDelay < 0 ? Double.infinity : 0
        for _ in 0..<samples {
            nanosleep(&pause, nil)
            let now = device.available()
            let delay = device.delay()
            let time = monotonicSeconds()
            if now < 0 { break }
            let elapsed = (time - lastTime) * rate
            largestStep = max(largestStep, now - last)
            largestExcess = max(largestExcess, Double(now - last) - elapsed)
            largestDelayError = delay < 0 ? .infinity : max(largestDelayError, abs(Double(lastDelay - delay) - elapsed))
            last = now
            lastDelay = delay
            lastTime = time
        }
        let granularity = largestExcess <= 2 ? 1 : max(1, largestStep)
        return PositionPrecision(pointer: device.positionIsBatched ? max(granularity, parameters.periodFrames) : granularity,
                                 delayFollowsDAC: largestDelayError <= 2)
    }

    /// Lets out what the committed frames allow: their events, and the frames streaming voices
    /// have read by then (from the oldest snapshot kept; from the live mixer once nothing can be
    /// rewound, after `commitAll`).
    func deliverCommitted(_ history: RewindHistory) {
        history.deliver { event in notices.push(.mixer(event)) }
        (history.committedState ?? mixer).releaseStreams()
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
