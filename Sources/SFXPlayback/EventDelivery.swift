import CSFXSystem
import FoundationEssentials
import SFXSystem
import Dispatch
import Glibc
import Synchronization
import SFXCore
import SFXDevice

/// Turns what the output thread reports into completions, engine events and freed cues, off
/// the real-time thread, in two stages so that a slow handler never stops the first:
///
/// 1. The engine's `sfx-events` thread polls the notice ring (the real-time thread never
///    signals anyone): every 2 ms after anything happened (a notice, or a command sent, which
///    wakes it), then twice as long after each poll that found nothing, up to 20 ms while a
///    pending play can end by itself and 200 ms while none can (none pending, or only endless
///    loops, which end by a command) (`Pace`). An engine left playing a long sound costs 50
///    wake-ups a second, not 500, and a completion that comes after such a quiet spell is
///    handed on within 20 ms; device and xrun reports within 200 ms.
///    It does the bookkeeping at once (the play is no longer pending, a released cue is freed)
///    and queues the calls to make. It never calls user code, so it keeps the ring drained.
/// 2. Two serial dispatch queues make the calls, in order: one runs completions, the other
///    engine events (so a blocking completion does not hold back an xrun or device report, nor
///    the reverse). What waits there is bounded by the plays made while a handler blocks.
///
/// Every completion runs on the completion queue, whether the play ended in the mixer, was
/// rejected before it reached it (a number out of range, an unknown sound, a closed engine, a
/// muted alert, a full command queue) or was still sounding when the engine closed.
///
/// Handlers are called with no lock held, so they may call the engine.
final class EventDelivery: @unchecked Sendable {
    typealias Completion = @Sendable (PlayOutcome) -> Void

    private struct Pending {
        var completion: Completion?
        /// Where `Voice.outcome` waits.
        var handle: VoiceHandle
        /// Keeps the cue (or a streaming voice's ring) alive while the voice may read it (a
        /// disposed cue stays until released).
        var cue: any AnyObject & Sendable
        /// A loop without end: it ends only by a command (stop, steal) or the engine's end.
        var endless: Bool
    }

    private struct State {
        private(set) var pending: [VoiceID: Pending] = [:]
        /// Pending plays that can end by themselves (not `endless`).
        private(set) var ending = 0
        /// Disposed cues waiting for the mixer's `.cueReleased`.
        var retiring: [UInt32: Cue] = [:]
        /// Effect processors sent to the mixer, kept until it releases them (`.effectReleased`).
        var effects: [UInt32: EffectProcessor] = [:]
        var nextEffectKey: UInt32 = 1
        var unsentReleases: [UInt32] = []
        var streams: [UUID: AsyncStream<EngineEvent>.Continuation] = [:]
        var handler: (@Sendable (EngineEvent) -> Void)?
        var alertHandler: (@Sendable (AlertNotice) -> Void)?
        /// Events that came while nobody listened (no handler, no stream), such as
        /// `.deviceUnavailable` during `init`: the first handler or stream gets them.
        var unheard: [EngineEvent] = []
        var stopped = false

        mutating func add(_ voice: VoiceID, _ play: Pending) {
            if let old = pending.updateValue(play, forKey: voice), !old.endless { ending -= 1 }
            if !play.endless { ending += 1 }
        }

        mutating func remove(_ voice: VoiceID) -> Pending? {
            guard let play = pending.removeValue(forKey: voice) else { return nil }
            if !play.endless { ending -= 1 }
            return play
        }

        mutating func removeAll() -> [Pending] {
            defer { pending = [:]; ending = 0 }
            return Array(pending.values)
        }
    }

    private let notices: SPSCRing<OutputNotice>
    private let output: OutputThread
    private let state = Mutex(State())
    private let finished = DispatchSemaphore(value: 0)
    private let commands: CommandQueue
    private let completionQueue = DispatchQueue(label: "sfx-completions")
    private let eventQueue = DispatchQueue(label: "sfx-event-handlers")
    /// Marks the two queues, so that `stop()` called from a handler does not wait for itself.
    private static let handlerQueueKey = DispatchSpecificKey<Bool>()
    /// Marks the completion queue alone (`isOnCompletionQueue`).
    private static let completionQueueKey = DispatchSpecificKey<Bool>()
    /// Calls queued and not yet made.
    private let queued = Atomic<Int>(0)
    /// The kernel's id of the `sfx-events` thread, 0 before it runs.
    let threadID = Atomic<Int32>(0)
    private var reportedRealtime = false
    /// Watches for cards while the device is lost (started and stopped here, off the real-time thread).
    private let deviceWatch: DeviceWatch?
    /// Why there is no device now (`Metrics.deviceProblem`); nil while it plays.
    let deviceProblem = Mutex<String?>(nil)
    /// Commands held while there was no device are still to be sent on (`CommandQueue.release`).
    private var releasing = false
    private var reportedLost = 0
    /// The backlog at which `.deliveryBehind` is reported next; doubles each time, back to the
    /// first threshold once everything has been delivered.
    private var behindThreshold = EventDelivery.firstBehindThreshold
    static let firstBehindThreshold = 1024

