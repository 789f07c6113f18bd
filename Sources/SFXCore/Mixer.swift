#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Mixes cues into one interleaved output stream: voices, groups, fades, voice limits and
/// stealing, master gain and a limiter — a pure function of the commands it is given and the
/// frames it has rendered. No devices, no files, no clocks: the same commands applied before the
/// same frames always produce bit-identical output, which is how it is tested offline.
///
/// ```swift
/// let mixer = Mixer(format: .standard)                       // 48 kHz stereo, 64 voices
/// mixer.apply(.play(PlayRequest(voice: VoiceID(1), cue: tock, gain: 0.8, pan: -0.5)))
/// mixer.render(into: period, frameCount: 256)                // on the real-time thread
/// mixer.drainEvents { event, frame in … }                    // .finished(VoiceID(1)) …
/// ```
///
/// ## Real time
/// Everything is allocated in `init`, and written there once so that no page is first touched on
/// the audio thread. `apply`, `render` and `drainEvents` never allocate, lock, log or retain
/// anything: cues are held as `Unmanaged<Cue>` and voices live in a fixed table, so they can run
/// on the audio thread. A mixer belongs to one thread at a time: the engine feeds it commands
/// through an `SPSCRing<MixerCommand>` (`apply(from:limit:)` takes at most `limit` of them, so
/// the work of one period is bounded; the rest wait in the ring, in order) and calls `render`
/// from the audio thread. Its mutable state lives behind pointers allocated in `init`,
/// so no access to it needs the runtime's dynamic exclusivity check.
///
/// What one command costs: a play finds a free slot in a bitmap of occupied slots (the lowest
/// free slot, one find-first-set per 64 slots) and registers its `VoiceID` in an open-addressing
/// table (half full at most), so a play, `stop`, `setGain` and `setPan` take constant time
/// whatever the number of voices. Scanning the voices happens only where the answer depends on
/// all of them: stealing when every voice is busy, an instance cap (`maxInstances` > 0), cutting
/// a tail when every tail slot is busy, and the stops of a group, of everything or of a cue.
///
/// ## What one voice sounds like
/// Each output sample of a voice is `cue sample × channel gain × envelope`, and voices are summed
/// into their group's bus, in slot order:
/// - **Pan, mono cue into stereo output** (constant power): left = gain·cos((pan+1)·π/4),
///   right = gain·sin((pan+1)·π/4); the centre is −3 dB on each side.
/// - **Pan, stereo cue into stereo output** (balance): left = gain·min(1, 1−pan),
///   right = gain·min(1, 1+pan); the centre plays the cue unchanged, panning right turns the
///   left channel down, and hard left or right silences the other side.
/// - **Mono output**: pan is ignored; a stereo cue is downmixed as (left + right)/2.
/// - **Envelope**: a voice fades in linearly over `startFadeFrames` (frame k of the voice gets
///   (k+1)/startFadeFrames). A stop fades linearly from wherever the envelope is to 0 over its
///   fade frames (at least `startFadeFrames`), then the voice ends and reports `.stopped`.
///   A cue that simply ends (after its loops) stops at its last frame, without a fade.
/// - **Changes** of gain or pan glide linearly, per sample, over `smoothingFrames`, in the
///   channel-gain domain; so do group gain, group mute and master gain.
/// - **Crossfade**: a stream started with `StreamRequest.crossfadeFrom` fades in over its
///   fade-in frames as that playing stream fades out over the same frames, from the same frame;
///   both envelopes are then heard as sin(π/2 · envelope), so the gains are sin θ and cos θ of
///   one angle (equal power).
/// - **Fade-in**: a play may ask for a longer fade-in (`PlayRequest.fadeInFrames`): the same
///   linear envelope over max(fadeInFrames, startFadeFrames) frames.
/// - **Pause** of a voice, a group or everything glides each voice's pause gain to 0 over
///   `smoothingFrames`, so it never clicks; once silent the voice stops advancing and keeps its
///   position. Resume glides back from there to 1. A voice is held while any of the three pauses
///   it (a voice started in a paused group or while everything is paused starts held). A voice
///   stopped while paused and silent ends at once.
/// - **Rate** (0.5…2) changes speed and pitch together, as SoundPool's setRate: the voice moves
///   `rate` source frames per output frame and each output frame is the straight line between the
///   two source frames around its position (linear interpolation). At rate 1 the samples pass
///   unchanged. A cue of n frames at rate r lasts about n / r frames.
///
/// ## Streaming voices
/// A voice may read a `StreamRing` instead of a cue (`MixerCommand.playStream`): a reader thread
/// decodes ahead into the ring, the voice's read cursor lives in its slot, and a frame not yet
/// written plays as silence and counts an underrun — the mixer never waits. `releaseStreams()`
/// publishes the cursors so the producer may reuse those frames (see `StreamRing`).
///
/// ## Ducking
/// While a voice of a trigger group plays (not paused), each group it ducks is multiplied by the
/// rule's gain, glided in over its attack and back out over its release (`Ducking`; by default
/// alerts lower music by 12 dB). The ramps start at the frame the first trigger voice starts and
/// at the frame after the last one ends, whatever the render blocks.
///
/// ## Voices, stealing and events
/// At most `maxVoices` voices play at once. A play beyond that steals the lowest-priority voice
/// (the oldest among equals) unless it is of higher priority than the new one, in which case the
/// new voice is rejected. A `maxInstances` cap steals the oldest voice of the same cue instead.
/// Stolen and stopped voices fade out in `tailVoices` extra slots; should those run out, the tail
/// closest to silence is cut. Every play command leads to exactly one terminal event —
/// `.finished`, `.stopped`, `.stolen` or `.rejected` — posted when the voice falls silent.
/// Events wait in a fixed buffer of `eventCapacity`; drain it after every render (what does not
/// fit is counted in `droppedEventCount`).
///
/// ## Plays at a frame
/// `MixerCommand.playAt` starts a voice on an exact output frame, inside a render block: the
/// block ends where the start falls (the law, the schedule's capacity and what cancels a waiting
/// play are in MixerSchedule.swift). With nothing scheduled, blocks are as they always were.
///
/// ## Master bus
/// Groups are summed in index order, each times its gain (and 0 when muted), then times the
/// master gain, then through a peak limiter (instant attack, exponential release over
/// `limiterReleaseFrames`, ceiling `limiterThreshold`) and a soft clip that is the identity below
/// the threshold: output never exceeds ±1 and is never NaN or infinite, while signals that stay
/// below the threshold pass through unchanged.
public final class Mixer: @unchecked Sendable {
    /// The mixer's fixed resources and time constants, in frames of its sample rate. Values out
    /// of range are brought into range when the mixer is made.
    public struct Configuration: Sendable, Hashable {
        /// Voices that may play at once (0 or more).
        public var maxVoices: Int
        /// Extra slots where stopped and stolen voices fade out.
        public var tailVoices: Int
        /// Fade-in of every voice and the shortest stop fade: the declick.
        public var startFadeFrames: Int
        /// Fade-out of stolen voices and released cues; the natural default for stops.
        public var stopFadeFrames: Int
        /// Glide time of gain, pan, mute and master gain changes.
        public var smoothingFrames: Int
        /// The limiter's ceiling, 0.1…0.99 (linear).
        public var limiterThreshold: Float
        /// Time constant of the limiter's release.
        public var limiterReleaseFrames: Int
        /// The largest block `render` processes at once (longer calls are split).
        public var maxFramesPerRender: Int
        /// Events held between two drains.
        public var eventCapacity: Int
        /// The ducking rules the mixer starts with (one per trigger group; see `Ducking`).
        public var ducking: [Ducking]
        /// Whether `render` calls `releaseStreams()` itself when it ends (the engine's case); off
        /// when the caller releases stream frames later, once they are past the DAC.
        public var releasesStreamsAfterRender: Bool
        /// Extra slots for virtual voices: positional voices too quiet to hear, which keep their
        /// place in time without being mixed (see "Positional voices").
        public var virtualVoices: Int
        /// The level below which a positional voice is virtual: its gain × distance × cone ×
        /// listener × group × master gain, linear (1e-4 is −80 dB; 0 turns virtual voices off).
        public var virtualThreshold: Float
        /// How many frames rewind mode may render again after a snapshot (its device buffer at
        /// most): the HRTF histories keep that much room, so only their small state is copied.
        public var rewindHeadroomFrames: Int
        /// Effect buses, 0…4: each runs one effect (`MixerCommand.setEffect`) on what voices send
        /// it (`PlayRequest.sends`, `MixerCommand.setSend`) and returns it into a group.
        public var effectBuses: Int

