// sfx_play, the voice and group calls (see sfx.h).
import Glibc
import Synchronization
import CSFXAPI
import SFX

/// A C completion callback and its user data, called on the engine's completion queue.
struct CCompletion: @unchecked Sendable {
    let function: sfx_completion_fn
    let userData: UnsafeMutableRawPointer?

    /// `late`: the frames a play at a time already past started after it (sfx_play_at_time),
    /// said in `detail` when nothing else is.
    func call(_ voice: UInt64, _ outcome: PlayOutcome, late: Int = 0) {
        var (code, detail) = CCompletion.code(outcome)
        if detail == nil, late > 0 { detail = "started \(late) frames late: its time had passed when it reached the mixer" }
        if let detail {
            detail.withCString { function(voice, code, $0, userData) }
        } else {
            function(voice, code, nil, userData)
        }
    }

    /// The C outcome, and the reason for a rejection.
    static func code(_ outcome: PlayOutcome) -> (sfx_outcome, String?) {
        if case .finished = outcome { return (SFX_FINISHED, nil) }
        if case .stopped = outcome { return (SFX_STOPPED, nil) }
        if case .stolen = outcome { return (SFX_STOLEN, nil) }
        if case .rejected(let why) = outcome { return (SFX_REJECTED, "\(why)") }
        return (SFX_REJECTED, "\(outcome)")
    }
}

/// Makes "the completion runs exactly once, or sfx_alert returns an error" hold for an alert,
/// which the engine plays through `play`, completing a refusal on its completion queue: a
/// rejection that arrives before sfx_alert has returned is kept here and returned by sfx_alert
/// instead. A completion that arrives before sfx_alert has recorded the voice waits for it (a
/// few instructions). sfx_play needs none of this: it reserves its voice first
/// (`SoundEngine.start`).
final class PlayGate: Sendable {
    private enum State {
        case inCall(rejection: String?)
        case returned(UInt64)
    }

    private enum Step { case deliver(UInt64), keep, wait }

    private let state = Mutex(State.inCall(rejection: nil))

    /// Called by the completion: the voice to report it for, or nil when sfx_play reports it.
    func settle(_ outcome: PlayOutcome) -> UInt64? {
        while true {
            let step: Step = state.withLock { state in
                switch state {
                case .returned(let voice): return .deliver(voice)
                case .inCall(.some): return .keep
                case .inCall(nil):
                    guard case .rejected(let why) = outcome else { return .wait }
                    state = .inCall(rejection: "\(why)")
                    return .keep
                }
            }
            switch step {
            case .deliver(let voice): return voice
            case .keep: return nil
            case .wait: usleep(100)
            }
        }
    }

    /// Called by sfx_play once `play` has returned: the rejection it completed with, if any;
    /// otherwise the completion may now report `voice`.
    func returned(_ voice: UInt64) -> String? {
        state.withLock { state in
            guard case .inCall(let rejection) = state else { return nil }
            if rejection == nil { state = .returned(voice) }
            return rejection
        }
    }
}

@_cdecl("sfx_play")
public func exportedPlay(_ handle: OpaquePointer?, _ sound: UInt32, _ options: UnsafePointer<sfx_play_options>?,
                  _ voice: UnsafeMutablePointer<UInt64>?) -> Int32 {
    cCall {
        voice?.pointee = 0
        try startPlay(handle, sound, options, source: nil, voice)
    }
}

