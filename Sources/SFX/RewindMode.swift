import Glibc
import SFXCore
import SFXDevice

/// Whether the engine starts sounds by rewinding its device (`SoundEngine.Configuration.rewind`),
/// as `metrics.rewind` reports it.
public enum RewindStatus: Sendable, Equatable, CustomStringConvertible {
    /// Switched off by the configuration: the classic path (a sound starts at the next period
    /// rendered, behind what the buffer holds).
    case off
    /// On, and not yet tried on the device.
    case starting
    /// On: the device rewound and the rewind was seen to take effect (its delay dropped).
    case active
    /// On in the configuration, but the device could not rewind, so the engine fell back to the
    /// classic path (with the configured buffer) for the rest of the session.
    case unsupported(RewindRefusal)

    public var description: String {
        switch self {
        case .off: "rewind off"
        case .starting: "rewind starting"
        case .active: "rewind active"
        case .unsupported(let why): "rewind unsupported (\(why)), classic path"
        }
    }
}

/// Why a device could not be rewound.
public enum RewindRefusal: Sendable, Equatable, CustomStringConvertible {
    /// snd_pcm_rewindable() answered 0 with a full buffer.
    case nothingRewindable
    /// snd_pcm_rewindable() or snd_pcm_rewind() failed with this errno.
    case failed(errno: Int32)
    /// The device answered the rewind but its delay did not drop: it plays everything written
    /// all the same (as ALSA's `pulse` plugin does).
    case ignored

    public var description: String {
        switch self {
        case .nothingRewindable: "the device has nothing rewindable"
        case .failed(let code): "rewinding failed: \(String(cString: strerror(code)))"
        case .ignored: "the device accepted a rewind and ignored it"
        }
    }
}

/// Rewind mode's numbers.
///
/// **The buffer and the wake-ups**: the device is opened with periods of 128 frames at 48 kHz
/// (`coarsePeriodSeconds`, for the pointer, below) and a buffer of twice `wakeMarginSeconds`
/// (`coarseRequest`: 16 periods, 42.7 ms, at 48 kHz; a larger buffer asked for is kept), and
/// the device wakes the thread only once half the buffer is free (ALSA's avail_min), not every
/// period: 47 wake-ups a second instead of 375, each writing 8 periods at once. At every wake-up
/// 8 periods (21.3 ms) are still queued, as much as a classic client at 512 × 3 has when it
/// wakes, so a late wake-up is no more likely to run the buffer dry. A command does not wait for
/// any of that: it wakes the thread at once through its pipe, and the play reaches the DAC about
/// `guardSeconds` later, whatever the buffer. What the deep buffer costs is paid per command: a
/// rewind renders again what the buffer held (at most 42.7 ms; tens of microseconds with one
/// voice, about 0.3–0.6 ms with 64, `sfx-bench --burst`), and events leave when their frames can
/// no longer be rewritten, at the wake-up after the DAC passed them (up to about 21 ms after
/// they were heard).
///
/// **The guard** (`guardSeconds`, 1 ms): frames between the DAC and the rewind point are left
/// as written. What must fit in it is the time from reading the device's position (after the
/// wake-up, so a late wake-up does not count) to the rewritten frames being in the buffer: the
/// restore and re-render from the snapshot happen before the device is rewound (from a position
/// read again afterwards), and the frames nearest the DAC are written first, in chunks that
/// double (`firstChunkFrames`), so what the guard covers is the render of the first chunk (16 to
/// 24 frames) and a few ALSA calls, plus a preemption of the SCHED_FIFO thread, which is rare.
/// The virtual card logs any frame written after the DAC passed it (`lost`), and the rewind
/// tests check that none was.
///
/// **The pointer's granularity** (`OutputThread.measurePosition`): the position a device
/// reports can lag its DAC. An HDA card reads its DMA position to the frame, USB moves per URB
/// (about 1 ms), and a card whose pointer moves on period interrupts (SNDRV_PCM_INFO_BATCH, the
/// virtual card's default) lags by up to a whole period after a wake-up that is not a period's,
/// which is every command's. So the engine samples the pointer and the delay at its probe. Where
/// the delay follows the DAC frame by frame (it falls with the clock between samples, as on a
/// card that interpolates its position and on the virtual card), a rewind goes to the guard
/// ahead of the DAC by the delay, whatever the pointer does. Otherwise (a delay computed from the
/// same coarse pointer) it rewinds only to pointer + granularity + guard. A pointer coarser than
/// `coarsePeriodSeconds` (128 frames, 2.7 ms at 48 kHz) would cost that much latency on every
/// play then, so rewind mode opens devices with periods of that size from the start (a play
/// reaches the DAC 1 to 3.7 ms after the wake-up on such a device instead of up to 11.7 ms with
/// 512-frame periods): finding a coarse pointer first and reopening the device then showed a
/// sound server, the virtual card's recordings and a daemon's clients two streams where there is
/// one. Small periods cost nothing by themselves now that the thread wakes every 8 of them.
enum RewindMode {
    static let guardSeconds = 0.001
    static let minimumBufferSeconds = 0.020
    /// Queued audio left at every wake-up, at least (whole periods, rounded up); the buffer
    /// holds twice as much, so the thread writes as much at each wake-up.
    static let wakeMarginSeconds = 0.020
    /// Periods for a pointer that moves per period: 128 frames at 48 kHz (2.7 ms), the smallest
    /// period most cards and USB interfaces accept without trouble and about three guards.
    static let coarsePeriodSeconds = 128.0 / 48_000
    /// Snapshots the history keeps (`RewindHistory`): a buffer of at most `maxPeriods` periods
    /// leaves room for the ones taken after commands.
    static let maxPeriods = 32

