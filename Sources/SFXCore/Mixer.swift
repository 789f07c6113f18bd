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
/// Everything is allocated in `init`. `apply`, `render` and `drainEvents` never allocate, lock,
/// log or retain anything: cues are held as `Unmanaged<Cue>` and voices live in a fixed table,
/// so they can run on the audio thread. A mixer belongs to one thread at a time: the engine feeds
/// it commands through an `SPSCRing<MixerCommand>` and calls `render` from the audio thread.
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
            return c
        }
    }

    /// The largest linear gain a voice, group or the master accepts (+24 dB).
    public static let maximumGain: Float = 16

    public let format: AudioFormat
    public let configuration: Configuration

    /// Frames rendered since the mixer was made: the time base of events.
    public private(set) var frameTime = 0
    /// Voices sounding, fading tails included.
    public private(set) var activeVoiceCount = 0
    /// Voices sounding and not fading out: the ones counted against `maxVoices`.
    public private(set) var playingVoiceCount = 0
    /// Voices stolen so far, by the voice limit or an instance cap.
    public private(set) var stolenCount = 0
    /// Play requests rejected so far.
    public private(set) var rejectedCount = 0
    /// Events lost because the event buffer was full.
    public private(set) var droppedEventCount = 0

    private struct Group {
        var gain = Ramp(1)
        var mute = Ramp(1)
    }

    private let slotCount: Int
    private let voices: UnsafeMutablePointer<Voice>
    private let groups: UnsafeMutablePointer<Group>
    /// One bus per group, `maxFramesPerRender × channels` samples each.
    private let buses: UnsafeMutablePointer<Float>
    private let events: UnsafeMutablePointer<(MixerEvent, Int)>
    private var eventCount = 0
    /// Cues being released: their keys, and the frame at which their latest voice ended.
    private let releasingCues: UnsafeMutablePointer<(key: UInt32, lastEnd: Int)>
    private var releasingCount = 0
    private var master = Ramp(1)
    private var limiter: Limiter
    private var playCount: UInt64 = 0

    public init(format: AudioFormat, configuration: Configuration) {
        let c = configuration.normalized
        self.format = format
        self.configuration = c
        slotCount = c.maxVoices + c.tailVoices
        voices = .allocate(capacity: max(slotCount, 1))
        voices.initialize(repeating: Voice(), count: max(slotCount, 1))
        groups = .allocate(capacity: SoundGroup.count)
        groups.initialize(repeating: Group(), count: SoundGroup.count)
        buses = .allocate(capacity: SoundGroup.count * c.maxFramesPerRender * format.channels)
        buses.initialize(repeating: 0, count: SoundGroup.count * c.maxFramesPerRender * format.channels)
        events = .allocate(capacity: c.eventCapacity)
        releasingCues = .allocate(capacity: max(slotCount, 1))
        limiter = Limiter(threshold: c.limiterThreshold, releaseFrames: c.limiterReleaseFrames)
    }

    /// A mixer with the default configuration for the format's sample rate.
    public convenience init(format: AudioFormat) {
        self.init(format: format, configuration: Configuration(sampleRate: format.sampleRate))
    }

    deinit {
        voices.deallocate()
        groups.deallocate()
        buses.deallocate()
        events.deallocate()
        releasingCues.deallocate()
    }

    // MARK: Commands

    /// Applies one command at the current frame time.
    public func apply(_ command: MixerCommand) {
        switch command {
        case .play(let request):
            play(request)
        case .stop(let voice, let fadeFrames):
            if let slot = slot(of: voice) { fadeOut(slot, frames: stopFade(fadeFrames), reporting: .stopped(voice)) }
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
            for slot in 0..<slotCount where voices[slot].phase != .free {
                fadeOut(slot, frames: stopFade(fadeFrames), reporting: .stopped(voices[slot].id))
            }
        case .stopGroup(let group, let fadeFrames):
            for slot in 0..<slotCount where voices[slot].phase != .free && voices[slot].group == Int(group.rawValue) {
                fadeOut(slot, frames: stopFade(fadeFrames), reporting: .stopped(voices[slot].id))
            }
        case .releaseCue(let key):
            releaseCue(key)
        case .setGroupGain(let group, let gain):
            groups[Int(group.rawValue)].gain.glide(to: Mixer.clampedGain(gain), over: configuration.smoothingFrames)
        case .setGroupMuted(let group, let muted):
            groups[Int(group.rawValue)].mute.glide(to: muted ? 0 : 1, over: configuration.smoothingFrames)
        case .setMasterGain(let gain):
            master.glide(to: Mixer.clampedGain(gain), over: configuration.smoothingFrames)
        }
    }

    private func play(_ request: PlayRequest) {
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
        if playingVoiceCount >= configuration.maxVoices {
            guard let victim = stealCandidate(), voices[victim].priority <= request.priority else {
                return reject(request.voice, .noVoiceAvailable)
            }
            steal(victim)
        }
        let slot = freeSlot() ?? cutQuietestTail()

        var voice = Voice()
        voice.phase = .playing
        voice.id = request.voice
        voice.cueKey = key
        voice.samples = samples
        voice.frameCount = frameCount
        voice.cueChannels = cueFormat.channels
        voice.loopsLeft = request.loops
        voice.group = Int(request.group.rawValue)
        voice.priority = request.priority
        voice.order = playCount
        voice.gain = Mixer.clampedGain(request.gain)
        voice.pan = Mixer.clampedPan(request.pan)
        let (l, r) = Voice.channelGains(
            gain: voice.gain, pan: voice.pan, cueChannels: voice.cueChannels, outputChannels: format.channels)
        voice.left = Ramp(l)
        voice.right = Ramp(r)
        voice.envelope.glide(to: 1, over: configuration.startFadeFrames)
        voices[slot] = voice
        playCount += 1
        playingVoiceCount += 1
        activeVoiceCount += 1
    }

    private func releaseCue(_ key: UInt32) {
        guard hasVoices(of: key) else { return post(.cueReleased(key)) }
        if !isReleasing(key) {
            releasingCues[releasingCount] = (key, frameTime)
            releasingCount += 1
        }
        for slot in 0..<slotCount where voices[slot].phase != .free && voices[slot].cueKey == key {
            fadeOut(slot, frames: configuration.stopFadeFrames, reporting: .stopped(voices[slot].id))
        }
        postReleasedCues()
    }

    // MARK: Rendering

    /// Renders `frameCount` interleaved frames in the mixer's format into `output`, overwriting it.
    public func render(into output: UnsafeMutablePointer<Float>, frameCount: Int) {
        var done = 0
        while done < frameCount {
            let frames = min(frameCount - done, configuration.maxFramesPerRender)
            renderBlock(into: output + done * format.channels, frames: frames)
            done += frames
        }
    }

    /// Calls `body` with each event (and the frame time at which it happened) since the last
    /// drain, oldest first, and empties the buffer.
    public func drainEvents(_ body: (_ event: MixerEvent, _ frame: Int) -> Void) {
        for i in 0..<eventCount { body(events[i].0, events[i].1) }
        eventCount = 0
    }

    private func renderBlock(into output: UnsafeMutablePointer<Float>, frames: Int) {
        let channels = format.channels
        let busSize = configuration.maxFramesPerRender * channels
        let firstEvent = eventCount
        var busInUse: UInt32 = 0
        for slot in 0..<slotCount where voices[slot].phase != .free {
            let group = voices[slot].group
            let bus = buses + group * busSize
            if busInUse & (1 << group) == 0 {
                bus.update(repeating: 0, count: frames * channels)
                busInUse |= 1 << group
            }
            if let produced = voices[slot].mix(into: bus, frames: frames, outputChannels: channels) {
                end(slot, at: frameTime + produced)
            }
        }
        postReleasedCues()
        sortEvents(from: firstEvent)

        for i in 0..<frames {
            let frame = output + i * channels
            for c in 0..<channels { frame[c] = 0 }
            for group in 0..<SoundGroup.count {
                let gain = groups[group].gain.next() * groups[group].mute.next()
                guard busInUse & (1 << group) != 0 else { continue }
                let bus = buses + group * busSize + i * channels
                for c in 0..<channels { frame[c] += bus[c] * gain }
            }
            let masterGain = master.next()
            for c in 0..<channels { frame[c] *= masterGain }
            limiter.process(frame, channels: channels)
        }
        frameTime += frames
    }

    // MARK: Voice table

    private func slot(of voice: VoiceID) -> Int? {
        for slot in 0..<slotCount where voices[slot].phase != .free && voices[slot].id == voice { return slot }
        return nil
    }

    private func freeSlot() -> Int? {
        for slot in 0..<slotCount where voices[slot].phase == .free { return slot }
        return nil
    }

    /// The lowest-priority playing voice, the oldest among equals.
    private func stealCandidate() -> Int? {
        var best: Int?
        for slot in 0..<slotCount where voices[slot].phase == .playing {
            guard let b = best else { best = slot; continue }
            let v = voices[slot], w = voices[b]
            if v.priority < w.priority || (v.priority == w.priority && v.order < w.order) { best = slot }
        }
        return best
    }

    /// The oldest playing voice of the cue, if `limit` or more of them play.
    private func oldestInstance(of key: UInt32, ifAtLeast limit: Int) -> Int? {
        var count = 0
        var oldest: Int?
        for slot in 0..<slotCount where voices[slot].phase == .playing && voices[slot].cueKey == key {
            count += 1
            if let o = oldest, voices[o].order < voices[slot].order { continue }
            oldest = slot
        }
        return count >= limit ? oldest : nil
    }

    /// Ends the fading voice nearest to silence, to make room; returns its slot.
    private func cutQuietestTail() -> Int {
        var best = 0
        for slot in 0..<slotCount where voices[slot].phase == .fading {
            if voices[best].phase != .fading || voices[slot].envelope.remaining < voices[best].envelope.remaining {
                best = slot
            }
        }
        end(best, at: frameTime)
        postReleasedCues()
        return best
    }

    private func steal(_ slot: Int) {
        stolenCount += 1
        fadeOut(slot, frames: configuration.stopFadeFrames, reporting: .stolen(voices[slot].id))
    }

    /// Starts (or shortens) a voice's fade-out; `event` is what it reports when silent.
    private func fadeOut(_ slot: Int, frames: Int, reporting event: MixerEvent) {
        if voices[slot].phase == .playing {
            voices[slot].phase = .fading
            voices[slot].fadeEnd = event
            playingVoiceCount -= 1
            voices[slot].envelope.glide(to: 0, over: frames)
        } else if frames < voices[slot].envelope.remaining {
            voices[slot].envelope.glide(to: 0, over: frames)
        }
        if frames == 0 {
            end(slot, at: frameTime)
            postReleasedCues()
        }
    }

    /// Frees a slot and posts the voice's terminal event; a cue being released notes the frame.
    private func end(_ slot: Int, at frame: Int) {
        let voice = voices[slot]
        if voice.phase == .playing { playingVoiceCount -= 1 }
        activeVoiceCount -= 1
        voices[slot].phase = .free
        post(voice.phase == .fading ? voice.fadeEnd : .finished(voice.id), at: frame)
        if let index = releasingIndex(voice.cueKey) {
            releasingCues[index].lastEnd = max(releasingCues[index].lastEnd, frame)
        }
    }

    /// Posts `.cueReleased` for every cue being released that no voice reads any more, at the
    /// frame its last voice ended.
    private func postReleasedCues() {
        var index = 0
        while index < releasingCount {
            let (key, lastEnd) = releasingCues[index]
            if hasVoices(of: key) {
                index += 1
            } else {
                releasingCount -= 1
                releasingCues[index] = releasingCues[releasingCount]
                post(.cueReleased(key), at: lastEnd)
            }
        }
    }

    /// Puts the events posted since `first` in frame order (stable, in place), so that the order
    /// of events does not depend on slot order or on how rendering was split.
    private func sortEvents(from first: Int) {
        var i = first + 1
        while i < eventCount {
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

    private func glideChannelGains(_ slot: Int) {
        let v = voices[slot]
        let (l, r) = Voice.channelGains(
            gain: v.gain, pan: v.pan, cueChannels: v.cueChannels, outputChannels: format.channels)
        voices[slot].left.glide(to: l, over: configuration.smoothingFrames)
        voices[slot].right.glide(to: r, over: configuration.smoothingFrames)
    }

    private func releasingIndex(_ key: UInt32) -> Int? {
        for i in 0..<releasingCount where releasingCues[i].key == key { return i }
        return nil
    }

    private func hasVoices(of key: UInt32) -> Bool {
        for slot in 0..<slotCount where voices[slot].phase != .free && voices[slot].cueKey == key { return true }
        return false
    }

    private func isReleasing(_ key: UInt32) -> Bool { releasingIndex(key) != nil }

    private func stopFade(_ requested: Int) -> Int { max(requested, configuration.startFadeFrames) }

    private func reject(_ voice: VoiceID, _ reason: PlayRejection) {
        rejectedCount += 1
        post(.rejected(voice, reason))
    }

    private func post(_ event: MixerEvent, at frame: Int? = nil) {
        guard eventCount < configuration.eventCapacity else {
            droppedEventCount += 1
            return
        }
        events[eventCount] = (event, frame ?? frameTime)
        eventCount += 1
    }

    private static func clampedGain(_ gain: Float) -> Float { gain.isNaN ? 0 : min(max(gain, 0), maximumGain) }

    private static func clampedPan(_ pan: Float) -> Float { pan.isNaN ? 0 : min(max(pan, -1), 1) }
}