        /// Defaults for `sampleRate`: 64 voices plus 16 tails, a 0.3 ms start fade, 5 ms stop
        /// fades and smoothing, a −1 dBFS limiter with a 50 ms release, 1024-frame blocks.
        public init(sampleRate: Int = 48_000, maxVoices: Int = 64) {
            self.maxVoices = maxVoices
            tailVoices = 16
            startFadeFrames = max(1, sampleRate * 3 / 10_000)
            stopFadeFrames = sampleRate / 200
            smoothingFrames = sampleRate / 200
            limiterThreshold = 0.891
            limiterReleaseFrames = sampleRate / 20
            maxFramesPerRender = 1024
            eventCapacity = 1024
            ducking = [.alertsDuckMusic(sampleRate: sampleRate)]
            releasesStreamsAfterRender = true
            virtualVoices = 32
            virtualThreshold = 1e-4
            rewindHeadroomFrames = 4096
            effectBuses = 4
        }

        fileprivate var normalized: Configuration {
            var c = self
            c.maxVoices = max(0, maxVoices)
            c.tailVoices = max(0, tailVoices)
            c.startFadeFrames = max(0, startFadeFrames)
            c.stopFadeFrames = max(0, stopFadeFrames)
            c.smoothingFrames = max(0, smoothingFrames)
            c.limiterThreshold = limiterThreshold.isNaN ? 0.891 : min(max(limiterThreshold, 0.1), 0.99)
            c.limiterReleaseFrames = max(0, limiterReleaseFrames)
            c.maxFramesPerRender = max(1, maxFramesPerRender)
            c.eventCapacity = max(1, eventCapacity)
            c.ducking = ducking.map(Mixer.clampedDucking)
            c.virtualVoices = max(0, virtualVoices)
            c.virtualThreshold = virtualThreshold.isNaN ? 0 : min(max(virtualThreshold, 0), 1)
            c.rewindHeadroomFrames = max(0, rewindHeadroomFrames)
            c.effectBuses = min(max(0, effectBuses), 4)
            return c
        }
    }

    /// The largest linear gain a voice, group or the master accepts (+24 dB: `SettingLimits.gain`).
    public static let maximumGain: Float = SettingLimits.gain.upperBound

    public let format: AudioFormat
    public let configuration: Configuration

    /// Frames rendered since the mixer was made: the time base of events.
    public var frameTime: Int { state.pointee.frameTime }
    /// Voices sounding, fading tails included.
    public var activeVoiceCount: Int { state.pointee.activeVoiceCount }
    /// Voices sounding and not fading out: the ones counted against `maxVoices`.
    public var playingVoiceCount: Int { state.pointee.playingVoiceCount }
    /// Voices stolen so far, by the voice limit or an instance cap.
    public var stolenCount: Int { state.pointee.stolenCount }
    /// Play requests rejected so far.
    public var rejectedCount: Int { state.pointee.rejectedCount }
    /// Events lost because the event buffer was full.
    public var droppedEventCount: Int { state.pointee.droppedEventCount }
    /// Playing voices that are virtual (inaudible, not mixed); the others are real.
    public var virtualVoiceCount: Int { state.pointee.virtualCount }
    /// Playing voices that are mixed: at most `maxVoices`.
    public var realVoiceCount: Int { state.pointee.playingVoiceCount - state.pointee.virtualCount }
    /// Whether an effect bus's tail still sounds (its input has stopped, its output has not
    /// yet fallen below −96 dBFS): the output is not idle while one does.
    public var effectsSounding: Bool {
        for bus in 0..<configuration.effectBuses {
            if let p = effectBuses[bus].processor, p._withUnsafeGuaranteedRef({ $0.isSounding }) { return true }
        }
        return false
    }

    /// Where positional voices are heard from.
    public var listener: Listener { state.pointee.listener }
    public var world: SpatialWorld { state.pointee.world }

    /// Positional voices are updated (gains, pan, pitch, virtual or real) every this many frames
    /// of `frameTime`, whatever the render blocks; their gains glide from one update to the next.
    public static let spatialUpdateFrames = 128

    struct Group {
        var gain = Ramp(1)
        var mute = Ramp(1)
        /// The group is paused: its voices, and those started in it meanwhile, are held.
        var paused = false
        /// The gain other groups' ducking rules put on this group now.
        var duck = Ramp(1)
        /// This group's rule as a trigger: the groups it ducks (one bit each), by how much, how fast.
        var duckTargets: UInt32 = 0
        var duckGain: Float = 1
        var duckAttack = 0
        var duckRelease = 0
    }

    /// Everything that changes as the mixer runs, in memory of its own: `let` pointers need no
    /// exclusivity checks, stored `var`s of a class do.
    struct State {
        var frameTime = 0
        var activeVoiceCount = 0
        var playingVoiceCount = 0
        var stolenCount = 0
        var rejectedCount = 0
        var droppedEventCount = 0
        var eventCount = 0
        var releasingCount = 0
        var master = Ramp(1)
        var limiter: Limiter
        var playCount: UInt64 = 0
        /// Everything paused (`setAllPaused`): every voice, and those started meanwhile, is held.
        var paused = false
        var listener = Listener()
        var world = SpatialWorld()
        /// Voices (playing or fading) that are positional, and playing voices that are virtual.
        var positionalCount = 0
        var virtualCount = 0
        /// Scratch of one block: which effect buses got input.
        var effectInputInUse: UInt32 = 0
        /// Plays waiting in `schedule` for their start frame.
        var scheduledCount = 0
    }

    /// One entry of the `VoiceID` → slot table; `slot` < 0 marks an empty entry.
    struct IndexEntry {
        var id: UInt64 = 0
        var slot: Int32 = -1
    }

    let slotCount: Int
    let voices: UnsafeMutablePointer<VoiceSlot>
    /// Whether the slot arrays and the schedule are mapped zeroed (a snapshot's): see `init`.
    private let slotsZeroed: Bool
    /// One bit per slot, set while the slot holds a voice; bits past `slotCount` stay set.
    let occupied: UnsafeMutablePointer<UInt64>
    let occupiedWords: Int
    /// Open addressing with linear probing, at least twice as many entries as slots.
    let index: UnsafeMutablePointer<IndexEntry>
    let indexMask: Int
    let groups: UnsafeMutablePointer<Group>
    /// Per slot, the voice's filters; per group, the group's (`VoiceFilters.filter` only).
    let filters: UnsafeMutablePointer<VoiceFilters>
    let groupFilters: UnsafeMutablePointer<VoiceFilters>
    /// One block of one voice, where a filtered voice is mixed before it is filtered.
    private let scratch: UnsafeMutablePointer<Float>
    /// Binaural rendering of positional voices (stereo output only), or nil: the table, each
    /// slot's renderer (state a snapshot copies) and history ring, and the renderers' scratch.
    public let hrtf: HRTFTable?
    let hrtfVoices: UnsafeMutablePointer<HRTFVoice>
    /// Per slot, the voice's send levels; the buses; one block of each bus's input; and (in a
    /// snapshot's mixer) the processors' saved states, `effectStateBytes` per bus.
    let sends: UnsafeMutablePointer<VoiceSends>
    let effectBuses: UnsafeMutablePointer<EffectBus>
    private let effectInputs: UnsafeMutablePointer<Float>
    let effectStates: UnsafeMutablePointer<UInt8>
    static let effectStateBytes = 256
    private let hrtfMemory: UnsafeMutablePointer<Float>?
    private let hrtfMemoryStride: Int
    private let hrtfScratch: UnsafeMutablePointer<Float>?
    /// One bus per group, `maxFramesPerRender × channels` samples each.
    private let buses: UnsafeMutablePointer<Float>
    private let events: UnsafeMutablePointer<(MixerEvent, Int)>
    /// Cues being released: their keys, and the frame at which their latest voice ended.
    let releasingCues: UnsafeMutablePointer<(key: UInt32, lastEnd: Int)>
    let state: UnsafeMutablePointer<State>
    /// Plays at a future frame (`MixerCommand.playAt`), in the order they came:
    /// `scheduleCapacity` entries, `State.scheduledCount` in use (see MixerSchedule.swift).
    let schedule: UnsafeMutablePointer<ScheduledStart>
    /// Per group, during one render block: frames from the block's start until its last voice
    /// that counts for ducking stopped sounding (the block's length while one still sounds).
    /// Scratch of one block, not state: a snapshot need not hold it.
    private let duckUntil: UnsafeMutablePointer<Int>

    /// A mixer for `format`; positional voices are rendered through `hrtf` when it is given,
    /// the output is stereo and the table is at the output's rate (otherwise they are panned).
    public convenience init(format: AudioFormat, configuration: Configuration, hrtf: HRTFTable?) {
        self.init(format: format, configuration: configuration, hrtf: hrtf, histories: true)
    }

