import SFXCore

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