    init(notices: SPSCRing<OutputNotice>, output: OutputThread, commands: CommandQueue, deviceWatch: DeviceWatch? = nil) {
        self.notices = notices
        self.output = output
        self.commands = commands
        self.deviceWatch = deviceWatch
        completionQueue.setSpecific(key: Self.handlerQueueKey, value: true)
        completionQueue.setSpecific(key: Self.completionQueueKey, value: true)
        eventQueue.setSpecific(key: Self.handlerQueueKey, value: true)
    }

    func start() {
        Threads.start(name: "sfx-events") { [self] in
            run()
        }
    }

    /// Stops the thread after the output thread has stopped; what is still pending completes as
    /// `.stopped`. Waits until every queued call has been made, unless called from a handler.
    func stop() {
        state.withLock { $0.stopped = true }
        finished.wait()
        drain()
        let (left, streams) = state.withLock { state in
            defer { state.retiring = [:]; state.streams = [:] }
            return (state.removeAll(), Array(state.streams.values))
        }
        for pending in left { finish(pending.completion, pending.handle, .stopped) }
        enqueue(on: eventQueue) { for stream in streams { stream.finish() } }
        if DispatchQueue.getSpecific(key: Self.handlerQueueKey) == nil {
            completionQueue.sync {}
            eventQueue.sync {}
        }
    }

    var handler: (@Sendable (EngineEvent) -> Void)? {
        get { state.withLock { $0.handler } }
        set {
            let unheard = state.withLock { state in
                state.handler = newValue
                defer { state.unheard = [] }
                return newValue == nil ? [] : state.unheard
            }
            if let newValue, !unheard.isEmpty { eventQueue.async { for event in unheard { newValue(event) } } }
        }
    }

    /// The most events kept for a first listener (`State.unheard`).
    static let unheardLimit = 64

    /// Completions and events handed over and not yet delivered (the notice ring included).
    var backlog: Int { queued.load(ordering: .relaxed) + notices.count }