    public convenience init(format: AudioFormat, configuration: Configuration) {
        self.init(format: format, configuration: configuration, hrtf: nil, histories: true)
    }

    /// `histories: false` (a snapshot's mixer) keeps no HRTF history rings: a snapshot copies
    /// the renderers' state only (see `HRTFVoice` on rewind).
    init(format: AudioFormat, configuration: Configuration, hrtf: HRTFTable?, histories: Bool) {
        let c = configuration.normalized
        self.format = format
        self.configuration = c
        slotCount = c.maxVoices + c.virtualVoices + c.tailVoices
        // A snapshot's slots (`histories: false`) are copied into only while occupied, and read
        // only then: they are mapped zeroed and left untouched, so the 64 snapshots of rewind
        // mode hold memory for the slots voices have used, not for every slot (9 MB for `sfx
        // serve`).
        slotsZeroed = !histories
        voices = Self.slots(max(slotCount, 1), zeroed: slotsZeroed, else: VoiceSlot())
        groups = .allocate(capacity: SoundGroup.count)
        groups.initialize(repeating: Group(), count: SoundGroup.count)
        let openFilters = VoiceFilters(sampleRate: format.sampleRate, smoothingFrames: c.smoothingFrames)
        filters = Self.slots(max(slotCount, 1), zeroed: slotsZeroed, else: openFilters)
        groupFilters = .allocate(capacity: SoundGroup.count)
        groupFilters.initialize(repeating: openFilters, count: SoundGroup.count)
        scratch = .allocate(capacity: c.maxFramesPerRender * format.channels)
        scratch.initialize(repeating: 0, count: c.maxFramesPerRender * format.channels)
        let table = hrtf.flatMap { $0.sampleRate == format.sampleRate && format.channels == 2 ? $0 : nil }
        self.hrtf = table
        hrtfVoices = Self.slots(max(slotCount, 1), zeroed: slotsZeroed, else: HRTFVoice())
        sends = Self.slots(max(slotCount, 1), zeroed: slotsZeroed, else: VoiceSends())
        effectBuses = .allocate(capacity: max(c.effectBuses, 1))
        effectBuses.initialize(repeating: EffectBus(), count: max(c.effectBuses, 1))
        let inputFloats = max(c.effectBuses, 1) * (histories ? c.maxFramesPerRender * format.channels : 1)
        effectInputs = .allocate(capacity: inputFloats)
        effectInputs.initialize(repeating: 0, count: inputFloats)
        effectStates = .allocate(capacity: max(c.effectBuses, 1) * Self.effectStateBytes)
        effectStates.initialize(repeating: 0, count: max(c.effectBuses, 1) * Self.effectStateBytes)
        if let table, histories {
            hrtfMemoryStride = HRTFVoice.memoryFloats(table: table, maximumFrames: c.maxFramesPerRender, rewindHeadroomFrames: c.rewindHeadroomFrames)
            let memory = UnsafeMutablePointer<Float>.allocate(capacity: hrtfMemoryStride * max(slotCount, 1))
            memory.initialize(repeating: 0, count: hrtfMemoryStride * max(slotCount, 1))
            hrtfMemory = memory
            let scratchFloats = HRTFVoice.scratchFloats(table: table, maximumFrames: c.maxFramesPerRender)
            let work = UnsafeMutablePointer<Float>.allocate(capacity: scratchFloats)
            work.initialize(repeating: 0, count: scratchFloats)
            hrtfScratch = work
        } else {
            hrtfMemoryStride = 0
            hrtfMemory = nil
            hrtfScratch = nil
        }
        buses = .allocate(capacity: SoundGroup.count * c.maxFramesPerRender * format.channels)
        buses.initialize(repeating: 0, count: SoundGroup.count * c.maxFramesPerRender * format.channels)
        events = .allocate(capacity: c.eventCapacity)
        events.initialize(repeating: (.finished(VoiceID(0)), 0), count: c.eventCapacity)
        releasingCues = .allocate(capacity: max(slotCount, 1))
        releasingCues.initialize(repeating: (0, 0), count: max(slotCount, 1))
        occupiedWords = max(1, (slotCount + 63) / 64)
        occupied = .allocate(capacity: occupiedWords)
        occupied.initialize(repeating: 0, count: occupiedWords)
        for slot in slotCount..<(occupiedWords * 64) { occupied[slot / 64] |= 1 << UInt64(slot % 64) }
        var indexSize = 2
        while indexSize < 2 * slotCount { indexSize <<= 1 }
        index = .allocate(capacity: indexSize)
        index.initialize(repeating: IndexEntry(), count: indexSize)
        indexMask = indexSize - 1
        state = .allocate(capacity: 1)
        state.initialize(to: State(limiter: Limiter(threshold: c.limiterThreshold, releaseFrames: c.limiterReleaseFrames)))
        duckUntil = .allocate(capacity: SoundGroup.count)
        duckUntil.initialize(repeating: 0, count: SoundGroup.count)
        schedule = Self.slots(Mixer.scheduleCapacity, zeroed: slotsZeroed, else: ScheduledStart())
        for rule in c.ducking { setDucking(rule) }
    }

    /// A mixer with the default configuration for the format's sample rate.
    public convenience init(format: AudioFormat) {
        self.init(format: format, configuration: Configuration(sampleRate: format.sampleRate))
    }

