import SFXCore

extension SoundEngine {
    /// The engine's sample clock: where its output is, and when a frame of it is heard (see
    /// `EngineClock`).
    public var clock: EngineClock {
        EngineClock(output: outputThread, sampleRate: library.configuration.format.sampleRate)
    }

    /// Starts a sound so that its first frame is frame `time` of the output, to the sample (not
    /// snapped to a period), and returns its voice at once. The other parameters and the
    /// completion are `play(_:volume:...)`'s.
    ///
    /// A time earlier than `clock.nextSchedulable` may already be past when the play reaches the
    /// mixer: it then starts at once, and `voice.lateFrames` says how many frames after `time`.
    /// A time ahead waits in the mixer (not in the command queue, which it never holds up); at
    /// most `Mixer.scheduleCapacity` (64) plays wait at once, and one more is rejected with
    /// `.scheduleFull`. Stopping the voice, its group or everything cancels a play still waiting
    /// (its outcome is `.stopped`); disposing its sound rejects it (`.soundDisposed`).
    ///
    /// ```swift
    /// let beat = engine.clock.time(after: .milliseconds(500))
    /// engine.play(kick, at: beat)
    /// engine.play(snare, at: beat.advanced(by: 24_000))     // half a second later at 48 kHz
    /// ```
    @discardableResult
    public func play(_ id: SoundID, at time: EngineTime, volume: Float = 1, pan: Float = 0, loops: Int = 0,
                     group: SoundGroup = .effects, priority: VoicePriority = .normal, maxInstances: Int = 0,
                     fadeIn: Duration = .zero, rate: Float = 1,
                     completion: (@Sendable (PlayOutcome) -> Void)? = nil) -> Voice {
        let voice = reserveVoice()
        if let refusal = begin(voice, id, volume: volume, pan: pan, loops: loops, group: group, priority: priority,
                               maxInstances: maxInstances, fadeIn: fadeIn, rate: rate, source: nil,
                               startFrame: Self.mixerFrame(time), completion: completion, completesRefusals: true) {
            delivery.reject(completion, voice.handle, refusal)
        }
        return voice
    }

    /// `play(_:at:)` on a reserved voice, for front ends that return a refusal to their caller
    /// (the C API's sfx_play_at): see `start(_:_:...)`.
    package func start(_ voice: Voice, _ id: SoundID, at time: EngineTime, volume: Float = 1, pan: Float = 0,
                       loops: Int = 0, group: SoundGroup = .effects, priority: VoicePriority = .normal,
                       completion: (@Sendable (PlayOutcome) -> Void)? = nil) -> RejectReason? {
        let refusal = begin(voice, id, volume: volume, pan: pan, loops: loops, group: group, priority: priority,
                            maxInstances: 0, fadeIn: .zero, rate: 1, source: nil, startFrame: Self.mixerFrame(time),
                            completion: completion, completesRefusals: false)
        if let refusal { voice.handle.fulfil(.rejected(refusal)) }
        return refusal
    }

    /// Starts a sound on the next point of `grid` (its next beat, bar or subdivision) that the
    /// engine can still start on exactly (at or after `clock.nextSchedulable`); see `play(_:at:)`.
    /// A grid with a number out of range rejects the play (`.invalidSetting`).
    @discardableResult
    public func play(_ id: SoundID, quantizedTo grid: BeatGrid, unit: BeatGrid.Unit = .beat, volume: Float = 1,
                     pan: Float = 0, group: SoundGroup = .effects, priority: VoicePriority = .normal,
                     completion: (@Sendable (PlayOutcome) -> Void)? = nil) -> Voice {
        do throws(SettingError) {
            try grid.validate()
        } catch {
            let voice = reserveVoice()
            delivery.reject(completion, voice.handle, .invalidSetting(error))
            return voice
        }
        let time = grid.next(unit, atOrAfter: clock.nextSchedulable, sampleRate: clock.sampleRate)
        return play(id, at: time, volume: volume, pan: pan, group: group, priority: priority, completion: completion)
    }

    /// The next point of `grid` a play can start on exactly (what `play(_:quantizedTo:)` picks).
    public func nextPoint(of grid: BeatGrid, unit: BeatGrid.Unit = .beat) -> EngineTime {
        grid.next(unit, atOrAfter: clock.nextSchedulable, sampleRate: clock.sampleRate)
    }

    /// The mixer's frame for `time` (clamped to what an Int holds, which 64-bit Linux makes the same).
    static func mixerFrame(_ time: EngineTime) -> Int { Int(clamping: time.frame) }
}
