// Sound in a game's world: the listener, the world, positional plays, what a positional voice
// can change, filters and what renders positional voices (see sfx.h, "Sound in a game's world").
// The C API checks every number itself, under the C names of sfx.h's fields, so that a bad value
// is an error even for a voice that has already ended (the engine's setters are not called then).
import CSFXAPI
import SFX

@_cdecl("sfx_listener_set")
public func exportedListenerSet(_ handle: OpaquePointer?, _ listener: UnsafePointer<sfx_listener>?) -> Int32 {
    cCall {
        let engine = try Handles.engine(handle).engine
        guard let listener = listener?.pointee else { throw CAPIError.null("listener") }
        let forward = try vector("listener.forward", listener.forward)
        let up = try vector("listener.up", listener.up)
        for (name, v) in [("listener.forward", forward), ("listener.up", up)] where !(length(v) > 0) {
            throw CAPIError.range(name, "\(describe(v))", "a direction that is not zero")
        }
        let side = Vector3(forward.y * up.z - forward.z * up.y, forward.z * up.x - forward.x * up.z, forward.x * up.y - forward.y * up.x)
        guard length(side) > 0 else {
            throw CAPIError.range("listener.up", "\(describe(up))", "a direction that is not parallel to listener.forward \(describe(forward))")
        }
        try checkGain("listener.gain", listener.gain)
        engine.listener = Listener(position: try vector("listener.position", listener.position),
                                   velocity: try vector("listener.velocity", listener.velocity),
                                   forward: forward, up: up, gain: listener.gain)
    }
}

@_cdecl("sfx_listener_get")
public func exportedListenerGet(_ handle: OpaquePointer?, _ listener: UnsafeMutablePointer<sfx_listener>?) -> Int32 {
    cCall {
        let engine = try Handles.engine(handle).engine
        guard let listener else { throw CAPIError.null("listener (the sfx_listener * to fill)") }
        let current = engine.listener
        listener.pointee = sfx_listener(position: tuple(current.position), velocity: tuple(current.velocity),
                                        forward: tuple(current.forward), up: tuple(current.up), gain: current.gain)
    }
}

@_cdecl("sfx_world_set")
public func exportedWorldSet(_ handle: OpaquePointer?, _ dopplerFactor: Float, _ speedOfSound: Float, _ metersPerUnit: Float) -> Int32 {
    cCall {
        let engine = try Handles.engine(handle).engine
        try SettingError.check("doppler_factor", dopplerFactor, in: SettingLimits.dopplerFactor)
        try SettingError.check("speed_of_sound", speedOfSound, in: SettingLimits.speedOfSound)
        try SettingError.check("meters_per_unit", metersPerUnit, in: SettingLimits.metersPerUnit)
        try engine.setWorld(SpatialWorld(dopplerFactor: dopplerFactor, speedOfSound: speedOfSound, metersPerUnit: metersPerUnit))
    }
}

@_cdecl("sfx_source_default")
public func exportedSourceDefault(_ source: UnsafeMutablePointer<sfx_source>?) {
    source?.pointee = cSource(Source())
}

@_cdecl("sfx_play_at")
public func exportedPlayAt(_ handle: OpaquePointer?, _ sound: UInt32, _ x: Float, _ y: Float, _ z: Float,
                           _ options: UnsafePointer<sfx_play_options>?, _ voice: UnsafeMutablePointer<UInt64>?) -> Int32 {
    cCall {
        voice?.pointee = 0
        _ = try Handles.engine(handle)
        let position = try vector("position", (x, y, z))
        try startPlay(handle, sound, options, source: Source(position: position), voice)
    }
}

@_cdecl("sfx_play_source")
public func exportedPlaySource(_ handle: OpaquePointer?, _ sound: UInt32, _ source: UnsafePointer<sfx_source>?,
                               _ options: UnsafePointer<sfx_play_options>?, _ voice: UnsafeMutablePointer<UInt64>?) -> Int32 {
    cCall {
        voice?.pointee = 0
        _ = try Handles.engine(handle)
        guard let source = source?.pointee else { throw CAPIError.null("source") }
        try startPlay(handle, sound, options, source: swiftSource(source), voice)
    }
}