    /// The frames written first after a rewind: half the guard, then twice what was written so
    /// far, so each chunk's render fits in the time the frames already written give.
    static func firstChunkFrames(guardFrames: Int) -> Int { max(16, guardFrames / 2) }

    /// The period for a coarse pointer at `sampleRate`.
    static func coarsePeriod(sampleRate: Int) -> Int {
        max(PlaybackRequest.periodSizes.lowerBound, Int((Double(sampleRate) * coarsePeriodSeconds).rounded()))
    }

    /// The request rewind mode opens every device with: periods of `coarsePeriodSeconds`, as
    /// many as hold twice `wakeMarginSeconds` (or the buffer `request(for:)` gives, when larger;
    /// at most `maxPeriods`), and the device waking the thread once all but the margin is free
    /// (at most half the buffer: `PlaybackRequest.wakeFrames`).
    static func coarseRequest(for request: PlaybackRequest) -> PlaybackRequest {
        var small = Self.request(for: request)
        let buffer = small.periodFrames * small.periodCount
        let period = coarsePeriod(sampleRate: request.sampleRate)
        let rate = Double(request.sampleRate)
        let margin = Int((rate * wakeMarginSeconds / Double(period)).rounded(.up))
        small.periodFrames = period
        small.periodCount = min(max(3, (buffer + period - 1) / period, 2 * margin), maxPeriods,
                                PlaybackRequest.periodCounts.upperBound)
        small.wakePeriods = max(1, small.periodCount - margin)
        return small
    }

    /// The request rewind mode opens the device with: `request` with a buffer of at least 20 ms
    /// (periods of at least 512 frames at 48 kHz, at least three of them); a request that
    /// already asks for that much is kept.
    static func request(for request: PlaybackRequest) -> PlaybackRequest {
        var deep = request
        let minimumBuffer = Int((Double(request.sampleRate) * minimumBufferSeconds).rounded(.up))
        guard request.periodFrames * request.periodCount < minimumBuffer else { return request }
        let period = max(request.periodFrames, request.sampleRate * 512 / 48_000)
        deep.periodFrames = min(period, PlaybackRequest.periodSizes.upperBound)
        deep.periodCount = min(max(request.periodCount, 3, (minimumBuffer + deep.periodFrames - 1) / deep.periodFrames),
                               PlaybackRequest.periodCounts.upperBound)
        return deep
    }

    static func guardFrames(sampleRate: Int) -> Int { max(1, Int((Double(sampleRate) * guardSeconds).rounded())) }
}

/// What rewind mode keeps of the audio it wrote and may write again: a snapshot of the mixer at
/// the start of every write (and right after every command applied), and the mixer's events in
/// order, each marked by the snapshot that follows it. Allocated before the thread runs; used by
/// the output thread alone.
///
/// An event is delivered once no snapshot before it can be restored any more: restoring a
/// snapshot throws away the events posted after it, which rendering again posts again, so each
/// completion leaves exactly once, when the frames that caused it can no longer be rewritten.
///
/// Commands apply once: rendering again does not apply them again, so a snapshot taken before a
/// command was applied must never be restored (the command, and the voice it started, would be
/// gone without an event: its completion would never come). `commandsApplied()` makes every
/// snapshot kept so far unrestorable; the next one saved is the first that may be restored. A
/// snapshot's frame alone cannot tell: one taken before the command can have the same frame as
/// the one taken after it, and the one after may not have been saved at all (every slot busy).
final class RewindHistory {
    private let snapshots: UnsafeMutablePointer<MixerSnapshot>
    /// For each snapshot, `posted` when it was taken.
    private let marks: UnsafeMutablePointer<Int>
    let capacity: Int
    /// Snapshots kept: absolute indexes `first ..< end` (slot = index % capacity).
    private(set) var first = 0
    private(set) var end = 0

    private let events: UnsafeMutablePointer<(MixerEvent, Int)>
    let eventCapacity: Int
    /// Events ever posted and delivered (absolute counts; slot = count % eventCapacity).
    private(set) var posted = 0
    private(set) var delivered = 0
    /// Events up to this count may be delivered.
    private(set) var deliverable = 0
    /// The oldest snapshot (absolute index) that may be restored: the first saved after the last
    /// commands were applied.
    private(set) var restorableFrom = 0

