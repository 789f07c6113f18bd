import Glibc
import Synchronization
import SFXCore

/// What a game triggers instead of a file: one of several sounds, at a pitch and volume drawn
/// for each play, no more often than its cooldown and at most `maxInstances` at once
/// (`SoundEngine.play(_ event:...)`). An event keeps its own state (the generator, the
/// round-robin place, the shuffled order, the last play, the voices sounding), so one event
/// object is shared by everything that triggers it; it is safe to trigger from any thread.
///
/// ```swift
/// let step = try SoundEvent(name: "step", sounds: [a, b, c, d, e, f], choose: .shuffle,
///                           pitch: -1...1, volume: -3...0, cooldown: .milliseconds(80), maxInstances: 4)
/// engine.play(step)
/// ```
public final class SoundEvent: Sendable {
    /// How the sound of each play is picked.
    public enum Selection: String, Sendable, Hashable, CaseIterable {
        /// Any of them, each time (a repeat is possible).
        case random
        /// In order, then from the first again.
        case roundRobin
        /// Each sound once in a shuffled order, then a new order; never the same sound twice in
        /// a row, across reshuffles too (with two or more sounds).
        case shuffle
    }

    /// The settings of an event, as given.
    public struct Settings: Sendable, Hashable {
        public var name: String
        public var sounds: [SoundID]
        public var choose: Selection
        /// Pitch offset drawn per play, in semitones (−12…12: the rate 0.5…2).
        public var pitch: ClosedRange<Float>
        /// Volume drawn per play, in dB (−96…24).
        public var volume: ClosedRange<Float>
        /// The least time between two plays that start (0: none).
        public var cooldown: Duration
        /// At most this many voices of the event at once (0: no cap); a play beyond it takes the
        /// oldest one's place (that one fades out in 5 ms and completes `.stolen`), as the
        /// per-sound cap of `play(_:maxInstances:)` does.
        public var maxInstances: Int
        public var priority: VoicePriority
        public var group: SoundGroup
        /// Where the event sounds when a play gives no position: nil plays it unplaced (panned).
        public var source: Source?
        /// The generator's seed: the same seed gives the same sounds, pitches and volumes.
        public var seed: UInt64
    }

    public static let pitchRange: ClosedRange<Float> = -12...12
    public static let volumeRange: ClosedRange<Float> = -96...24
    public static let cooldownRange = Duration.zero...Duration.seconds(3600)

    public let settings: Settings
    public var name: String { settings.name }

    let state: Mutex<State>

    struct State {
        var generator: PCG32
        var nextInOrder = 0
        var bag: [Int] = []
        var last: Int?
        var lastStart: UInt64?
        /// Voices sounding, oldest first.
        var active: [VoiceID] = []
        /// Voices this event stopped to make room: their `.stopped` is reported as `.stolen`.
        var stolen: Set<VoiceID> = []
        /// Runs once when nothing sounds after `retire()` (a reloaded bank frees old sounds).
        var whenIdle: (@Sendable () -> Void)?
        var retired = false
    }

    /// Throws if a setting is out of range or `sounds` is empty.
    public init(name: String, sounds: [SoundID], choose: Selection = .shuffle, pitch: ClosedRange<Float> = 0...0,
                volume: ClosedRange<Float> = 0...0, cooldown: Duration = .zero, maxInstances: Int = 0,
                priority: VoicePriority = .normal, group: SoundGroup = .effects, source: Source? = nil,
                seed: UInt64 = 0x5f3759df) throws(SettingError) {
        guard !sounds.isEmpty else {
            throw SettingError(setting: "sounds", value: "[]", allowed: "one sound or more")
        }
        for bound in [pitch.lowerBound, pitch.upperBound] { try SettingError.check("pitch", bound, in: Self.pitchRange) }
        for bound in [volume.lowerBound, volume.upperBound] { try SettingError.check("volume", bound, in: Self.volumeRange) }
        try SettingError.check("cooldown", cooldown, in: Self.cooldownRange)
        try SettingError.check("maxInstances", maxInstances, in: 0...4096)
        if let source { try SoundEngine.checkSource(source) }
        settings = Settings(name: name, sounds: sounds, choose: choose, pitch: pitch, volume: volume, cooldown: cooldown,
                            maxInstances: maxInstances, priority: priority, group: group, source: source, seed: seed)
        state = Mutex(State(generator: PCG32(seed: seed)))
    }

    /// One play's draws: which sound, its rate and its linear gain.
    public struct Draw: Sendable, Hashable {
        public var index: Int
        public var semitones: Float
        public var decibels: Float
        public var rate: Float { Float(pow(2, Double(semitones) / 12)) }
        public var gain: Float { Float(pow(10, Double(decibels) / 20)) }
    }

    /// The next play's draws, in this order: the sound (a `bounded` draw for `.random`; for
    /// `.shuffle`, a new order when the last one is used up: Fisher–Yates from the end, `bounded(i+1)`
    /// for i = n−1…1, and if it would start with the sound just played, that one swaps with the
    /// one at 1 + `bounded(n−1)`), then the pitch (`unit()`), then the volume (`unit()`); a range
    /// a…b gives a + u·(b − a). Draws happen whether or not the range is empty, so a sequence
    /// depends on the seed alone. Advances the event's state as a play does (but starts nothing).
    public func draw() -> Draw {
        state.withLock { draw(&$0) }
    }

    func draw(_ state: inout State) -> Draw {
        let n = settings.sounds.count
        let index: Int
        switch settings.choose {
        case .random:
            index = Int(state.generator.bounded(UInt32(n)))
        case .roundRobin:
            index = state.nextInOrder % n
            state.nextInOrder = (index + 1) % n
        case .shuffle:
            if state.bag.isEmpty {
                var bag = Array(0..<n)
                var i = n - 1
                while i > 0 {
                    let j = Int(state.generator.bounded(UInt32(i + 1)))
                    bag.swapAt(i, j)
                    i -= 1
                }
                if n > 1, bag[0] == state.last {
                    bag.swapAt(0, 1 + Int(state.generator.bounded(UInt32(n - 1))))
                }
                state.bag = bag.reversed()     // taken from the end
            }
            index = state.bag.removeLast()
        }
        state.last = index
        let p = state.generator.unit(), v = state.generator.unit()
        let pitch = settings.pitch, volume = settings.volume
        return Draw(index: index, semitones: pitch.lowerBound + p * (pitch.upperBound - pitch.lowerBound),
                    decibels: volume.lowerBound + v * (volume.upperBound - volume.lowerBound))
    }

    /// Voices of the event sounding now (started and not yet completed).
    public var activeVoices: Int { state.withLock { $0.active.count } }

    /// Marks the event replaced: `body` runs once nothing of it sounds (at once if nothing does).
    func retire(whenIdle body: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            state.retired = true
            if state.active.isEmpty { return true }
            state.whenIdle = body
            return false
        }
        if now { body() }
    }

    /// A voice of the event ended: forgets it, and says how it ended as the caller sees it.
    func ended(_ voice: VoiceID, _ outcome: PlayOutcome) -> PlayOutcome {
        let (seen, idle) = state.withLock { state -> (PlayOutcome, (@Sendable () -> Void)?) in
            state.active.removeAll { $0 == voice }
            let wasStolen = state.stolen.remove(voice) != nil
            var idle: (@Sendable () -> Void)?
            if state.retired, state.active.isEmpty { idle = state.whenIdle; state.whenIdle = nil }
            return (wasStolen && outcome == .stopped ? .stolen : outcome, idle)
        }
        idle?()
        return seen
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
