/// A play waiting in the mixer's schedule for its start frame (`MixerCommand.playAt`).
///
/// Plain data, like every array of the mixer, so that a snapshot copies it as memory: a rewind
/// to a frame before the start brings the play back with the rest of the state.
struct ScheduledStart: BitwiseCopyable {
    enum Play: BitwiseCopyable {
        case none
        case cue(PlayRequest)
        case stream(StreamRequest)
    }

    var play: Play = .none
    /// The mixer frame (`Mixer.frameTime`) of the voice's first frame.
    var frame = 0
    /// A crossfade at the end of another stream (`MixerCommand.crossfadeAtEnd`): `frame` is not
    /// used; the start follows the old voice's position towards its stream's end, or `expectedEnd`.
    var atEnd = false
    var expectedEnd = Int.max

    var voice: VoiceID {
        switch play {
        case .none: VoiceID(0)
        case .cue(let request): request.voice
        case .stream(let request): request.voice
        }
    }

    var group: SoundGroup? {
        switch play {
        case .none: nil
        case .cue(let request): request.group
        case .stream(let request): request.group
        }
    }

    /// The key of the cue it plays (nil for a stream).
    var cueKey: UInt32? {
        guard case .cue(let request) = play else { return nil }
        return request.cue._withUnsafeGuaranteedRef { $0.key }
    }
}

/// Plays at a frame: sample-accurate starts.
///
/// ## The law
/// A play for frame f starts its voice so that the voice's first frame is output frame f (frame
/// f − `frameTime` of the next render's output), whatever the render blocks: `render` ends a
/// block where the next scheduled start is and starts it there, so the voice is mixed from that
/// frame on exactly as a `.play` applied at that frame time would be. Plays due on the same
/// frame start in the order their commands came. A frame already rendered (f < `frameTime` when
/// the command is applied) starts the voice at once and reports `.late(voice, frames:
/// frameTime − f)` before anything else of that voice.
///
/// ## Its limits
/// The schedule is a fixed table of `scheduleCapacity` entries, allocated in `init`, so a play
/// far in the future never holds up the command ring behind it; a play that finds it full is
/// rejected (`.scheduleFull`). Finding the next start scans the table (64 entries at most), and
/// only while it holds something: a mixer with nothing scheduled renders exactly as before.
extension Mixer {
    /// Plays at a future frame the mixer holds at once.
    public static let scheduleCapacity = 64

    /// Plays waiting for their frame.
    public var scheduledCount: Int { state.pointee.scheduledCount }

    /// Starts `play` on `frame`: now (late or on time) or from the schedule.
    func schedule(_ play: ScheduledStart.Play, at frame: Int) {
        let entry = ScheduledStart(play: play, frame: frame)
        let now = state.pointee.frameTime
        guard frame > now else {
            if frame < now { post(.late(entry.voice, frames: now - frame)) }
            return begin(play)
        }
        guard state.pointee.scheduledCount < Mixer.scheduleCapacity else { return reject(entry.voice, .scheduleFull) }
        schedule[state.pointee.scheduledCount] = entry
        state.pointee.scheduledCount += 1
    }

    /// Waits with `request` for the end of `request.crossfadeFrom`'s stream (`.crossfadeAtEnd`).
    func scheduleAtEnd(_ request: StreamRequest, expectedEnd: Int) {
        var entry = ScheduledStart(play: .stream(request), frame: Int.max)
        entry.atEnd = true
        entry.expectedEnd = expectedEnd
        guard state.pointee.scheduledCount < Mixer.scheduleCapacity else { return reject(request.voice, .scheduleFull) }
        schedule[state.pointee.scheduledCount] = entry
        state.pointee.scheduledCount += 1
        // Due already (the old voice gone, or nearer its end than the fade): start now.
        if framesUntilDue(&schedule[state.pointee.scheduledCount - 1]) == 0 {
            let due = schedule[state.pointee.scheduledCount - 1]
            remove(at: state.pointee.scheduledCount - 1)
            begin(due.play)
        }
    }

    /// Output frames until a crossfade at a stream's end is due (0: now; Int.max: not known yet,
    /// or the old voice is paused), setting its fade to what is left once it is due.
    private func framesUntilDue(_ entry: inout ScheduledStart) -> Int {
        guard case .stream(var request) = entry.play else { return 0 }
        guard let from = request.crossfadeFrom, let slot = slot(of: from), voices[slot].stream != nil else {
            // Nothing to fade from: the new voice starts at once, as a plain start.
            request.crossfadeFrom = nil
            request.fadeInFrames = 0
            entry.play = .stream(request)
            return 0
        }
        let old = voices[slot]
        let ringEnd = old.stream!._withUnsafeGuaranteedRef { $0.end.load(ordering: .acquiring) }
        let end = ringEnd != Int.max ? ringEnd : entry.expectedEnd
        guard end != Int.max, old.pauses == 0 else { return Int.max }
        // The old voice's output frames left: its source frames left over its rate.
        let left = max(0, (Double(end - old.position) - old.fraction) / max(old.rate, 1e-9))
        let frames = Int(left.rounded(.up))
        let fade = max(request.fadeInFrames, configuration.startFadeFrames)
        guard frames > fade else {
            request.fadeInFrames = max(1, frames)
            entry.play = .stream(request)
            return 0
        }
        return frames - fade
    }

    private func begin(_ play: ScheduledStart.Play) {
        switch play {
        case .none: break
        case .cue(let request): self.play(request)
        case .stream(let request): playStream(request)
        }
    }

    /// Starts the plays due at `frameTime`, in the order they came, and returns the frames until
    /// the next one (Int.max when none waits).
    func startDuePlays() -> Int {
        let now = state.pointee.frameTime
        var next = Int.max
        var i = 0
        while i < state.pointee.scheduledCount {
            if schedule[i].atEnd {
                let wait = framesUntilDue(&schedule[i])
                if wait == 0 {
                    let entry = schedule[i]
                    remove(at: i)
                    begin(entry.play)
                } else {
                    next = min(next, wait)
                    i += 1
                }
                continue
            }
            let entry = schedule[i]
            if entry.frame <= now {
                remove(at: i)
                begin(entry.play)
            } else {
                next = min(next, entry.frame - now)
                i += 1
            }
        }
        return next
    }

    /// Takes the waiting plays that `matches` picks out of the schedule, each ending with a
    /// `.stopped` (a stop) or `.rejected(.cueReleasing)` (its cue released) event.
    func cancelScheduled(reporting: ScheduledCancel, where matches: (ScheduledStart) -> Bool) {
        var i = 0
        while i < state.pointee.scheduledCount {
            let entry = schedule[i]
            guard matches(entry) else { i += 1; continue }
            remove(at: i)
            switch reporting {
            case .stopped: post(.stopped(entry.voice))
            case .rejected: reject(entry.voice, .cueReleasing)
            }
        }
    }

    /// Removes entry `i`, keeping the others in order.
    private func remove(at i: Int) {
        let count = state.pointee.scheduledCount
        for j in i..<(count - 1) { schedule[j] = schedule[j + 1] }
        state.pointee.scheduledCount = count - 1
    }
}

/// How a cancelled scheduled play ends.
enum ScheduledCancel { case stopped, rejected }