    /// Memory for `count` slots of plain data: `initial` in each, or, `zeroed`, pages mapped
    /// anonymous, zero and not resident until written (unmapped in deinit). Not calloc: from
    /// the heap it clears, and so touches, whatever was freed there before.
    private static func slots<T>(_ count: Int, zeroed: Bool, else initial: T) -> UnsafeMutablePointer<T> {
        guard zeroed else {
            let memory = UnsafeMutablePointer<T>.allocate(capacity: count)
            memory.initialize(repeating: initial, count: count)
            return memory
        }
        precondition(_isPOD(T.self), "snapshot slots must be plain data")
        let memory = mmap(nil, count * MemoryLayout<T>.stride, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let memory, memory != MAP_FAILED else { fatalError("out of memory for \(count) mixer slots") }
        return memory.bindMemory(to: T.self, capacity: count)
    }

    private static func unmap<T>(_ slots: UnsafeMutablePointer<T>, _ count: Int) {
        munmap(slots, count * MemoryLayout<T>.stride)
    }

    deinit {
        if slotsZeroed {
            let count = max(slotCount, 1)
            Self.unmap(voices, count)
            Self.unmap(filters, count)
            Self.unmap(hrtfVoices, count)
            Self.unmap(sends, count)
            Self.unmap(schedule, Mixer.scheduleCapacity)
        } else {
            schedule.deallocate()
            voices.deallocate()
            filters.deallocate()
            hrtfVoices.deallocate()
            sends.deallocate()
        }
        groups.deallocate()
        groupFilters.deallocate()
        scratch.deallocate()
        effectBuses.deallocate()
        effectInputs.deallocate()
        effectStates.deallocate()
        hrtfMemory?.deallocate()
        hrtfScratch?.deallocate()
        buses.deallocate()
        events.deallocate()
        releasingCues.deallocate()
        occupied.deallocate()
        index.deallocate()
        state.deallocate()
        duckUntil.deallocate()
    }

    // MARK: Commands

    /// Applies at most `limit` commands from `commands`, oldest first, at the current frame time;
    /// the others stay queued, in order, for a later call. Returns how many it applied. Call from
    /// the ring's consumer thread only.
    @discardableResult
    public func apply(from commands: SPSCRing<MixerCommand>, limit: Int) -> Int {
        var count = 0
        while count < limit, let command = commands.pop() {
            apply(command)
            count += 1
        }
        return count
    }

    /// Applies one command at the current frame time.
    public func apply(_ command: MixerCommand) {
        switch command {
        case .play(let request):
            play(request)
        case .playAt(let request, let frame):
            schedule(.cue(request), at: frame)
        case .playStreamAt(let request, let frame):
            schedule(.stream(request), at: frame)
        case .crossfadeAtEnd(let request, let expectedEnd):
            scheduleAtEnd(request, expectedEnd: expectedEnd)
        case .stop(let voice, let fadeFrames):
            if let slot = slot(of: voice) { fadeOut(slot, frames: stopFade(fadeFrames), reporting: .stopped(voice)) }
            else if state.pointee.scheduledCount > 0 { cancelScheduled(reporting: .stopped) { $0.voice == voice } }
        case .setGain(let voice, let gain):
            if let slot = slot(of: voice) {
                voices[slot].gain = Mixer.clampedGain(gain)
                glideChannelGains(slot)
            }
        case .setPan(let voice, let pan):
            if let slot = slot(of: voice) {
                voices[slot].pan = Mixer.clampedPan(pan)
                glideChannelGains(slot)
            }
        case .stopAll(let fadeFrames):
            if state.pointee.scheduledCount > 0 { cancelScheduled(reporting: .stopped) { _ in true } }
            forEachVoice { slot in
                fadeOut(slot, frames: stopFade(fadeFrames), reporting: .stopped(voices[slot].id))
            }
        case .stopGroup(let group, let fadeFrames):
            if state.pointee.scheduledCount > 0 { cancelScheduled(reporting: .stopped) { $0.group == group } }
            forEachVoice { slot in
                if voices[slot].group == Int(group.rawValue) {
                    fadeOut(slot, frames: stopFade(fadeFrames), reporting: .stopped(voices[slot].id))
                }
            }
        case .releaseCue(let key):
            releaseCue(key)
        case .setGroupGain(let group, let gain):
            groups[Int(group.rawValue)].gain.glide(to: Mixer.clampedGain(gain), over: configuration.smoothingFrames)
        case .setGroupMuted(let group, let muted):
            groups[Int(group.rawValue)].mute.glide(to: muted ? 0 : 1, over: configuration.smoothingFrames)
        case .setMasterGain(let gain):
            state.pointee.master.glide(to: Mixer.clampedGain(gain), over: configuration.smoothingFrames)
        case .playStream(let request):
            playStream(request)
        case .pause(let voice):
            if let slot = slot(of: voice) { setPause(slot, VoiceSlot.pausedByVoice, true) }
        case .resume(let voice):
            if let slot = slot(of: voice) { setPause(slot, VoiceSlot.pausedByVoice, false) }
        case .setRate(let voice, let rate):
            if let slot = slot(of: voice) { voices[slot].rate = Double(Mixer.clampedRate(rate)) }
        case .setGroupPaused(let group, let paused):
            let g = Int(group.rawValue)
            groups[g].paused = paused
            forEachVoice { slot in
                if voices[slot].group == g { setPause(slot, VoiceSlot.pausedByGroup, paused) }
            }
        case .setAllPaused(let paused):
            state.pointee.paused = paused
            forEachVoice { slot in setPause(slot, VoiceSlot.pausedByAll, paused) }
        case .setDucking(let rule):
            setDucking(Mixer.clampedDucking(rule))
        case .setListener(let listener):
            state.pointee.listener = Mixer.clampedListener(listener)
        case .setWorld(let world):
            state.pointee.world = Mixer.clampedWorld(world)
        case .setSource(let voice, let source):
            if let slot = slot(of: voice) {
                if !voices[slot].positional {
                    voices[slot].positional = true
                    state.pointee.positionalCount += 1
                }
                voices[slot].source = source.clamped
            }
        case .setFilter(let voice, let settings):
            if let slot = slot(of: voice) { filters[slot].setFilter(settings?.clamped(sampleRate: format.sampleRate)) }
        case .setGroupFilter(let group, let settings):
            groupFilters[Int(group.rawValue)].setFilter(settings?.clamped(sampleRate: format.sampleRate))
        case .setEffect(let bus, let reference, let group):
            setEffect(bus: bus, reference, returnGroup: Int(group.rawValue))
        case .setSend(let voice, let bus, let level):
            if let slot = slot(of: voice), bus >= 0, bus < configuration.effectBuses {
                sends[slot][bus].glide(to: VoiceSends.clamped(level), over: configuration.smoothingFrames)
            }
        case .changeSource(let voice, let change):
            if let slot = slot(of: voice), voices[slot].positional {
                voices[slot].source = change.applied(to: voices[slot].source)
            }
        case .setPosition(let voice, let position, let velocity):
            if let slot = slot(of: voice), voices[slot].positional {
                var source = voices[slot].source
                source.position = position
                source.velocity = velocity
                voices[slot].source = source.clamped
            }
        }
    }

    /// Sets or clears one reason for a voice to be paused; the pause gain glides to 0 when the
    /// first reason appears and back to 1 when the last one goes. Fading voices are not paused.
    private func setPause(_ slot: Int, _ reason: UInt8, _ paused: Bool) {
        guard voices[slot].phase == .playing || !paused else { return }
        let was = voices[slot].pauses
        voices[slot].pauses = paused ? was | reason : was & ~reason
        if (was == 0) != (voices[slot].pauses == 0) {
            voices[slot].hold.glide(to: voices[slot].pauses == 0 ? 1 : 0, over: configuration.smoothingFrames)
        }
    }

    private func setDucking(_ rule: Ducking) {
        let g = Int(rule.trigger.rawValue)
        let bit = UInt32(1) << UInt32(rule.target.rawValue)
        if rule.gain >= 1 {
            groups[g].duckTargets &= ~bit
            return
        }
        groups[g].duckTargets |= bit
        groups[g].duckGain = rule.gain
        groups[g].duckAttack = rule.attackFrames
        groups[g].duckRelease = rule.releaseFrames
    }

    /// Publishes every streaming voice's read cursor as its ring's `released` cursor, so the
    /// producer may overwrite the frames before it. The only place the mixer advances it: the
    /// engine calls it after each render (`Configuration.releasesStreamsAfterRender`); rewind
    /// mode, which may render frames again from a saved state, calls it once they are past the DAC.
    public func releaseStreams() {
        forEachVoice { slot in
            guard let stream = voices[slot].stream else { return }
            let position = voices[slot].position
            stream._withUnsafeGuaranteedRef { ring in
                if ring.released.load(ordering: .relaxed) < position { ring.released.store(position, ordering: .releasing) }
            }
        }
    }

    func play(_ request: PlayRequest) {
        let (samples, frameCount, cueFormat, key) = request.cue._withUnsafeGuaranteedRef {
            ($0.samples.baseAddress, $0.frameCount, $0.format, $0.key)
        }
        guard cueFormat.sampleRate == format.sampleRate else { return reject(request.voice, .formatMismatch) }
        guard slot(of: request.voice) == nil else { return reject(request.voice, .duplicateVoice) }
        guard !isReleasing(key) else { return reject(request.voice, .cueReleasing) }
        guard let samples, frameCount > 0 else { return post(.finished(request.voice)) }

        if request.maxInstances > 0 {
            while let oldest = oldestInstance(of: key, ifAtLeast: request.maxInstances) { steal(oldest) }
        }
        var voice = VoiceSlot()
        voice.gain = Mixer.clampedGain(request.gain)
        if let source = request.source { place(&voice, source.clamped, group: request.group, virtualizable: true) }
        guard makeRoom(for: &voice, priority: request.priority) else { return reject(request.voice, .noVoiceAvailable) }
        voice.cueKey = key
        voice.samples = samples
        voice.frameCount = frameCount
        voice.cueChannels = cueFormat.channels
        voice.loopsLeft = request.loops
        voice.rate = Double(Mixer.clampedRate(request.rate))
        start(voice, id: request.voice, gain: request.gain, pan: request.pan, group: request.group,
              priority: request.priority, fadeInFrames: request.fadeInFrames, filter: request.filter,
              sends: request.sends)
    }

    func playStream(_ request: StreamRequest) {
        let channels = request.stream._withUnsafeGuaranteedRef { $0.channels }
        guard channels == format.channels else { return reject(request.voice, .formatMismatch) }
        guard slot(of: request.voice) == nil else { return reject(request.voice, .duplicateVoice) }
        var voice = VoiceSlot()
        voice.gain = Mixer.clampedGain(request.gain)
        if let source = request.source { place(&voice, source.clamped, group: request.group, virtualizable: false) }
        guard makeRoom(for: &voice, priority: request.priority) else { return reject(request.voice, .noVoiceAvailable) }
        voice.stream = request.stream
        voice.cueChannels = channels
        voice.rate = Double(Mixer.clampedRate(request.rate))
        if request.paused { voice.pauses = VoiceSlot.pausedByVoice }
        if let from = request.crossfadeFrom, slot(of: from) != nil { voice.equalPower = true }
        start(voice, id: request.voice, gain: request.gain, pan: request.pan, group: request.group,
              priority: request.priority, fadeInFrames: request.fadeInFrames)
        if let id = request.crossfadeFrom, let old = slot(of: id), voices[old].stream != nil {
            // Its envelope from where it is (1 when settled) down to 0 as the new one's rises.
            voices[old].equalPower = true
            fadeOut(old, frames: max(configuration.startFadeFrames, request.fadeInFrames), reporting: .stopped(id))
        }
    }

    /// Puts a new voice in a free slot (or a cut tail's), playing, with its gains and fade-in.
    private func start(_ new: VoiceSlot, id: VoiceID, gain: Float, pan: Float, group: SoundGroup,
                       priority: VoicePriority, fadeInFrames: Int, filter: FilterSettings? = nil,
                       sends levels: SIMD4<Float> = .zero) {
        // Real voices and tails share maxVoices + tailVoices slots, virtual voices have their own.
        let tailsFull = !new.isVirtual
            && state.pointee.activeVoiceCount - state.pointee.virtualCount >= configuration.maxVoices + configuration.tailVoices
        let slot = tailsFull ? cutQuietestTail() : (freeSlot() ?? cutQuietestTail())
        var voice = new
        voice.phase = .playing
        voice.id = id
        voice.group = Int(group.rawValue)
        voice.priority = priority
        voice.order = state.pointee.playCount
        voice.gain = Mixer.clampedGain(gain)
        voice.pan = Mixer.clampedPan(pan)
        let (l, r) = channelGains(of: voice)
        voice.left = Ramp(l)
        voice.right = Ramp(r)
        voice.envelope.glide(to: 1, over: max(configuration.startFadeFrames, fadeInFrames))
        if groups[voice.group].paused { voice.pauses |= VoiceSlot.pausedByGroup }
        if state.pointee.paused { voice.pauses |= VoiceSlot.pausedByAll }
        if voice.pauses != 0 { voice.hold = Ramp(0) }
        voices[slot] = voice
        filters[slot].filterOn = false
        filters[slot].filterClosing = false
        filters[slot].airOn = false
        filters[slot].setFilter(filter?.clamped(sampleRate: format.sampleRate))
        if voice.positional { filters[slot].setAirGain(airGain(of: voice)) }
        filters[slot].reset()
        if voice.positional { resetBinaural(slot) }
        var clamped = SIMD4<Float>.zero
        for bus in 0..<configuration.effectBuses { clamped[bus] = VoiceSends.clamped(levels[bus]) }
        sends[slot] = VoiceSends(clamped)
        occupy(slot, id: id)
        state.pointee.playCount += 1
        state.pointee.playingVoiceCount += 1
        state.pointee.activeVoiceCount += 1
        if voice.positional { state.pointee.positionalCount += 1 }
        if voice.isVirtual { state.pointee.virtualCount += 1 }
    }

    private func releaseCue(_ key: UInt32) {
        if state.pointee.scheduledCount > 0 { cancelScheduled(reporting: .rejected) { $0.cueKey == key } }
        guard hasVoices(of: key) else { return post(.cueReleased(key)) }
        if !isReleasing(key) {
            releasingCues[state.pointee.releasingCount] = (key, state.pointee.frameTime)
            state.pointee.releasingCount += 1
        }
        forEachVoice { slot in
            if voices[slot].cueKey == key {
                fadeOut(slot, frames: configuration.stopFadeFrames, reporting: .stopped(voices[slot].id))
            }
        }
        postReleasedCues()
    }

    // MARK: Rendering

    /// Renders `frameCount` interleaved frames in the mixer's format into `output`, overwriting it.
    public func render(into output: UnsafeMutablePointer<Float>, frameCount: Int) {
        var done = 0
        while done < frameCount {
            var frames = min(frameCount - done, configuration.maxFramesPerRender)
            // A scheduled play starts on its frame: the block ends where the next one begins.
            if state.pointee.scheduledCount > 0 { frames = min(frames, startDuePlays()) }
            if state.pointee.positionalCount > 0 {
                let intoUpdate = state.pointee.frameTime % Mixer.spatialUpdateFrames
                if intoUpdate == 0 { updatePositionalVoices() }
                frames = min(frames, Mixer.spatialUpdateFrames - intoUpdate)
            }
            renderBlock(into: output + done * format.channels, frames: frames)
            done += frames
        }
        if configuration.releasesStreamsAfterRender { releaseStreams() }
    }

    /// Calls `body` with each event (and the frame time at which it happened) since the last
    /// drain, oldest first, and empties the buffer.
    public func drainEvents(_ body: (_ event: MixerEvent, _ frame: Int) -> Void) {
        for i in 0..<state.pointee.eventCount { body(events[i].0, events[i].1) }
        state.pointee.eventCount = 0
    }

    private func renderBlock(into output: UnsafeMutablePointer<Float>, frames: Int) {
        let channels = format.channels
        let busSize = configuration.maxFramesPerRender * channels
        let firstEvent = state.pointee.eventCount
        let frameTime = state.pointee.frameTime
        var busInUse: UInt32 = 0
        effectInputInUse = 0
        duckUntil.update(repeating: 0, count: SoundGroup.count)
        forEachVoice { slot in
            let group = voices[slot].group
            let counts = voices[slot].phase == .playing && voices[slot].pauses == 0
            let bus = buses + group * busSize
            if busInUse & (1 << group) == 0 {
                bus.update(repeating: 0, count: frames * channels)
                busInUse |= 1 << group
            }
            let produced: Int?
            if voices[slot].isVirtual && !voices[slot].fadingToVirtual {
                produced = voices[slot].skip(frames: frames)
            } else if hrtf != nil && voices[slot].positional {
                produced = renderBinaural(slot, into: bus, frames: frames)
            } else if filters[slot].isActive || sends[slot].any(configuration.effectBuses) {
                scratch.update(repeating: 0, count: frames * channels)
                produced = voices[slot].mix(into: scratch, frames: frames, outputChannels: channels)
                // A voice that ends stops at its last frame, filter and all, whatever the blocks.
                let heard = produced ?? frames
                if filters[slot].isActive { filters[slot].process(scratch, frames: heard, channels: channels) }
                for i in 0..<(heard * channels) { bus[i] += scratch[i] }
                send(slot, scratch, frames: heard, of: frames, channels: channels, gain: 1)
            } else {
                produced = voices[slot].mix(into: bus, frames: frames, outputChannels: channels)
            }
            if let produced {
                end(slot, at: frameTime + produced)
                if counts { duckUntil[group] = max(duckUntil[group], produced) }
            } else if counts {
                duckUntil[group] = frames
            }
        }
        postReleasedCues()
        sortEvents(from: firstEvent)
        runEffects(frames: frames, busInUse: &busInUse)
        // A group's filter runs on every block while it is on, voices or not, so that its tail
        // rings out the same however rendering is split.
        for group in 0..<SoundGroup.count where groupFilters[group].isActive {
            if busInUse & (1 << group) == 0 {
                buses.advanced(by: group * busSize).update(repeating: 0, count: frames * channels)
                busInUse |= 1 << group
            }
            groupFilters[group].process(buses + group * busSize, frames: frames, channels: channels)
        }

        // The group buses into the output, in stretches between the frames where a duck may
        // start a glide: within one, a group whose three gains rest at their targets has one
        // gain for the whole stretch (and an idle bus with resting gains costs nothing), the
        // others step frame by frame. Each frame still adds the groups in order, so the samples
        // are the same as a frame-by-frame loop's, bit for bit.
        output.update(repeating: 0, count: frames * channels)
        var nextDuck = 0
        var first = 0
        while first < frames {
            if first == nextDuck { nextDuck = duck(at: first) }
            let end = min(frames, nextDuck)
            for group in 0..<SoundGroup.count {
                let inUse = busInUse & (1 << group) != 0
                let bus = buses + group * busSize
                if groups[group].gain.isSettled && groups[group].mute.isSettled && groups[group].duck.isSettled {
                    guard inUse else { continue }
                    let gain = groups[group].gain.target * groups[group].mute.target * groups[group].duck.target
                    for i in first..<end {
                        for c in 0..<channels { output[i * channels + c] += bus[i * channels + c] * gain }
                    }
                } else {
                    for i in first..<end {
                        let gain = groups[group].gain.next() * groups[group].mute.next() * groups[group].duck.next()
                        guard inUse else { continue }
                        for c in 0..<channels { output[i * channels + c] += bus[i * channels + c] * gain }
                    }
                }
            }
            for i in first..<end {
                let frame = output + i * channels
                let masterGain = state.pointee.master.next()
                for c in 0..<channels { frame[c] *= masterGain }
                state.pointee.limiter.process(frame, channels: channels)
            }
            first = end
        }
        state.pointee.frameTime += frames
    }

    /// Glides each group's duck gain towards the lowest gain of the rules whose trigger group
    /// has a voice sounding at frame `i` of the block, or back to 1; returns the next frame at
    /// which a trigger group falls silent (when this must be done again).
    private func duck(at i: Int) -> Int {
        var sounding: UInt32 = 0
        var next = Int.max
        for group in 0..<SoundGroup.count where duckUntil[group] > i {
            sounding |= 1 << group
            next = min(next, duckUntil[group])
        }
        for target in 0..<SoundGroup.count {
            let bit = UInt32(1) << UInt32(target)
            var gain: Float = 1
            var attack = 0
            var release = 0
            for trigger in 0..<SoundGroup.count where groups[trigger].duckTargets & bit != 0 {
                release = max(release, groups[trigger].duckRelease)
                if sounding & (1 << trigger) != 0, groups[trigger].duckGain < gain {
                    gain = groups[trigger].duckGain
                    attack = groups[trigger].duckAttack
                }
            }
            if groups[target].duck.target != gain {
                groups[target].duck.glide(to: gain, over: gain < groups[target].duck.value ? attack : release)
            }
        }
        return next
    }

    // MARK: Effect buses

    /// Whether each bus got input in this block (one bit per bus).
    private var effectInputInUse: UInt32 {
        get { state.pointee.effectInputInUse }
        set { state.pointee.effectInputInUse = newValue }
    }

    private func setEffect(bus: Int, _ reference: EffectReference?, returnGroup: Int) {
        guard bus >= 0, bus < configuration.effectBuses else {
            if let reference { post(.effectReleased(reference.key)) }
            return
        }
        if effectBuses[bus].processor != nil { post(.effectReleased(effectBuses[bus].key)) }
        effectBuses[bus] = EffectBus(processor: reference?.processor, key: reference?.key ?? 0, returnGroup: returnGroup)
        if let reference {
            precondition(reference.processor._withUnsafeGuaranteedRef { $0.stateByteCount } <= Self.effectStateBytes,
                         "an effect's state must fit a snapshot's room for it")
        }
    }

    /// Adds `frames` of a voice's signal (`channels` 1 or the output's), times `gain` and each
    /// send's gliding level, into the inputs of the buses it sends to that have an effect (of a
    /// block of `blockFrames`).
    private func send(_ slot: Int, _ samples: UnsafeMutablePointer<Float>, frames: Int, of blockFrames: Int, channels: Int, gain: Float) {
        let outputChannels = format.channels
        let busSize = configuration.maxFramesPerRender * outputChannels
        for bus in 0..<configuration.effectBuses where sends[slot].sends(to: bus) {
            guard effectBuses[bus].processor != nil else {
                // No effect: the level still glides, as it would.
                var level = sends[slot][bus]
                level.advance(by: frames)
                sends[slot][bus] = level
                continue
            }
            let input = effectInputs + bus * busSize
            if effectInputInUse & (1 << bus) == 0 {
                input.update(repeating: 0, count: blockFrames * outputChannels)
                effectInputInUse |= 1 << bus
            }
            var level = sends[slot][bus]
            if level.isBlockable && outputChannels <= 2 {
                // Each frame's level as `next` gives it, without a branch (the loops vectorise).
                switch (channels, outputChannels) {
                case (2, 2):
                    for i in 0..<frames {
                        let g = level.value(after: i + 1) * gain
                        input[2 * i] += samples[2 * i] * g
                        input[2 * i + 1] += samples[2 * i + 1] * g
                    }
                case (1, 2):
                    for i in 0..<frames {
                        let g = level.value(after: i + 1) * gain
                        input[2 * i] += samples[i] * g
                        input[2 * i + 1] += samples[i] * g
                    }
                default:
                    for i in 0..<frames { input[i] += samples[i] * (level.value(after: i + 1) * gain) }
                }
                level.advance(by: frames)
            } else {
                for i in 0..<frames {
                    let g = level.next() * gain
                    if channels == outputChannels {
                        for c in 0..<channels { input[i * channels + c] += samples[i * channels + c] * g }
                    } else {
                        for c in 0..<outputChannels { input[i * outputChannels + c] += samples[i] * g }
                    }
                }
            }
            sends[slot][bus] = level
        }
    }

    /// Each bus's effect on its input of this block (or on silence while its tail sounds),
    /// added into its return group's bus.
    private func runEffects(frames: Int, busInUse: inout UInt32) {
        let channels = format.channels
        let busSize = configuration.maxFramesPerRender * channels
        for bus in 0..<configuration.effectBuses {
            guard let processor = effectBuses[bus].processor else { continue }
            let group = effectBuses[bus].returnGroup
            let output = buses + group * busSize
            let hasInput = effectInputInUse & (1 << bus) != 0
            processor._withUnsafeGuaranteedRef { effect in
                guard hasInput || effect.isSounding else {
                    effect.processSilence(frames: frames, addingInto: output, outputChannels: channels)
                    return
                }
                if busInUse & (1 << group) == 0 {
                    output.update(repeating: 0, count: frames * channels)
                    busInUse |= 1 << group
                }
                if hasInput {
                    effect.process(input: effectInputs + bus * busSize, inputChannels: channels, frames: frames,
                                   addingInto: output, outputChannels: channels)
                } else {
                    effect.processSilence(frames: frames, addingInto: output, outputChannels: channels)
                }
            }
        }
    }

    /// Saves each bus's processor state into `snapshot`'s room for it (the processors are shared:
    /// their big memory keeps rewind headroom, see `EffectProcessor`).
    func saveEffects(into snapshot: Mixer) {
        for bus in 0..<configuration.effectBuses {
            effectBuses[bus].processor?._withUnsafeGuaranteedRef { $0.saveState(to: snapshot.effectStates + bus * Self.effectStateBytes) }
        }
    }

    /// Puts the states `saveEffects` kept in `snapshot` back into the processors (after the buses
    /// themselves were restored).
    func restoreEffects(from snapshot: Mixer) {
        for bus in 0..<configuration.effectBuses {
            effectBuses[bus].processor?._withUnsafeGuaranteedRef { $0.restoreState(from: snapshot.effectStates + bus * Self.effectStateBytes) }
        }
    }

    // MARK: Positional voices

    /// A positional voice through the HRTF: mixed in mono (its gain, envelope and pause only),
    /// filtered, then rendered for both ears toward its direction at its spatial gain, both
    /// gliding from one spatial update to the next (the filters crossfade over one update).
    private func renderBinaural(_ slot: Int, into bus: UnsafeMutablePointer<Float>, frames: Int) -> Int? {
        guard let table = hrtf, let memory = hrtfMemory, let work = hrtfScratch else { return 0 }
        scratch.update(repeating: 0, count: frames)
        let produced = voices[slot].mix(into: scratch, frames: frames, outputChannels: 1)
        let heard = produced ?? frames
        if filters[slot].isActive { filters[slot].process(scratch, frames: heard, channels: 1) }
        send(slot, scratch, frames: heard, of: frames, channels: 1, gain: voices[slot].spatialGain)
        let direction = voices[slot].spatialDirection == .zero ? Vector3(0, 0, 1) : voices[slot].spatialDirection
        hrtfVoices[slot].render(scratch, frames: heard, toward: direction, gain: voices[slot].spatialGain,
                                fadeFrames: Mixer.spatialUpdateFrames, table: table,
                                memory: memory + slot * hrtfMemoryStride, scratch: work, addingInto: bus)
        return produced
    }

    /// Starts a slot's HRTF renderer afresh (a voice starting, or heard again after being virtual).
    private func resetBinaural(_ slot: Int) {
        guard let table = hrtf, let memory = hrtfMemory else { return }
        hrtfVoices[slot].reset(memory: memory + slot * hrtfMemoryStride, table: table,
                               maximumFrames: configuration.maxFramesPerRender, rewindHeadroomFrames: configuration.rewindHeadroomFrames)
    }

    /// Makes a new voice positional at `source` and gives it its first spatial update, so it
    /// starts where it is; one too quiet to hear starts virtual if `virtualizable`.
    private func place(_ voice: inout VoiceSlot, _ source: Source, group: SoundGroup, virtualizable: Bool) {
        voice.positional = true
        voice.source = source
        voice.group = Int(group.rawValue)
        let result = Spatializer.compute(source, listener: state.pointee.listener, world: state.pointee.world)
        voice.spatialGain = result.gain * state.pointee.listener.gain
        voice.spatialPan = result.pan
        voice.spatialDirection = result.direction
        voice.pitch = Double(result.pitch)
        voice.isVirtual = virtualizable && audibility(of: voice) < configuration.virtualThreshold
    }

    /// Makes room for a new voice; stealing takes a virtual voice before a real one. A virtual
    /// one takes a virtual slot, stealing the least important virtual voice when all are taken
    /// (or is made real if none may be stolen). A real one takes one of the `maxVoices`: when all
    /// are taken, the quietest real positional voice quieter than the new one and of no higher
    /// priority becomes virtual (it plays on, unheard; if the virtual slots are full the least
    /// important virtual voice is stolen for it); failing that the least important real voice
    /// is stolen, as without positional voices.
    /// False when the new voice must be rejected.
    private func makeRoom(for voice: inout VoiceSlot, priority: VoicePriority) -> Bool {
        if voice.isVirtual {
            if state.pointee.virtualCount < configuration.virtualVoices { return true }
            if let victim = stealCandidate(virtual: true), voices[victim].priority <= priority {
                steal(victim)
                return true
            }
            voice.isVirtual = false
        }
        if realVoiceCount < configuration.maxVoices { return true }
        if let quiet = quietestRealPositionalVoice(below: audibility(of: voice), priority: priority) {
            if state.pointee.virtualCount < configuration.virtualVoices {
                makeVirtual(quiet)
                return true
            }
            if let victim = stealCandidate(virtual: true), voices[victim].priority <= priority {
                steal(victim)
                makeVirtual(quiet)
                return true
            }
        }
        guard let victim = stealCandidate(virtual: false), voices[victim].priority <= priority else { return false }
        steal(victim)
        return true
    }

    /// Every `spatialUpdateFrames`: each positional voice's gain, pan and pitch from its source
    /// and the listener (its gains glide there over the next update's frames), and which are
    /// virtual. A playing voice whose level falls below `virtualThreshold` becomes virtual while
    /// there is a virtual slot; a virtual one heard again becomes real while there is room among
    /// the `maxVoices`, or in place of a quieter real positional voice of no higher priority
    /// (which fades out over one update and goes on unheard); a voice coming back fades in from
    /// silence over one update.
    private func updatePositionalVoices() {
        let listener = state.pointee.listener, world = state.pointee.world
        let frame = Spatializer.frame(of: listener)
        let threshold = configuration.virtualThreshold
        forEachVoice { slot in
            guard voices[slot].positional else { return }
            voices[slot].fadingToVirtual = false
            let result = Spatializer.compute(voices[slot].source, listener: listener, frame: frame, world: world)
            voices[slot].spatialGain = result.gain * listener.gain
            voices[slot].spatialPan = result.pan
            voices[slot].spatialDirection = result.direction
            voices[slot].pitch = Double(result.pitch)
            let candidate = voices[slot].phase == .playing && voices[slot].stream == nil
            let level = audibility(of: voices[slot])
            if candidate && level < threshold && !voices[slot].isVirtual {
                if state.pointee.virtualCount < configuration.virtualVoices { makeVirtual(slot) }
            } else if candidate && level >= threshold && voices[slot].isVirtual {
                if realVoiceCount >= configuration.maxVoices {
                    guard let quiet = quietestRealPositionalVoice(below: level, priority: voices[slot].priority) else { return }
                    makeVirtual(quiet)
                }
                voices[slot].isVirtual = false
                state.pointee.virtualCount -= 1
                voices[slot].left = Ramp(0)
                voices[slot].right = Ramp(0)
                filters[slot].reset()
                resetBinaural(slot)
            }
            if voices[slot].source.airAbsorptionFactor > 0 || filters[slot].airOn {
                filters[slot].setAirGain(airGain(of: voices[slot], distance: result.distance))
            }
            if !voices[slot].isVirtual { glideChannelGains(slot, over: Mixer.spatialUpdateFrames) }
        }
    }

    /// Makes a playing voice virtual: at once if it is too quiet to hear, otherwise after its
    /// gains glide to silence over one update (it counts as virtual from now).
    private func makeVirtual(_ slot: Int) {
        state.pointee.virtualCount += 1
        if audibility(of: voices[slot]) < configuration.virtualThreshold {
            voices[slot].isVirtual = true
        } else {
            voices[slot].isVirtual = true
            voices[slot].fadingToVirtual = true
            voices[slot].left.glide(to: 0, over: Mixer.spatialUpdateFrames)
            voices[slot].right.glide(to: 0, over: Mixer.spatialUpdateFrames)
        }
    }

    /// The quietest real, playing, positional cue voice quieter than `level` and of priority at
    /// most `priority`.
    private func quietestRealPositionalVoice(below level: Float, priority: VoicePriority) -> Int? {
        var best: Int?
        var bestLevel = level
        forEachVoice { slot in
            let v = voices[slot]
            guard v.phase == .playing, v.positional, !v.isVirtual, v.stream == nil, v.priority <= priority else { return }
            let l = audibility(of: v)
            if l < bestLevel {
                best = slot
                bestLevel = l
            }
        }
        return best
    }

    /// Air absorption's high-frequency gain for a positional voice, as OpenAL Soft feeds it:
    /// over the distance beyond the reference distance (clamped to the maximum), times the
    /// rolloff factor.
    private func airGain(of v: VoiceSlot, distance: Float? = nil) -> Float {
        let s = v.source
        guard s.airAbsorptionFactor > 0 else { return 1 }
        let d = distance ?? Spatializer.compute(s, listener: state.pointee.listener, world: state.pointee.world).distance
        let beyond = max(min(d, s.maximumDistance) - s.referenceDistance, 0) * s.rolloffFactor
        return AirAbsorption.highFrequencyGain(distance: beyond, factor: s.airAbsorptionFactor, metersPerUnit: state.pointee.world.metersPerUnit)
    }

    /// How loud a voice is heard: its gain × its spatial gain (1 if not positional) × its
    /// group's gain, mute and duck × the master gain (their targets).
    private func audibility(of v: VoiceSlot) -> Float {
        let g = groups[v.group]
        return v.gain * (v.positional ? v.spatialGain : 1) * g.gain.target * g.mute.target * g.duck.target
            * state.pointee.master.target
    }

    private static func clampedListener(_ listener: Listener) -> Listener {
        func finite(_ v: Vector3, or fallback: Vector3) -> Vector3 { v.x.isFinite && v.y.isFinite && v.z.isFinite ? v : fallback }
        var l = listener
        l.position = finite(listener.position, or: .zero)
        l.velocity = finite(listener.velocity, or: .zero)
        l.forward = finite(listener.forward, or: Vector3(0, 0, -1))
        l.up = finite(listener.up, or: Vector3(0, 1, 0))
        l.gain = clampedGain(listener.gain)
        return l
    }

    private static func clampedWorld(_ world: SpatialWorld) -> SpatialWorld {
        var w = world
        w.dopplerFactor = world.dopplerFactor.isFinite ? max(world.dopplerFactor, 0) : 1
        w.speedOfSound = world.speedOfSound.isFinite && world.speedOfSound > 0 ? world.speedOfSound : 343.3
        w.metersPerUnit = world.metersPerUnit.isFinite && world.metersPerUnit > 0 ? world.metersPerUnit : 1
        return w
    }

    // MARK: Voice slots

    /// Calls `body` with the slot of every voice, in slot order. `body` may end the voice it is
    /// given, but must not start one.
    @inline(__always)
    private func forEachVoice(_ body: (Int) -> Void) {
        for word in 0..<occupiedWords {
            var bits = occupied[word]
            while bits != 0 {
                let slot = word * 64 + bits.trailingZeroBitCount
                guard slot < slotCount else { return }
                bits &= bits - 1
                body(slot)
            }
        }
    }

    @inline(__always)
    private func home(_ id: UInt64) -> Int {
        Int(truncatingIfNeeded: (id &* 0x9E37_79B9_7F4A_7C15) >> 32) & indexMask
    }

    /// The slot of a sounding voice, or nil: one probe of the table, rarely more.
    func slot(of voice: VoiceID) -> Int? {
        var i = home(voice.rawValue)
        while index[i].slot >= 0 {
            if index[i].id == voice.rawValue { return Int(index[i].slot) }
            i = (i + 1) & indexMask
        }
        return nil
    }

    /// The lowest free slot, or nil when every slot holds a voice.
    private func freeSlot() -> Int? {
        for word in 0..<occupiedWords where occupied[word] != .max {
            return word * 64 + (~occupied[word]).trailingZeroBitCount
        }
        return nil
    }

    /// Marks `slot` as holding the voice `id`.
    private func occupy(_ slot: Int, id: VoiceID) {
        occupied[slot / 64] |= 1 << UInt64(slot % 64)
        var i = home(id.rawValue)
        while index[i].slot >= 0 { i = (i + 1) & indexMask }
        index[i] = IndexEntry(id: id.rawValue, slot: Int32(slot))
    }

    /// Marks `slot` free and forgets its voice's id; entries after it in its probe run move back
    /// so that no lookup stops early (deletion without tombstones).
    private func vacate(_ slot: Int, id: VoiceID) {
        occupied[slot / 64] &= ~(1 << UInt64(slot % 64))
        var hole = home(id.rawValue)
        while index[hole].slot >= 0, index[hole].id != id.rawValue { hole = (hole + 1) & indexMask }
        guard index[hole].slot >= 0 else { return }
        var next = hole
        while true {
            next = (next + 1) & indexMask
            guard index[next].slot >= 0 else { break }
            // The entry at `next` may fill the hole unless its home lies after the hole.
            if (next - home(index[next].id)) & indexMask >= (next - hole) & indexMask {
                index[hole] = index[next]
                hole = next
            }
        }
        index[hole] = IndexEntry()
    }

    /// The lowest-priority playing voice, the oldest among equals, among the virtual voices or
    /// among the real ones.
    private func stealCandidate(virtual: Bool) -> Int? {
        var best: Int?
        forEachVoice { slot in
            guard voices[slot].phase == .playing && voices[slot].isVirtual == virtual else { return }
            guard let b = best else { best = slot; return }
            let v = voices[slot], w = voices[b]
            if v.priority < w.priority || (v.priority == w.priority && v.order < w.order) { best = slot }
        }
        return best
    }

    /// The oldest playing voice of the cue, if `limit` or more of them play.
    private func oldestInstance(of key: UInt32, ifAtLeast limit: Int) -> Int? {
        var count = 0
        var oldest: Int?
        forEachVoice { slot in
            guard voices[slot].phase == .playing && voices[slot].cueKey == key else { return }
            count += 1
            if let o = oldest, voices[o].order < voices[slot].order { return }
            oldest = slot
        }
        return count >= limit ? oldest : nil
    }

    /// Ends the fading voice nearest to silence, to make room; returns its slot.
    private func cutQuietestTail() -> Int {
        var quietest: Int?
        forEachVoice { slot in
            guard voices[slot].phase == .fading else { return }
            if let q = quietest, voices[slot].envelope.remaining >= voices[q].envelope.remaining { return }
            quietest = slot
        }
        let best = quietest ?? 0
        end(best, at: state.pointee.frameTime)
        postReleasedCues()
        return best
    }

    private func steal(_ slot: Int) {
        state.pointee.stolenCount += 1
        fadeOut(slot, frames: configuration.stopFadeFrames, reporting: .stolen(voices[slot].id))
    }

    /// Starts (or shortens) a voice's fade-out; `event` is what it reports when silent.
    private func fadeOut(_ slot: Int, frames: Int, reporting event: MixerEvent) {
        if voices[slot].phase == .playing && voices[slot].fadingToVirtual {
            // Still fading to silence: fade out from where it is, as a real voice.
            voices[slot].isVirtual = false
            voices[slot].fadingToVirtual = false
            state.pointee.virtualCount -= 1
        }
        if voices[slot].phase == .playing && voices[slot].isVirtual {
            // Nothing to fade: it ends at once.
            voices[slot].phase = .fading
            voices[slot].fadeEnd = event
            state.pointee.playingVoiceCount -= 1
            state.pointee.virtualCount -= 1
            voices[slot].isVirtual = false
            end(slot, at: state.pointee.frameTime)
            postReleasedCues()
            return
        }
        if voices[slot].phase == .playing {
            voices[slot].phase = .fading
            voices[slot].fadeEnd = event
            state.pointee.playingVoiceCount -= 1
            voices[slot].envelope.glide(to: 0, over: frames)
        } else if frames < voices[slot].envelope.remaining {
            voices[slot].envelope.glide(to: 0, over: frames)
        }
        if frames == 0 {
            end(slot, at: state.pointee.frameTime)
            postReleasedCues()
        }
    }

    /// Frees a slot and posts the voice's terminal event; a cue being released notes the frame.
    private func end(_ slot: Int, at frame: Int) {
        let voice = voices[slot]
        if voice.phase == .playing { state.pointee.playingVoiceCount -= 1 }
        if voice.phase == .playing && voice.isVirtual { state.pointee.virtualCount -= 1 }
        if voice.positional { state.pointee.positionalCount -= 1 }
        state.pointee.activeVoiceCount -= 1
        voices[slot].phase = .free
        vacate(slot, id: voice.id)
        post(voice.phase == .fading ? voice.fadeEnd : .finished(voice.id), at: frame)
        if let index = releasingIndex(voice.cueKey) {
            releasingCues[index].lastEnd = max(releasingCues[index].lastEnd, frame)
        }
    }

    /// Posts `.cueReleased` for every cue being released that no voice reads any more, at the
    /// frame its last voice ended.
    private func postReleasedCues() {
        var i = 0
        while i < state.pointee.releasingCount {
            let (key, lastEnd) = releasingCues[i]
            if hasVoices(of: key) {
                i += 1
            } else {
                state.pointee.releasingCount -= 1
                releasingCues[i] = releasingCues[state.pointee.releasingCount]
                post(.cueReleased(key), at: lastEnd)
            }
        }
    }

    /// Puts the events posted since `first` in frame order (stable, in place), so that the order
    /// of events does not depend on slot order or on how rendering was split.
    private func sortEvents(from first: Int) {
        var i = first + 1
        while i < state.pointee.eventCount {
            let event = events[i]
            var j = i
            while j > first && events[j - 1].1 > event.1 {
                events[j] = events[j - 1]
                j -= 1
            }
            events[j] = event
            i += 1
        }
    }

    private func glideChannelGains(_ slot: Int, over frames: Int? = nil) {
        let (l, r) = channelGains(of: voices[slot])
        voices[slot].left.glide(to: l, over: frames ?? configuration.smoothingFrames)
        voices[slot].right.glide(to: r, over: frames ?? configuration.smoothingFrames)
    }

    /// A voice's channel gains: from its gain and pan, or for a positional voice from its gain,
    /// the last spatial update's gain and its pan.
    private func channelGains(of v: VoiceSlot) -> (Float, Float) {
        if v.positional && hrtf != nil {
            // Mixed in mono; the HRTF renderer applies the spatial gain.
            return VoiceSlot.channelGains(gain: v.gain, pan: 0, cueChannels: v.cueChannels, outputChannels: 1)
        }
        // A positional voice is a point: on stereo output its sound (a mono sound the library
        // made stereo, or a stereo one) takes the equal-power law at its pan on each channel.
        // Computed at every spatial update, in Float (a voice's own pan, above, in Double).
        if v.positional && format.channels == 2 {
            let angle = (v.spatialPan + 1) * (Float.pi / 4)
            let gain = v.gain * v.spatialGain
            return (gain * cos(angle), gain * sin(angle))
        }
        return v.positional
            ? VoiceSlot.channelGains(gain: v.gain * v.spatialGain, pan: v.spatialPan,
                                     cueChannels: format.channels == 2 ? 1 : v.cueChannels, outputChannels: format.channels)
            : VoiceSlot.channelGains(gain: v.gain, pan: v.pan, cueChannels: v.cueChannels, outputChannels: format.channels)
    }

    private func releasingIndex(_ key: UInt32) -> Int? {
        for i in 0..<state.pointee.releasingCount where releasingCues[i].key == key { return i }
        return nil
    }

    private func hasVoices(of key: UInt32) -> Bool {
        var found = false
        forEachVoice { slot in if voices[slot].cueKey == key { found = true } }
        return found
    }

    private func isReleasing(_ key: UInt32) -> Bool { releasingIndex(key) != nil }

    private func stopFade(_ requested: Int) -> Int { max(requested, configuration.startFadeFrames) }

    func reject(_ voice: VoiceID, _ reason: PlayRejection) {
        state.pointee.rejectedCount += 1
        post(.rejected(voice, reason))
    }

    func post(_ event: MixerEvent, at frame: Int? = nil) {
        guard state.pointee.eventCount < configuration.eventCapacity else {
            state.pointee.droppedEventCount += 1
            return
        }
        events[state.pointee.eventCount] = (event, frame ?? state.pointee.frameTime)
        state.pointee.eventCount += 1
    }

    private static func clampedGain(_ gain: Float) -> Float {
        gain.isNaN ? 0 : min(max(gain, SettingLimits.gain.lowerBound), SettingLimits.gain.upperBound)
    }

    private static func clampedPan(_ pan: Float) -> Float {
        pan.isNaN ? 0 : min(max(pan, SettingLimits.pan.lowerBound), SettingLimits.pan.upperBound)
    }

    /// The rates a voice may play at (`SettingLimits.rate`).
    public static let rates: ClosedRange<Float> = SettingLimits.rate

    private static func clampedRate(_ rate: Float) -> Float { rate.isNaN ? 1 : min(max(rate, rates.lowerBound), rates.upperBound) }

    private static func clampedDucking(_ rule: Ducking) -> Ducking {
        var r = rule
        r.gain = rule.gain.isNaN ? 1 : min(max(rule.gain, 0), 1)
        r.attackFrames = max(0, rule.attackFrames)
        r.releaseFrames = max(0, rule.releaseFrames)
        return r
    }
}
