// The engine's clock and plays at a time (see sfx.h, "The engine's clock and plays at a time").
import CSFXAPI
import SFX

@_cdecl("sfx_clock_now")
public func exportedClockNow(_ handle: OpaquePointer?, _ frame: UnsafeMutablePointer<Int64>?,
                             _ nextSchedulable: UnsafeMutablePointer<Int64>?) -> Int32 {
    cCall {
        let clock = try Handles.engine(handle).engine.clock
        guard let frame else { throw CAPIError.null("frame (the int64_t * to set)") }
        frame.pointee = clock.now.frame
        nextSchedulable?.pointee = clock.nextSchedulable.frame
    }
}

@_cdecl("sfx_clock_monotonic")
public func exportedClockMonotonic(_ handle: OpaquePointer?, _ frame: Int64, _ nanoseconds: UnsafeMutablePointer<Int64>?) -> Int32 {
    cCall {
        let clock = try Handles.engine(handle).engine.clock
        guard let nanoseconds else { throw CAPIError.null("nanoseconds (the int64_t * to set)") }
        guard let seconds = clock.monotonicSeconds(of: EngineTime(frame: frame)) else {
            throw CAPIError(SFX_ERROR_DEVICE, "the device has not yet said where its DAC is; ask again once it plays (sfx_device_status)")
        }
        nanoseconds.pointee = Int64((seconds * 1e9).rounded())
    }
}

@_cdecl("sfx_play_at_time")
public func exportedPlayAtTime(_ handle: OpaquePointer?, _ sound: UInt32, _ frame: Int64,
                               _ options: UnsafePointer<sfx_play_options>?, _ voice: UnsafeMutablePointer<UInt64>?) -> Int32 {
    cCall {
        voice?.pointee = 0
        try startPlay(handle, sound, options, source: nil, at: EngineTime(frame: frame), voice)
    }
}
