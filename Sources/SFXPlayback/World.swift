import FoundationEssentials
import Glibc
import SFXCore
import SFXMedia

// Sound in a game's world: the listener, positional plays and what a positional voice can
// change. The mixer does the work (see `Mixer`, "Positional voices"); this is the engine's side.

extension SoundEngine {
    /// Where positional voices are heard from: set it from any thread, as often as the game's
    /// camera moves (each set is one command to the output thread; voices follow at the next
    /// spatial update, every 128 frames). Non-finite coordinates count as 0; a gain outside
    /// 0…16 is brought into it.
    public var listener: Listener {
        get { spatial.withLock { $0.listener } }
        set {
            spatial.withLock { $0.listener = newValue }
            send(.setListener(newValue))
        }
    }

    /// The doppler factor, the speed of sound and the length of a unit, for every positional
    /// voice. Throws for values outside `SettingLimits` (a doppler factor of 0…100, a speed of
    /// sound and a unit length above 0).
    public var world: SpatialWorld { spatial.withLock { $0.world } }

    public func setWorld(_ world: SpatialWorld) throws(SettingError) {
        try SettingError.check("world.dopplerFactor", world.dopplerFactor, in: SettingLimits.dopplerFactor)
        try SettingError.check("world.speedOfSound", world.speedOfSound, in: SettingLimits.speedOfSound)
        try SettingError.check("world.metersPerUnit", world.metersPerUnit, in: SettingLimits.metersPerUnit)
        spatial.withLock { $0.world = world }
        send(.setWorld(world))
    }

    /// Plays a sound at a place in the world, with the default source (inverse clamped distance
    /// from 1 unit, no cone): its level, pan and pitch follow from where it is relative to the
    /// listener, and its speed (doppler). `play(_:from:...)` takes every source property.
    @discardableResult
    public func play(_ id: SoundID, at position: Vector3, velocity: Vector3 = .zero, volume: Float = 1, loops: Int = 0,
                     group: SoundGroup = .effects, priority: VoicePriority = .normal, maxInstances: Int = 0,
                     fadeIn: Duration = .zero, rate: Float = 1,
                     completion: (@Sendable (PlayOutcome) -> Void)? = nil) -> Voice {
        play(id, from: Source(position: position, velocity: velocity), volume: volume, loops: loops, group: group,
             priority: priority, maxInstances: maxInstances, fadeIn: fadeIn, rate: rate, sends: .zero, completion: completion)
    }

    /// Plays a sound as a positional voice with all of `source`'s properties (distance model,
    /// reference and maximum distance, rolloff, cone, relative, air absorption). A source whose
    /// properties are out of range is refused (`.rejected(.invalidSetting)`). A play too quiet
    /// to hear where it is starts virtual: it costs almost nothing and is heard from where it
    /// would be once it is audible (`metrics.virtualVoices`). `sends` are its levels to the
    /// effect buses 0…3 from its first frame (0…1 each; see `setEffect(_:bus:returnsTo:)`);
    /// `filter` is on it from its first frame (see `Voice.setFilter`).
    @discardableResult
    public func play(_ id: SoundID, from source: Source, volume: Float = 1, loops: Int = 0,
                     group: SoundGroup = .effects, priority: VoicePriority = .normal, maxInstances: Int = 0,
                     fadeIn: Duration = .zero, rate: Float = 1, sends: SIMD4<Float> = .zero, filter: FilterSettings? = nil,
                     completion: (@Sendable (PlayOutcome) -> Void)? = nil) -> Voice {
        play(id, source: source, volume: volume, loops: loops, group: group, priority: priority,
             maxInstances: maxInstances, fadeIn: fadeIn, rate: rate, sends: sends, filter: filter, completion: completion)
    }