    func makeStream() -> AsyncStream<EngineEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: EngineEvent.self, bufferingPolicy: .bufferingNewest(1024))
        let key = UUID()
        let unheard = state.withLock { state in
            state.streams[key] = continuation
            defer { state.unheard = [] }
            return state.unheard
        }
        for event in unheard { continuation.yield(event) }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.streams[key] = nil } }
        return stream
    }

    /// Whether the caller runs on the completion queue (where every completion runs).
    static var isOnCompletionQueue: Bool { DispatchQueue.getSpecific(key: completionQueueKey) == true }

    /// Registers a play before its command is sent; false once the engine has closed (the play
    /// must then be rejected, since nothing would deliver its completion later).
    /// `endless`: a loop without end, which can end only by a command (see `Pace`).
    func expect(_ voice: VoiceID, cue: any AnyObject & Sendable, completion: Completion?, handle: VoiceHandle,
                endless: Bool = false) -> Bool {
        state.withLock { state in
            guard !state.stopped else { return false }
            state.add(voice, Pending(completion: completion, handle: handle, cue: cue, endless: endless))
            return true
        }
    }

    /// Rejects a registered play whose command could not be sent.
    func reject(_ voice: VoiceID, _ reason: RejectReason) {
        guard let pending = take(voice) else { return }
        finish(pending.completion, pending.handle, .rejected(reason), counted: true)
    }

    /// Takes back a registered play whose command could not be sent, without completing it: the
    /// caller reports the refusal (`SoundEngine.start`).
    func withdraw(_ voice: VoiceID) {
        _ = state.withLock { $0.remove(voice) }
    }

    /// Takes `voice`'s pending play and, in the same step, counts its completion as queued, so
    /// that `waitUntilNoVoices` never finds the play gone and its completion not yet queued (it
    /// returned early now and then: a play made from that completion then came after it).
    private func take(_ voice: VoiceID) -> Pending? {
        state.withLock { state in
            let pending = state.remove(voice)
            if pending?.completion != nil { queued.wrappingAdd(1, ordering: .relaxed) }
            return pending
        }
    }

    /// Rejects a play that was never registered, on the completion queue like every other.
    func reject(_ completion: Completion?, _ handle: VoiceHandle?, _ reason: RejectReason) {
        finish(completion, handle, .rejected(reason))
    }

    /// Calls the completion on the completion queue, then hands the outcome to `Voice.outcome`.
    /// `counted`: `take` has counted the completion as queued already.
    private func finish(_ completion: Completion?, _ handle: VoiceHandle?, _ outcome: PlayOutcome, counted: Bool = false) {
        guard let completion else {
            handle?.fulfil(outcome)
            return
        }
        enqueue(on: completionQueue, counted: counted) {
            completion(outcome)
            handle?.fulfil(outcome)
        }
    }

    /// Keeps a disposed cue alive until the mixer releases it, and asks the mixer to release it
    /// (again from the delivery thread while the command queue is full).
    func retire(_ cue: Cue) {
        state.withLock { $0.retiring[cue.key] = cue }
        if !commands.send(.releaseCue(cue.key)) {
            state.withLock { $0.unsentReleases.append(cue.key) }
        }
    }

    /// Keeps `processor` alive while the mixer may use it and gives the key it will be released
    /// under.
    func keep(_ processor: EffectProcessor) -> UInt32 {
        state.withLock { state in
            let key = state.nextEffectKey
            state.nextEffectKey &+= 1
            state.effects[key] = processor
            return key
        }
    }

    /// Lets go of a processor the mixer never got (its command did not fit the queue).
    func forget(effect key: UInt32) {
        let processor = state.withLock { $0.effects.removeValue(forKey: key) }
        withExtendedLifetime(processor) {}
    }

    /// Waits until no play is pending and every queued completion has been called.
    func waitUntilNoVoices(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        func idle() -> Bool { state.withLock { $0.pending.isEmpty } && queued.load(ordering: .acquiring) == 0 }
        while ContinuousClock.now < deadline {
            if idle() || state.withLock({ $0.stopped }) { return true }
            usleep(5_000)
        }
        return idle()
    }

    // MARK: The thread

    private func run() {
        defer { finished.signal() }
        threadID.store(sfx_gettid(), ordering: .releasing)
        var pace = Pace()
        var poked = false
        while !state.withLock({ $0.stopped }) {
            let handled = drain()
            retrySends()
            watchBacklog()
            let interval = pace.next(busy: handled > 0 || poked, anyCanEnd: state.withLock { $0.ending > 0 })
            poked = commands.nudge.sleep(seconds: interval, wakeable: interval > Pace.fastest)
        }
    }

    /// The polling interval: `fastest` after a poll that found something or a command sent,
    /// doubled after each one that found nothing, up to `slowest` while a pending play can end
    /// by itself, `slowestIdle` while none can. A command sent cuts a longer sleep short
    /// (`Nudge`).
    struct Pace {
        static let fastest = 0.002
        static let slowest = 0.020
        static let slowestIdle = 0.200
        private(set) var interval = Pace.fastest

        mutating func next(busy: Bool, anyCanEnd: Bool) -> Double {
            interval = busy ? Self.fastest : min(interval * 2, anyCanEnd ? Self.slowest : Self.slowestIdle)
            return interval
        }
    }

    private func retrySends() {
        let keys = state.withLock { state in
            defer { state.unsentReleases = [] }
            return state.unsentReleases
        }
        let failed = keys.filter { !commands.send(.releaseCue($0)) }
        if !failed.isEmpty { state.withLock { $0.unsentReleases += failed } }
    }

    /// Reports a growing backlog (slow handlers) and reports the output thread lost.
    private func watchBacklog() {
        let waiting = backlog
        if waiting >= behindThreshold {
            publish(.deliveryBehind(waiting: waiting))
            behindThreshold *= 2
        } else if waiting == 0 {
            behindThreshold = Self.firstBehindThreshold
        }
        let lost = output.lostNotices.load(ordering: .relaxed)
        if lost > reportedLost {
            reportedLost = lost
            publish(.eventsLost(total: lost))
        }
    }

    /// Handles everything the output thread has reported; returns how many notices there were.
    ///
    /// Plays that ended are taken in batches of up to `batchSize`: one turn of the lock that
    /// producers take to register plays, and one block on the completion queue, per batch rather
    /// than per play, so that the thread keeps up with the mixer when many threads play at once.
    @discardableResult
    private func drain() -> Int {
        var handled = 0
        var ended: [(VoiceID, PlayOutcome)] = []
        var reports: [EngineEvent] = []
        while let notice = notices.pop() {
            handled += 1
            switch notice {
            case .mixer(let event):
                if let end = handle(event, reports: &reports) { ended.append(end) }
            case .xrun:
                reports.append(.xrun(total: output.xruns.load(ordering: .relaxed)))
            case .deviceLost(let code):
                let why = ALSAError(device: output.settings.request.device, operation: "play", code: code).description
                commands.hold(reason: why)
                deviceProblem.withLock { $0 = why }
                deviceWatch?.start()
                reports.append(.deviceLost(why))
            case .deviceRestored:
                releasing = true
                deviceProblem.withLock { $0 = nil }
                deviceWatch?.stop()
                reports.append(.deviceRestored(output.currentParameters))
            case .closedWhenIdle:
                reports.append(.deviceClosedWhenIdle)
            }
            if ended.count >= Self.batchSize {
                complete(ended)
                ended.removeAll(keepingCapacity: true)
            }
        }
        complete(ended)
        publish(reports)
        // Commands held for the device go once it is open (what the ring could not take, next time).
        if releasing { releasing = commands.release() }
        if output.realtimeStatus.load(ordering: .acquiring) < 0, !reportedRealtime {
            reportedRealtime = true
            let code = -output.realtimeStatus.load(ordering: .relaxed)
            publish(.realtimePriorityRefused(String(cString: strerror(code))
                + "; grant it with rtprio in /etc/security/limits.d, CAP_SYS_NICE, or run as root"))
        }
        return handled
    }

    static let batchSize = 512

    /// The play `event` ended and how, or nil for an event that ends none (a released cue, freed
    /// here); a stolen voice is also reported in `reports`.
    private func handle(_ event: MixerEvent, reports: inout [EngineEvent]) -> (VoiceID, PlayOutcome)? {
        let outcome: PlayOutcome
        switch event {
        case .finished: outcome = .finished
        case .stopped: outcome = .stopped
        case .stolen(let voice):
            outcome = .stolen
            reports.append(.voiceStolen(voice))
        case .rejected(_, let reason): outcome = .rejected(RejectReason(reason))
        case .cueReleased(let key):
            // Dropping the last reference frees the cue, here, off the real-time thread.
            let cue = state.withLock { $0.retiring.removeValue(forKey: key) }
            withExtendedLifetime(cue) {}
            return nil
        case .effectReleased(let key):
            forget(effect: key)
            return nil
        case .late(let voice, let frames):
            // Before the voice's terminal event: known by the time its outcome is.
            state.withLock { $0.pending[voice]?.handle }?.lateFrames.store(frames, ordering: .releasing)
            return nil
        }
        return event.voice.map { ($0, outcome) }
    }

    /// Takes the pending plays that `ended` in one turn of the lock, counting their completions
    /// as queued in the same step (see `take`), and makes their calls, in order, in one block on
    /// the completion queue. A play without a completion has its outcome recorded at once.
    private func complete(_ ended: [(VoiceID, PlayOutcome)]) {
        guard !ended.isEmpty else { return }
        let taken = state.withLock { state -> [(Pending, PlayOutcome)] in
            var taken: [(Pending, PlayOutcome)] = []
            taken.reserveCapacity(ended.count)
            for (voice, outcome) in ended {
                guard let pending = state.remove(voice) else { continue }
                if pending.completion != nil { queued.wrappingAdd(1, ordering: .relaxed) }
                taken.append((pending, outcome))
            }
            return taken
        }
        for (pending, outcome) in taken where pending.completion == nil { pending.handle.fulfil(outcome) }
        let calls = taken.compactMap { pending, outcome in pending.completion.map { ($0, pending.handle, outcome) } }
        guard !calls.isEmpty else { return }
        completionQueue.async { [self] in
            for (completion, handle, outcome) in calls {
                completion(outcome)
                handle.fulfil(outcome)
                queued.wrappingSubtract(1, ordering: .releasing)
            }
        }
    }

    /// Receives alert notices, on the event queue.
    var alertHandler: (@Sendable (AlertNotice) -> Void)? {
        get { state.withLock { $0.alertHandler } }
        set { state.withLock { $0.alertHandler = newValue } }
    }

    /// Delivers an alert notice to `onAlert` on the event queue, after the events before it.
    func publish(_ notice: AlertNotice) {
        guard let handler = alertHandler else { return }
        enqueue(on: eventQueue) { handler(notice) }
    }

    /// Delivers an event to `onEvent` and every stream, in order, on the event queue.
    func publish(_ event: EngineEvent) {
        publish([event])
    }

    /// Delivers events to `onEvent` and every stream, in order, in one block on the event queue.
    private func publish(_ events: [EngineEvent]) {
        guard !events.isEmpty else { return }
        queued.wrappingAdd(events.count, ordering: .relaxed)
        eventQueue.async { [self] in
            let (handler, streams) = state.withLock { state in
                if state.handler == nil, state.streams.isEmpty {
                    state.unheard.append(contentsOf: events.prefix(max(0, Self.unheardLimit - state.unheard.count)))
                }
                return (state.handler, Array(state.streams.values))
            }
            for event in events {
                handler?(event)
                for stream in streams { stream.yield(event) }
                queued.wrappingSubtract(1, ordering: .releasing)
            }
        }
    }

    private func enqueue(on queue: DispatchQueue, counted: Bool = false, _ call: @escaping @Sendable () -> Void) {
        if !counted { queued.wrappingAdd(1, ordering: .relaxed) }
        queue.async { [self] in
            call()
            queued.wrappingSubtract(1, ordering: .releasing)
        }
    }
}