@_cdecl("sfx_voice_set_position")
public func exportedVoiceSetPosition(_ handle: OpaquePointer?, _ voice: UInt64, _ x: Float, _ y: Float, _ z: Float) -> Int32 {
    cCall {
        let owner = try Handles.engine(handle)
        let position = try vector("position", (x, y, z))
        owner.voice(voice)?.setPosition(position)
    }
}

@_cdecl("sfx_voice_set_velocity")
public func exportedVoiceSetVelocity(_ handle: OpaquePointer?, _ voice: UInt64, _ x: Float, _ y: Float, _ z: Float) -> Int32 {
    cCall {
        let owner = try Handles.engine(handle)
        let velocity = try vector("velocity", (x, y, z))
        owner.voice(voice)?.setVelocity(velocity)
    }
}

@_cdecl("sfx_voice_set_cone")
public func exportedVoiceSetCone(_ handle: OpaquePointer?, _ voice: UInt64, _ inner: Float, _ outer: Float, _ outerGain: Float,
                                 _ dx: Float, _ dy: Float, _ dz: Float) -> Int32 {
    cCall {
        let owner = try Handles.engine(handle)
        try checkCone(inner: inner, outer: outer, outerGain: outerGain, names: ("inner", "outer", "outer_gain"))
        let direction = try vector("direction", (dx, dy, dz))
        try owner.voice(voice)?.setCone(inner: inner, outer: outer, outerGain: outerGain, direction: direction)
    }
}

@_cdecl("sfx_voice_set_relative")
public func exportedVoiceSetRelative(_ handle: OpaquePointer?, _ voice: UInt64, _ relative: Int32) -> Int32 {
    cCall { try Handles.engine(handle).voice(voice)?.setRelative(relative != 0) }
}

@_cdecl("sfx_voice_set_source")
public func exportedVoiceSetSource(_ handle: OpaquePointer?, _ voice: UInt64, _ source: UnsafePointer<sfx_source>?) -> Int32 {
    cCall {
        let owner = try Handles.engine(handle)
        guard let source = source?.pointee else { throw CAPIError.null("source") }
        try owner.voice(voice)?.setSource(swiftSource(source))
    }
}

@_cdecl("sfx_voice_set_filter")
public func exportedVoiceSetFilter(_ handle: OpaquePointer?, _ voice: UInt64, _ filter: UnsafePointer<sfx_filter>?) -> Int32 {
    cCall {
        let owner = try Handles.engine(handle)
        let settings = try filter.map { try filterSettings($0.pointee) }
        try owner.voice(voice)?.setFilter(settings)
    }
}

@_cdecl("sfx_group_set_filter")
public func exportedGroupSetFilter(_ handle: OpaquePointer?, _ group: UInt32, _ filter: UnsafePointer<sfx_filter>?) -> Int32 {
    cCall {
        let engine = try Handles.engine(handle).engine
        let group = try soundGroup(group)
        let settings = try filter.map { try filterSettings($0.pointee) }
        try engine.setFilter(settings, for: group)
    }
}

@_cdecl("sfx_hrtf_status")
public func exportedHRTFStatus(_ handle: OpaquePointer?, _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int) -> Int32 {
    cCall {
        let engine = try Handles.engine(handle).engine
        guard let buffer else { throw CAPIError.null("buffer") }
        try copy(engine.metrics.hrtf, to: buffer, size: size, what: "the HRTF status")
    }
}

// MARK: Between sfx.h's types and the engine's

/// `text` into a C buffer of `size` bytes, NUL-terminated; SFX_ERROR_RANGE (after copying what
/// fits) when it does not fit whole.
func copy(_ text: String, to buffer: UnsafeMutablePointer<CChar>, size: Int, what: String) throws(CAPIError) {
    let bytes = Array(text.utf8)
    if size > 0 {
        let count = min(bytes.count, size - 1)
        bytes.withUnsafeBufferPointer { source in
            UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress!, byteCount: count)
        }
        buffer[count] = 0
    }
    guard bytes.count < size else {
        throw CAPIError.range("size", "\(size)", "at least \(bytes.count + 1) bytes for \(what) (\"\(text)\")")
    }
}

/// A C `float[3]` as a vector, or SFX_ERROR_RANGE naming it unless every coordinate is finite.
func vector(_ name: String, _ v: (Float, Float, Float)) throws(CAPIError) -> Vector3 {
    let vector = Vector3(v.0, v.1, v.2)
    guard vector.x.isFinite, vector.y.isFinite, vector.z.isFinite else {
        throw CAPIError.range(name, describe(vector), "finite coordinates")
    }
    return vector
}