    /// Puts a reverb or an echo on effect bus `bus` (0…3), returning into `group` (its gain,
    /// mute, filter and ducking apply to the effect's output), or (nil) takes the bus's effect
    /// off. Voices reach it through their send levels (`Voice.setSend`, `play(_:from:sends:)`).
    /// The effect is prepared here, off the real-time thread (its delay lines allocated), and
    /// swapped in whole: changing a preset makes a new one. Returns false when the command queue
    /// is full (nothing changed).
    @discardableResult
    public func setEffect(_ effect: Effect?, bus: Int, returnsTo group: SoundGroup = .effects) throws(SettingError) -> Bool {
        try SettingError.check("bus", bus, in: SettingLimits.effectBus)
        guard let effect else { return send(.setEffect(bus: bus, processor: nil, returnGroup: group)) }
        let processor = EffectProcessor(effect, sampleRate: library.configuration.format.sampleRate,
                                        rewindHeadroomFrames: effectHeadroomFrames)
        let key = delivery.keep(processor)
        guard send(.setEffect(bus: bus, processor: EffectReference(processor, key: key), returnGroup: group)) else {
            delivery.forget(effect: key)
            return false
        }
        return true
    }

    /// Puts a filter on everything a group plays (a low-pass for "underwater"), glides it to new
    /// settings, or (nil) takes it off; changes glide over 5 ms, so they never click.
    public func setFilter(_ settings: FilterSettings?, for group: SoundGroup) throws(SettingError) {
        if let settings { try Self.checkFilter(settings) }
        send(.setGroupFilter(group, settings))
    }

    /// Throws unless the filter's cutoff is within 10 Hz … 0.45 × the sample rate, its Q within
    /// 0.1 … 30 (a shelf's slope 0.1 … 1) and its gain 0 … 1.
    static func checkFilter(_ settings: FilterSettings) throws(SettingError) {
        try SettingError.check("filter.cutoff", settings.cutoff, in: SettingLimits.filterCutoff)
        try SettingError.check(settings.kind == .highShelf ? "filter.slope" : "filter.q", settings.q,
                               in: settings.kind == .highShelf ? SettingLimits.shelfSlope : SettingLimits.filterQ)
        try SettingError.check("filter.gain", settings.gain, in: SettingLimits.filterGain)
    }

    /// Throws unless every property of `source` is in range.
    static func checkSource(_ source: Source) throws(SettingError) {
        for (name, v) in [("position", source.position), ("velocity", source.velocity), ("direction", source.direction)] {
            guard v.x.isFinite, v.y.isFinite, v.z.isFinite else {
                throw SettingError(setting: "source.\(name)", value: "\(v)", allowed: "finite coordinates")
            }
        }
        try SettingError.check("source.referenceDistance", source.referenceDistance, in: SettingLimits.distance)
        try SettingError.check("source.maximumDistance", source.maximumDistance, in: source.referenceDistance...SettingLimits.distance.upperBound)
        try SettingError.check("source.rolloffFactor", source.rolloffFactor, in: SettingLimits.rolloff)
        try checkCone(source.cone)
        try SettingError.check("source.airAbsorptionFactor", source.airAbsorptionFactor, in: SettingLimits.airAbsorption)
    }

    static func checkCone(_ cone: Cone) throws(SettingError) {
        try SettingError.check("cone.innerAngle", cone.innerAngle, in: SettingLimits.coneAngle)
        try SettingError.check("cone.outerAngle", cone.outerAngle, in: cone.innerAngle...SettingLimits.coneAngle.upperBound)
        try SettingError.check("cone.outerGain", cone.outerGain, in: SettingLimits.coneOuterGain)
    }
}

extension Voice {
    /// Moves a positional voice; it is heard from there at the next spatial update (every 128
    /// frames, gliding). Non-finite coordinates count as 0. A voice that is not positional, or
    /// has ended, ignores it.
    public func setPosition(_ position: Vector3) {
        handle.engine.value?.send(.changeSource(id, .position(position)))
    }

