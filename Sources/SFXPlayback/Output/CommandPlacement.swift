import SFXCore
import SFXDevice

/// How the output loop (`OutputThread.outputLoop`) places queued commands in the audio it writes,
/// and when their events may leave: the one thing the classic path and rewind mode do
/// differently. Everything else — the wait, the room, what an xrun left unwritten, the fill a
/// period at a time, failures, idleness — is the loop's, once.
///
/// - `ClassicPlacement`: a command applies at the start of the next period rendered, behind what
///   the buffer holds, and its events leave as soon as they are rendered.
/// - `RewindPlacement`: a command wakes the thread and is started a millisecond ahead of the DAC
///   by rewinding; events wait until their frames can no longer be rewritten.
///
/// Each owns its state and lives for one run of the loop on one device. The loop is generic over
/// it (and over the device), so its hooks are called directly, never through an existential,
/// and nothing boxes or allocates.
protocol CommandPlacement {
    /// Waits for room to write (at most 200 ms): `PlaybackDevice.wait`'s answer.
    mutating func wait<Device: PlaybackDevice>(_ device: Device) -> Int32
    /// Once the room is known (`available`, less what an xrun left) and before the fill: places
    /// the commands that do not wait for the next period. `.goOn` lets the fill run.
    mutating func place<Device: PlaybackDevice>(_ device: Device, available: inout Int) -> PlacementStep
    /// Before each period rendered: takes commands, or saves a snapshot.
    mutating func beforePeriod()
    /// After each period rendered: hands the mixer's events on, or holds them.
    func rendered()
    /// Whether commands kept the loop from idling in the period just written.
    var busy: Bool { get }
    /// After the fill (`written`: frames written since the device opened). `.goOn` lets the loop
    /// go on to its idle check.
    mutating func filled<Device: PlaybackDevice>(_ device: Device, written: Int) -> PlacementStep
    /// Nothing written so far will be written again: the loop starts or ends, or the device
    /// failed (after an xrun it starts from empty).
    mutating func commitAll()
}

/// What a placement's step leaves the loop to do.
enum PlacementStep {
    /// Go on with this turn.
    case goOn
    /// Wait again, as after a turn.
    case waitAgain
    /// The device answered this negative errno: a failure (`OutputThread.fail`).
    case failed(Int32)
    /// End the loop (rewind mode's `.fallBack`).
    case end(OutputThread.Ending)
}

/// The classic path: a command applies at the start of the next period rendered (`takeCommands`:
/// up to `commandBudget` of them, the rest at the next), and events leave as they are rendered.
struct ClassicPlacement: CommandPlacement {
    let output: OutputThread
    private(set) var busy = false

    init(_ output: OutputThread) { self.output = output }

    @inline(__always)
    func wait<Device: PlaybackDevice>(_ device: Device) -> Int32 { device.wait(timeoutMilliseconds: 200) }

    @inline(__always)
    func place<Device: PlaybackDevice>(_ device: Device, available: inout Int) -> PlacementStep { .goOn }

    /// No completion is ever lost: commands are taken only while the notice ring has room for
    /// every event that could follow before the next take (`noticeReserve`); otherwise they wait
    /// in the command ring and the period is counted in `heldCommandPeriods`. Busy when a command
    /// was taken or is waiting.
    @inline(__always)
    mutating func beforePeriod() {
        guard output.notices.capacity - output.notices.count >= output.noticeReserve else {
            output.heldCommandPeriods.wrappingAdd(1, ordering: .relaxed)
            busy = output.commands.count > 0
            return
        }
        let taken = output.takeCommands { handOverEvents() }
        busy = taken > 0
    }

    @inline(__always)
    func rendered() {
        output.mixer.releaseStreams()   // nothing rendered here is rendered again
        handOverEvents()
    }

    @inline(__always)
    func filled<Device: PlaybackDevice>(_ device: Device, written: Int) -> PlacementStep { .goOn }

    @inline(__always)
    func commitAll() {}

    @inline(__always)
    private func handOverEvents() {
        output.mixer.drainEvents { event, _ in
            if !output.notices.push(.mixer(event)) { output.lostNotices.wrappingAdd(1, ordering: .relaxed) }
        }
    }
}

extension OutputThread {
    /// Applies up to `commandBudget` queued commands, oldest first; the rest wait for the next
    /// take, in order. Returns how many it applied. A burst of plays can end (steal, reject) more
    /// voices than the mixer's event buffer holds, so `handOver` takes the events after every
    /// `eventBatch` commands (the caller takes those of the last batch). The caller checks first
    /// that there is room for what they can cause (`noticeReserve`).
    @inline(__always)
    func takeCommands(handOver: () -> Void) -> Int {
        var taken = 0
        while taken < commandBudget {
            let batch = min(OutputThread.eventBatch, commandBudget - taken)
            let applied = mixer.apply(from: commands, limit: batch)
            taken += applied
            guard applied == batch else { break }
            handOver()
        }
        return taken
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
}
