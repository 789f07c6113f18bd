import SFXCore

extension SoundEngine {
    /// Triggers an event: picks its sound, draws its pitch and volume, and starts it; returns its
    /// voice at once, as `play(_:volume:...)` does.
    ///
    /// A play inside the event's cooldown (since the last play that started) completes
    /// `.rejected(.cooldown)` and draws nothing. At the event's `maxInstances`, the oldest of its
    /// voices fades out (5 ms) and completes `.stolen`. Both hold exactly when many threads
    /// trigger the event at once: the decision and the draw are one step under the event's lock.
    ///
    /// - Parameters:
    ///   - position: where it sounds; nil uses the event's own source (or plays it unplaced).
    ///   - volume: a linear gain on top of the drawn volume (0…16 after both).
    @discardableResult
    public func play(_ event: SoundEvent, at position: Vector3? = nil, volume: Float = 1,
                     completion: (@Sendable (PlayOutcome) -> Void)? = nil) -> Voice {
        let settings = event.settings
        let voice = reserveVoice()
        let now = SoundEvent.monotonicNanoseconds()
        let cooldown = UInt64(max(0, settings.cooldown.components.seconds)) * 1_000_000_000
            + UInt64(max(0, settings.cooldown.components.attoseconds / 1_000_000_000))
        let decision = event.state.withLock { state -> (SoundEvent.Draw, VoiceID?)? in
            if cooldown > 0, let last = state.lastStart, now &- last < cooldown { return nil }
            state.lastStart = now
            let draw = event.draw(&state)
            var victim: VoiceID?
            if settings.maxInstances > 0, state.active.count >= settings.maxInstances {
                victim = state.active.removeFirst()
                state.stolen.insert(victim!)
            }
            state.active.append(voice.id)
            return (draw, victim)
        }
        guard let (draw, victim) = decision else {
            delivery.reject(completion, voice.handle, .cooldown)
            return voice
        }
        if let victim { send(.stop(victim, fadeFrames: frames(Self.defaultFade))) }

        let handle = voice.handle, id = voice.id
        let finish: @Sendable (PlayOutcome) -> Void = { outcome in
            let seen = event.ended(id, outcome)
            handle.fulfil(seen)         // the first outcome recorded is the one `voice.outcome` gives
            completion?(seen)
        }
        var source = settings.source
        if let position {
            source = source ?? Source(position: position, velocity: .zero)
            source!.position = position
        }
        let gain = min(Mixer.maximumGain, max(0, volume * draw.gain))
        let rate = min(2, max(0.5, draw.rate))
        if let refusal = start(voice, settings.sounds[draw.index], volume: gain, pan: 0, loops: 0,
                               group: settings.group, priority: settings.priority, maxInstances: 0,
                               rate: rate, source: source, completion: finish) {
            let seen = event.ended(id, .rejected(refusal))
            delivery.reject(completion, nil, refusal)
            _ = seen
        }
        return voice
    }
}
