// sfx_open, sfx_close, sfx_wait_idle: an engine's life (see sfx.h).
import FoundationEssentials
import Glibc
import CSFXAPI
import SFX

@_cdecl("sfx_open")
public func exportedOpen(_ config: UnsafePointer<sfx_config>?, _ engine: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    cCall {
        guard let engine else { throw CAPIError.null("engine (the sfx_engine ** to set)") }
        engine.pointee = nil
        var settings = try UserSettings.load()
        if config?.pointee.device != nil { settings.device = nil }
        let policy = config?.pointee.while_no_device ?? 0
        guard (0...2).contains(policy) else {
            throw CAPIError.range("while_no_device", "\(policy)", "SFX_NO_DEVICE_MIX (0), SFX_NO_DEVICE_QUEUE (1) or SFX_NO_DEVICE_FAIL (2)")
        }
        var configuration = configuration(config?.pointee ?? sfx_config())
        settings.apply(to: &configuration)
        let opened = try SoundEngine(configuration: configuration)
        engine.pointee = Handles.register(CEngine(engine: opened))
    }
}

/// The engine's configuration for a C one: zero is the engine's default for every field. The
/// user's settings file is laid over it as the `sfx` command does (its device only when the C
/// configuration names none).
func configuration(_ config: sfx_config) -> SoundEngine.Configuration {
    var configuration = SoundEngine.Configuration()
    if let device = config.device { configuration.output.device = String(cString: device) }
    if config.sample_rate != 0 { configuration.output.sampleRate = Int(config.sample_rate) }
    if config.period_frames != 0 { configuration.output.periodFrames = Int(config.period_frames) }
    if config.periods != 0 { configuration.output.periodCount = Int(config.periods) }
    if config.max_voices != 0 { configuration.maxVoices = Int(config.max_voices) }
    switch config.while_no_device {
    case Int32(SFX_NO_DEVICE_QUEUE.rawValue): configuration.whileNoDevice = .queue(limit: config.queue_limit == 0 ? 64 : Int(config.queue_limit))
    case Int32(SFX_NO_DEVICE_FAIL.rawValue): configuration.whileNoDevice = .fail
    default: configuration.whileNoDevice = .mix
    }
    if let hrtf = config.hrtf {
        switch String(cString: hrtf) {
        case "", "off": configuration.hrtf = .off
        case "default": configuration.hrtf = .default
        case let path: configuration.hrtf = .sofa(URL(filePath: path))
        }
    }
    return configuration
}

@_cdecl("sfx_device_status")
public func exportedDeviceStatus(_ handle: OpaquePointer?, _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int) -> Int32 {
    var open: Int32 = 0
    let status = cCall {
        let engine = try Handles.engine(handle).engine
        guard let buffer else { throw CAPIError.null("buffer") }
        let metrics = engine.metrics
        open = metrics.deviceLost ? 0 : 1
        try copy(metrics.deviceLost ? metrics.deviceProblem ?? "the device is not open yet" : "", to: buffer, size: size, what: "the device's status")
    }
    return status == 0 ? open : status
}

@_cdecl("sfx_close")
public func exportedClose(_ engine: OpaquePointer?) -> Int32 {
    cCall { try Handles.remove(engine).engine.close() }
}

@_cdecl("sfx_wait_idle")
public func exportedWaitIdle(_ engine: OpaquePointer?, _ timeoutMilliseconds: UInt32) -> Int32 {
    cCall {
        let engine = try Handles.engine(engine).engine
        guard engine.waitUntilIdle(timeout: .milliseconds(Int64(timeoutMilliseconds))) else {
            throw CAPIError(SFX_ERROR_FAILED, "sounds still playing after \(timeoutMilliseconds) ms; wait longer, or stop them (sfx_stop_all)")
        }
    }
}
