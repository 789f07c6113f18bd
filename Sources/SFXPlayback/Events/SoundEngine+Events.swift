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
        let (voice, refusal) = start(event, at: position, volume: volume, completion: completion)
        switch refusal {
        case nil: break
        case .cooldown?: delivery.reject(completion, voice.handle, .cooldown)
        case let refusal?: delivery.reject(completion, nil, refusal)
        }
        return voice
    }

    /// `play(event)` for a caller that reports a refusal itself (the C API returns it): the
    /// voice, and why it did not start; `completion` then is never called.
    package func start(_ event: SoundEvent, at position: Vector3? = nil, volume: Float = 1,
                       completion: (@Sendable (PlayOutcome) -> Void)? = nil) -> (Voice, RejectReason?) {
        let settings = event.settings
        let voice = reserveVoice()
        let cooldown = UInt64(max(0, settings.cooldown.components.seconds)) * 1_000_000_000
            + UInt64(max(0, settings.cooldown.components.attoseconds / 1_000_000_000))
        let handle = voice.handle, id = voice.id
        let finish: @Sendable (PlayOutcome) -> Void = { outcome in
            let seen = event.ended(id, outcome)
            handle.fulfil(seen)         // the first outcome recorded is the one `voice.outcome` gives
            completion?(seen)
        }
        // Deciding, drawing and sending are one step under the event's lock, so that a steal's
        // stop always follows its victim's play in the command queue.
        let outcome = event.state.withLock { state -> RejectReason? in
            let now = SoundEvent.monotonicNanoseconds()
            if cooldown > 0, let last = state.lastStart, now &- last < cooldown { return .cooldown }
            state.lastStart = now
            let draw = event.draw(&state)
            if settings.maxInstances > 0, state.active.count >= settings.maxInstances {
                let victim = state.active.removeFirst()
                state.stolen.insert(victim)
                send(.stop(victim, fadeFrames: frames(Self.defaultFade)))
            }
            state.active.append(id)
            var source = settings.source
            if let position {
                source = source ?? Source(position: position, velocity: .zero)
                source!.position = position
            }
            let gain = min(Mixer.maximumGain, max(0, volume * draw.gain))
            let rate = min(2, max(0.5, draw.rate))
            return start(voice, settings.sounds[draw.index], volume: gain, pan: 0, loops: 0, group: settings.group,
                         priority: settings.priority, maxInstances: 0, rate: rate, source: source, completion: finish)
        }
        switch outcome {
        case nil, .cooldown?: break
        case let refusal?: _ = event.ended(id, .rejected(refusal))
        }
        return (voice, outcome)
    }
}