/// sfx_play, and with a `source` sfx_play_at and sfx_play_source (a positional voice, whose pan
/// is checked but not used), with a `time` sfx_play_at_time (`max_instances` is not used):
/// `*voice` is set once the play is on its way.
func startPlay(_ handle: OpaquePointer?, _ sound: UInt32, _ options: UnsafePointer<sfx_play_options>?, source: Source?,
               at time: EngineTime? = nil, _ voice: UnsafeMutablePointer<UInt64>?) throws {
    let owner = try Handles.engine(handle)
    var defaults = sfx_play_options()
    sfx_play_options_init(&defaults)
    let options = options?.pointee ?? defaults
    try checkGain("volume", options.volume)
    try checkPan(options.pan)
    guard SettingLimits.loops.contains(Int(options.loops)) else { throw CAPIError.range("loops", "\(options.loops)", "-1 (until stopped) or 0 and up") }
    let group = try soundGroup(options.group)
    guard SettingLimits.priority.contains(Int(options.priority)) else {
        throw CAPIError.range("priority", "\(options.priority)", "\(SettingLimits.priority.lowerBound)…\(SettingLimits.priority.upperBound)")
    }
    let id = SoundID(rawValue: sound)
    guard owner.engine.library.cue(for: id) != nil else {
        throw CAPIError(SFX_ERROR_SOUND, "sound \(sound) is not loaded (never loaded, or disposed); load it with sfx_load_file or sfx_system_sound")
    }
    let callback = options.completion.map { CCompletion(function: $0, userData: options.user_data) }
    // The voice is known, and recorded, before its completion can run: the completion never
    // waits for this call, and a refusal is returned here and never completed.
    let played = owner.engine.reserveVoice()
    let number = played.id.rawValue
    owner.add(played)
    let completion: @Sendable (PlayOutcome) -> Void = { [weak owner] outcome in
        owner?.remove(number)
        callback?.call(number, outcome, late: played.lateFrames)
    }
    let priority = VoicePriority(rawValue: UInt8(options.priority))
    let refusal = if let time {
        owner.engine.start(played, id, at: time, volume: options.volume, pan: options.pan, loops: Int(options.loops),
                           group: group, priority: priority, completion: completion)
    } else {
        owner.engine.start(
            played, id, volume: options.volume, pan: source == nil ? options.pan : 0, loops: Int(options.loops), group: group,
            priority: priority, maxInstances: Int(options.max_instances), source: source, completion: completion)
    }
    if let refusal {
        owner.remove(number)
        throw CAPIError(SFX_ERROR_REJECTED, "\(refusal)")
    }
    voice?.pointee = number
}

@_cdecl("sfx_voice_stop")
public func exportedVoiceStop(_ handle: OpaquePointer?, _ voice: UInt64, _ fadeMilliseconds: UInt32) -> Int32 {
    cCall { try Handles.engine(handle).voice(voice)?.stop(fade: .milliseconds(Int64(fadeMilliseconds))) }
}

@_cdecl("sfx_voice_set_volume")
public func exportedVoiceSetVolume(_ handle: OpaquePointer?, _ voice: UInt64, _ volume: Float) -> Int32 {
    cCall {
        let owner = try Handles.engine(handle)
        try checkGain("volume", volume)
        try owner.voice(voice)?.setVolume(volume)
    }
}

@_cdecl("sfx_voice_set_pan")
public func exportedVoiceSetPan(_ handle: OpaquePointer?, _ voice: UInt64, _ pan: Float) -> Int32 {
    cCall {
        let owner = try Handles.engine(handle)
        try checkPan(pan)
        try owner.voice(voice)?.setPan(pan)
    }
}

@_cdecl("sfx_stop_all")
public func exportedStopAll(_ handle: OpaquePointer?, _ fadeMilliseconds: UInt32) -> Int32 {
    cCall { try Handles.engine(handle).engine.stopAll(fade: .milliseconds(Int64(fadeMilliseconds))) }
}

@_cdecl("sfx_group_stop")
public func exportedGroupStop(_ handle: OpaquePointer?, _ group: UInt32, _ fadeMilliseconds: UInt32) -> Int32 {
    cCall {
        let engine = try Handles.engine(handle).engine
        try engine.stop(group: soundGroup(group), fade: .milliseconds(Int64(fadeMilliseconds)))
    }
}

@_cdecl("sfx_group_set_gain")
public func exportedGroupSetGain(_ handle: OpaquePointer?, _ group: UInt32, _ gain: Float) -> Int32 {
    cCall {
        let engine = try Handles.engine(handle).engine
        try engine.setGain(gain, for: soundGroup(group))
    }
}

@_cdecl("sfx_group_set_muted")
public func exportedGroupSetMuted(_ handle: OpaquePointer?, _ group: UInt32, _ muted: Int32) -> Int32 {
    cCall {
        let engine = try Handles.engine(handle).engine
        engine.setMuted(muted != 0, group: try soundGroup(group))
    }
}

func soundGroup(_ group: UInt32) throws(CAPIError) -> SoundGroup {
    guard group <= UInt8.max, let value = SoundGroup(rawValue: UInt8(group)) else {
        throw CAPIError.range("group", "\(group)", "0…\(SoundGroup.count - 1) (an SFX_GROUP_*)")
    }
    return value
}

func checkGain(_ setting: String, _ gain: Float) throws(CAPIError) {
    guard gain.isFinite, SettingLimits.gain.contains(gain) else {
        throw CAPIError.range(setting, "\(gain)", "a number from \(Int(SettingLimits.gain.lowerBound)) to \(SettingLimits.gain.upperBound)")
    }
}

func checkPan(_ pan: Float) throws(CAPIError) {
    guard pan.isFinite, SettingLimits.pan.contains(pan) else {
        throw CAPIError.range("pan", "\(pan)", "a number from \(Int(SettingLimits.pan.lowerBound)) to \(Int(SettingLimits.pan.upperBound))")
    }
}