    init(mixer: Mixer, snapshots capacity: Int, events eventCapacity: Int) {
        self.capacity = capacity
        self.eventCapacity = eventCapacity
        snapshots = .allocate(capacity: capacity)
        for i in 0..<capacity { (snapshots + i).initialize(to: MixerSnapshot(shapedLike: mixer)) }
        marks = .allocate(capacity: capacity)
        marks.initialize(repeating: 0, count: capacity)
        events = .allocate(capacity: eventCapacity)
        events.initialize(repeating: (.finished(VoiceID(0)), 0), count: eventCapacity)
    }

    deinit {
        snapshots.deinitialize(count: capacity)
        snapshots.deallocate()
        marks.deallocate()
        events.deallocate()
    }

    var isFull: Bool { end - first == capacity }
    var eventRoom: Int { eventCapacity - (posted - delivered) }

    /// Saves `mixer` as the newest snapshot; false when every slot holds one still needed.
    @discardableResult
    func save(_ mixer: Mixer) -> Bool {
        guard !isFull else { return false }
        snapshots[end % capacity].save(mixer)
        marks[end % capacity] = posted
        end += 1
        return true
    }

    func frame(of snapshot: Int) -> Int { snapshots[snapshot % capacity].frameTime }

    /// The newest snapshot taken at or before `frame`, or nil.
    func latest(atOrBefore frame: Int) -> Int? {
        var i = end - 1
        while i >= first {
            if self.frame(of: i) <= frame { return i }
            i -= 1
        }
        return nil
    }

    /// The newest snapshot at or before `frame` that may be restored (taken after the last
    /// commands were applied), or nil.
    func restorable(atOrBefore frame: Int) -> Int? {
        guard let snapshot = latest(atOrBefore: frame), snapshot >= restorableFrom else { return nil }
        return snapshot
    }

    /// Commands have just been applied to the mixer: no snapshot kept so far may be restored.
    func commandsApplied() {
        restorableFrom = end
    }

    /// Puts the mixer back to `snapshot`: later snapshots and the events posted after it are gone.
    func restore(_ snapshot: Int, into mixer: Mixer) {
        snapshots[snapshot % capacity].restore(into: mixer)
        posted = marks[snapshot % capacity]
        end = snapshot + 1
    }

    /// Adds the mixer's events; returns how many did not fit (the caller keeps room, so 0).
    func post(from mixer: Mixer) -> Int {
        var lost = 0
        mixer.drainEvents { event, frame in
            guard posted - delivered < eventCapacity else { lost += 1; return }
            events[posted % eventCapacity] = (event, frame)
            posted += 1
        }
        return lost
    }

    /// The device has played up to `frame`, and no rewind will go back before it: snapshots
    /// older than the newest one at or before it are dropped, and the events before that one may
    /// leave.
    func commit(upTo frame: Int) {
        guard let keep = latest(atOrBefore: frame) else { return }
        first = keep
        deliverable = max(deliverable, marks[keep % capacity])
    }

    /// Nothing will be rewound any more (stop, xrun, loss): every event may leave.
    func commitAll() {
        first = end
        deliverable = posted
    }

    /// Whether events that may leave have not all been handed over yet.
    var hasUndelivered: Bool { delivered < deliverable }

    /// Hands deliverable events to `push`, oldest first, while it accepts them.
    @inline(__always)
    func deliver(_ push: (MixerEvent) -> Bool) {
        while delivered < deliverable {
            guard push(events[delivered % eventCapacity].0) else { return }
            delivered += 1
        }
    }

    /// The mixer as of the oldest snapshot still kept, or nil when none is: no rewind goes back
    /// before it, so what it has read of a stream can no longer be read again (a streaming
    /// voice's ring may be released up to its cursor there, not up to the live mixer's).
    var committedState: Mixer? {
        first < end ? snapshots[first % capacity].mixer : nil
    }
}

extension OutputThread {
    /// Waits (at most `seconds`) until rewind mode has been tried on the device: active, or
    /// refused and the device reopened for the classic path. The probe runs as soon as the
    /// device's buffer is first full, a few milliseconds after the start, so an engine is
    /// handed out with its device settled (a sound server sees one stream, not a first one
    /// that is closed at once).
    func waitForRewindVerdict(seconds: Double) {
        let deadline = monotonicSeconds() + seconds
        while rewindState.load(ordering: .acquiring) == RewindCode.starting, monotonicSeconds() < deadline {
            usleep(1_000)
        }
    }

    /// `rewindState` as the engine reports it.
    var rewindStatus: RewindStatus {
        let code = rewindState.load(ordering: .acquiring)
        switch code {
        case RewindCode.off: return .off
        case RewindCode.starting: return .starting
        case RewindCode.active: return .active
        case RewindCode.nothingRewindable: return .unsupported(.nothingRewindable)
        case RewindCode.ignored: return .unsupported(.ignored)
        default: return .unsupported(.failed(errno: Int32(clamping: -code)))
        }
    }
}
