// sfx_alert, sfx_set_alert_callback, sfx_vibrate, sfx_vibrate_cancel (see sfx.h).
import CSFXAPI
import SFX

@_cdecl("sfx_alert")
public func exportedAlert(_ handle: OpaquePointer?, _ sound: UInt32, _ volume: Float, _ completion: sfx_completion_fn?,
                   _ userData: UnsafeMutableRawPointer?, _ heard: UnsafeMutablePointer<UInt32>?,
                   _ voice: UnsafeMutablePointer<UInt64>?) -> Int32 {
    cCall {
        heard?.pointee = 0
        voice?.pointee = 0
        let owner = try Handles.engine(handle)
        try checkGain("volume", volume)
        let id = SoundID(rawValue: sound)
        guard owner.engine.library.cue(for: id) != nil else {
            throw CAPIError(SFX_ERROR_SOUND, "sound \(sound) is not loaded (never loaded, or disposed); load it with sfx_load_file or sfx_system_sound")
        }
        let callback = completion.map { CCompletion(function: $0, userData: userData) }
        let gate = PlayGate()
        let result = owner.engine.alert(id, volume: volume) { [weak owner] outcome in
            guard let voice = gate.settle(outcome) else { return }
            owner?.remove(voice)
            callback?.call(voice, outcome)
        }
        var rejection: String?
        if let played = result.voice {
            owner.add(played)
            rejection = gate.returned(played.id.rawValue)
            if rejection != nil { owner.remove(played.id.rawValue) } else { voice?.pointee = played.id.rawValue }
        } else {
            _ = gate.returned(0)    // a muted alert's rejection is not a play to report
        }
        let played = result.played && rejection == nil
        heard?.pointee = (played ? SFX_ALERT_PLAYED : 0) | (result.vibrated ? SFX_ALERT_VIBRATED : 0)
        guard played || result.vibrated else {
            throw CAPIError(SFX_ERROR_REJECTED, "the alert was neither played nor vibrated: \(rejection ?? result.description)")
        }
    }
}

/// A C alert callback and its user data, called from the engine's delivery thread.
struct CAlertCallback: @unchecked Sendable {
    let function: sfx_alert_fn
    let userData: UnsafeMutableRawPointer?

    func call(_ notice: AlertNotice) {
        let reached = (notice.heard ? SFX_ALERT_PLAYED : 0) | (notice.felt ? SFX_ALERT_VIBRATED : 0)
            | (notice.flashed ? SFX_ALERT_FLASHED : 0) | (notice.quiet ? SFX_ALERT_QUIET_HOURS : 0)
        notice.caption.withCString { caption in notice.sound.withCString { sound in function(caption, sound, reached, userData) } }
    }
}

@_cdecl("sfx_set_alert_callback")
public func exportedSetAlertCallback(_ handle: OpaquePointer?, _ callback: sfx_alert_fn?, _ userData: UnsafeMutableRawPointer?) -> Int32 {
    cCall {
        let engine = try Handles.engine(handle).engine
        guard let callback else {
            engine.onAlert = nil
            return
        }
        let target = CAlertCallback(function: callback, userData: userData)
        engine.onAlert = { target.call($0) }
    }
}

@_cdecl("sfx_vibrate")
public func exportedVibrate(_ handle: OpaquePointer?, _ pattern: UnsafePointer<UInt32>?, _ count: Int) -> Int32 {
    cCall {
        let engine = try Handles.engine(handle).engine
        guard let pattern, count > 0 else {
            try engine.vibrate(.default)
            return
        }
        guard count <= VibrationPattern.maximumSegmentCount else {
            throw CAPIError.range("count", "\(count)", "1…\(VibrationPattern.maximumSegmentCount) durations")
        }
        let timings = UnsafeBufferPointer(start: pattern, count: count).map { Int($0) }
        try engine.vibrate(VibrationPattern.waveform(timings))
    }
}

@_cdecl("sfx_vibrate_cancel")
public func exportedVibrateCancel(_ handle: OpaquePointer?) -> Int32 {
    cCall { try Handles.engine(handle).engine.cancelVibration() }
}