    /// Moves a positional voice and sets its velocity (for doppler) in one step.
    public func setPosition(_ position: Vector3, velocity: Vector3) {
        handle.engine.value?.send(.setPosition(id, position, velocity: velocity))
    }

    /// The velocity doppler shifts the voice by (world units per second).
    public func setVelocity(_ velocity: Vector3) {
        handle.engine.value?.send(.changeSource(id, .velocity(velocity)))
    }

    /// Makes the voice directional: full level within `inner` degrees around `direction`,
    /// `outerGain` beyond `outer` degrees, a straight line between (OpenAL's cone). Angles 0…360,
    /// outer at least inner; outerGain 0…1.
    public func setCone(inner: Float, outer: Float, outerGain: Float, direction: Vector3) throws(SettingError) {
        let cone = Cone(innerAngle: inner, outerAngle: outer, outerGain: outerGain)
        try SoundEngine.checkCone(cone)
        handle.engine.value?.send(.changeSource(id, .cone(cone, direction: direction)))
    }

    /// Position, velocity and direction relative to the listener (x right, y up, −z ahead),
    /// following it: for the player's own sounds and the UI.
    public func setRelative(_ relative: Bool) {
        handle.engine.value?.send(.changeSource(id, .relative(relative)))
    }

    /// Changes how much of the voice effect bus `bus` (0…3) gets: 0…1, linear, gliding over 5 ms.
    public func setSend(_ level: Float, bus: Int) throws(SettingError) {
        try SettingError.check("bus", bus, in: SettingLimits.effectBus)
        try SettingError.check("send", level, in: SettingLimits.send)
        handle.engine.value?.send(.setSend(id, bus: bus, level: level))
    }

    /// Puts a filter on the voice (a low-pass for a sound behind a wall), glides it to new
    /// settings, or (nil) takes it off; changes glide over 5 ms, so they never click. See
    /// `SoundEngine.checkFilter` for the ranges.
    public func setFilter(_ settings: FilterSettings?) throws(SettingError) {
        if let settings { try SoundEngine.checkFilter(settings) }
        handle.engine.value?.send(.setFilter(id, settings))
    }

    /// Replaces all of the voice's source properties; a voice that was not positional becomes
    /// positional (its pan no longer counts).
    public func setSource(_ source: Source) throws(SettingError) {
        try SoundEngine.checkSource(source)
        handle.engine.value?.send(.setSource(id, source))
    }
}

/// Which head-related transfer functions render positional voices (`SoundEngine.Configuration.hrtf`).
public enum HRTFChoice: Sendable, Hashable {
    /// Positional voices are panned (equal power).
    case off
    /// The SOFA set Debian's libmysofa1 installs (/usr/share/libmysofa/default.sofa: MIT KEMAR).
    case `default`
    /// A SOFA (AES69) file of your own.
    case sofa(URL)
}

extension SoundEngine {
    /// The HRTF table for `choice` at the output's rate, and what `metrics.hrtf` says.
    static func loadHRTF(_ choice: HRTFChoice, format: AudioFormat) throws -> (HRTFTable?, String) {
        let url: URL
        switch choice {
        case .off:
            return (nil, "off")
        case .default:
            guard let found = SOFAFile.defaultURL else {
                throw SOFAError(path: "/usr/share/libmysofa/default.sofa",
                                reason: .libraryMissing(line: "the default HRTF set is not installed; install libmysofa1 (apt-get install libmysofa1) or give Configuration.hrtf = .sofa(url)"))
            }
            url = found
        case .sofa(let file):
            url = file
        }
        guard format.channels == 2 else {
            return (nil, "off: HRTF needs stereo output, the output has \(format.channels) channel\(format.channels == 1 ? "" : "s")")
        }
        let table = try SOFAFile.load(url, sampleRate: format.sampleRate)
        return (table, "\(url.lastPathComponent), \(table.irLength) taps at \(format.sampleRate) Hz")
    }
}
