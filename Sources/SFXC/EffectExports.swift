// sfx_effect_set_reverb, sfx_effect_set_echo, sfx_effect_clear, sfx_voice_set_send: the effect
// buses (see sfx.h, "Effect buses").
import CSFXAPI
import SFX

/// The ranges of an echo as `EchoSettings` documents them (its processor clamps to them; the C
/// API refuses what lies outside).
enum EchoLimits {
    static let delay: ClosedRange<Float> = 0.001...EchoSettings.maximumDelay
    static let feedback: ClosedRange<Float> = 0...0.95
    static let wet: ClosedRange<Float> = 0...1
    static let damping: ClosedRange<Float> = 0...0.99
}

@_cdecl("sfx_effect_set_reverb")
public func exportedEffectSetReverb(_ handle: OpaquePointer?, _ bus: UInt32, _ preset: UnsafePointer<CChar>?, _ returnGroup: UInt32) -> Int32 {
    cCall {
        let engine = try Handles.engine(handle).engine
        let bus = try effectBus(bus)
        let name = try string(preset, "preset")
        let group = try soundGroup(returnGroup)
        guard let settings = ReverbSettings.presets.first(where: { $0.name == name })?.settings else {
            throw CAPIError(SFX_ERROR_SOUND, "no reverb preset is named \"\(name)\"; use one of \(ReverbSettings.presets.map { "\"\($0.name)\"" }.joined(separator: ", "))")
        }
        try setEffect(engine, .reverb(settings), bus: bus, returnsTo: group)
    }
}

@_cdecl("sfx_effect_set_echo")
public func exportedEffectSetEcho(_ handle: OpaquePointer?, _ bus: UInt32, _ delay: Float, _ feedback: Float, _ wet: Float,
                                  _ damping: Float, _ returnGroup: UInt32) -> Int32 {
    cCall {
        let engine = try Handles.engine(handle).engine
        let bus = try effectBus(bus)
        try SettingError.check("delay", delay, in: EchoLimits.delay)
        try SettingError.check("feedback", feedback, in: EchoLimits.feedback)
        try SettingError.check("wet", wet, in: EchoLimits.wet)
        try SettingError.check("damping", damping, in: EchoLimits.damping)
        let group = try soundGroup(returnGroup)
        try setEffect(engine, .echo(EchoSettings(delay: delay, feedback: feedback, wet: wet, damping: damping)), bus: bus, returnsTo: group)
    }
}

@_cdecl("sfx_effect_clear")
public func exportedEffectClear(_ handle: OpaquePointer?, _ bus: UInt32) -> Int32 {
    cCall {
        let engine = try Handles.engine(handle).engine
        try setEffect(engine, nil, bus: try effectBus(bus), returnsTo: .effects)
    }
}

@_cdecl("sfx_voice_set_send")
public func exportedVoiceSetSend(_ handle: OpaquePointer?, _ voice: UInt64, _ bus: UInt32, _ level: Float) -> Int32 {
    cCall {
        let owner = try Handles.engine(handle)
        let bus = try effectBus(bus)
        try SettingError.check("level", level, in: SettingLimits.send)
        try owner.voice(voice)?.setSend(level, bus: bus)
    }
}

func effectBus(_ bus: UInt32) throws(CAPIError) -> Int {
    guard bus <= UInt32(SettingLimits.effectBus.upperBound) else {
        throw CAPIError.range("bus", "\(bus)", "\(SettingLimits.effectBus.lowerBound)…\(SettingLimits.effectBus.upperBound)")
    }
    return Int(bus)
}

func setEffect(_ engine: SoundEngine, _ effect: Effect?, bus: Int, returnsTo group: SoundGroup) throws {
    guard try engine.setEffect(effect, bus: bus, returnsTo: group) else {
        throw CAPIError(SFX_ERROR_REJECTED, "the engine's command queue is full (8,192 commands waiting); try again once the output thread has caught up")
    }
}