func length(_ v: Vector3) -> Float { (v * v).sum().squareRoot() }

func describe(_ v: Vector3) -> String { "(\(v.x), \(v.y), \(v.z))" }

func tuple(_ v: Vector3) -> (Float, Float, Float) { (v.x, v.y, v.z) }

func checkCone(inner: Float, outer: Float, outerGain: Float, names: (String, String, String)) throws(SettingError) {
    try SettingError.check(names.0, inner, in: SettingLimits.coneAngle)
    try SettingError.check(names.1, outer, in: (inner.isFinite ? inner : 0)...SettingLimits.coneAngle.upperBound)
    try SettingError.check(names.2, outerGain, in: SettingLimits.coneOuterGain)
}

/// The engine's source for a C one, every property checked against `SettingLimits`.
func swiftSource(_ source: sfx_source) throws(CAPIError) -> Source {
    let position = try vector("source.position", source.position)
    let velocity = try vector("source.velocity", source.velocity)
    let direction = try vector("source.direction", source.direction)
    guard source.distance_model <= UInt32(UInt8.max), let model = DistanceModel(rawValue: UInt8(source.distance_model)) else {
        throw CAPIError.range("source.distance_model", "\(source.distance_model)",
                              "0…\(DistanceModel.allCases.count - 1) (an SFX_DISTANCE_*)")
    }
    do throws(SettingError) {
        try SettingError.check("source.reference_distance", source.reference_distance, in: SettingLimits.distance)
        try SettingError.check("source.maximum_distance", source.maximum_distance,
                               in: (source.reference_distance.isFinite ? source.reference_distance : 0)...SettingLimits.distance.upperBound)
        try SettingError.check("source.rolloff_factor", source.rolloff_factor, in: SettingLimits.rolloff)
        try checkCone(inner: source.cone_inner, outer: source.cone_outer, outerGain: source.cone_outer_gain,
                      names: ("source.cone_inner", "source.cone_outer", "source.cone_outer_gain"))
        try SettingError.check("source.air_absorption", source.air_absorption, in: SettingLimits.airAbsorption)
    } catch {
        throw CAPIError(error)
    }
    return Source(position: position, velocity: velocity, direction: direction, relative: source.relative != 0,
                  distanceModel: model, referenceDistance: source.reference_distance,
                  maximumDistance: source.maximum_distance, rolloffFactor: source.rolloff_factor,
                  cone: Cone(innerAngle: source.cone_inner, outerAngle: source.cone_outer, outerGain: source.cone_outer_gain),
                  airAbsorptionFactor: source.air_absorption)
}

/// The C source for an engine's one.
func cSource(_ source: Source) -> sfx_source {
    sfx_source(position: tuple(source.position), velocity: tuple(source.velocity), direction: tuple(source.direction),
               relative: source.relative ? 1 : 0, distance_model: UInt32(source.distanceModel.rawValue),
               reference_distance: source.referenceDistance, maximum_distance: source.maximumDistance,
               rolloff_factor: source.rolloffFactor, cone_inner: source.cone.innerAngle, cone_outer: source.cone.outerAngle,
               cone_outer_gain: source.cone.outerGain, air_absorption: source.airAbsorptionFactor)
}

/// The engine's filter for a C one, checked against `SettingLimits`.
func filterSettings(_ filter: sfx_filter) throws(CAPIError) -> FilterSettings {
    guard filter.kind <= UInt32(UInt8.max), let kind = FilterKind(rawValue: UInt8(filter.kind)) else {
        throw CAPIError.range("filter.kind", "\(filter.kind)", "0…3 (an SFX_FILTER_*)")
    }
    do throws(SettingError) {
        try SettingError.check("filter.cutoff", filter.cutoff, in: SettingLimits.filterCutoff)
        try SettingError.check(kind == .highShelf ? "filter.q (the high shelf's slope)" : "filter.q", filter.q,
                               in: kind == .highShelf ? SettingLimits.shelfSlope : SettingLimits.filterQ)
        try SettingError.check("filter.gain", filter.gain, in: SettingLimits.filterGain)
    } catch {
        throw CAPIError(error)
    }
    return FilterSettings(kind: kind, cutoff: filter.cutoff, q: filter.q, gain: filter.gain)
}
