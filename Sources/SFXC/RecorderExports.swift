// sfx_record_*: recording through the C API (see sfx.h).
import FoundationEssentials
import Glibc
import Synchronization
import CSFXAPI
import SFX

/// The recorders sfx_record_start handed out, by token (`HandleTable`, as engines are kept).
enum RecorderHandles {
    private static let recorders = HandleTable<Recorder>()

    static func register(_ recorder: Recorder) -> OpaquePointer { recorders.register(recorder) }

    static func recorder(_ handle: OpaquePointer?, remove: Bool = false) throws(CAPIError) -> Recorder {
        guard let handle else { throw .null("recorder") }
        guard let recorder = recorders.value(handle, remove: remove) else {
            throw CAPIError(SFX_ERROR_CLOSED, "the recorder was stopped or cancelled (or the handle was never one sfx_record_start returned); start one with sfx_record_start")
        }
        return recorder
    }
}

/// The recorder's settings for C options: zero is the default for every field.
func recorderSettings(_ options: sfx_record_options, engine: SoundEngine?) throws(CAPIError) -> RecorderSettings {
    let path = options.path.map { String(cString: $0) }
    var format = RecordingFormat.m4a
    if let name = options.format.map({ String(cString: $0) }) {
        guard let named = RecordingFormat(rawValue: name.lowercased()) else {
            throw .range("format", "\"\(name)\"", RecordingFormat.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))
        }
        format = named
    } else if let path, let byName = RecordingFormat(fileName: path) {
        format = byName
    }
    var settings = RecorderSettings(format: format)
    if let path { settings.url = URL(filePath: path) }
    if let device = options.device { settings.device = String(cString: device) }
    if options.sample_rate != 0 { settings.sampleRate = Int(options.sample_rate) }
    if options.channels != 0 { settings.channels = Int(options.channels) }
    for (name, value) in [("max_seconds", options.max_seconds), ("min_seconds", options.min_seconds)]
    where !value.isFinite || value < 0 || value > 86_400 {
        throw .range(name, "\(value)", "0 (none) up to 86400 seconds")
    }
    if options.max_seconds > 0 { settings.maxDuration = .nanoseconds(Int64(Double(options.max_seconds) * 1e9)) }
    if options.min_seconds > 0 { settings.minDuration = .nanoseconds(Int64(Double(options.min_seconds) * 1e9)) }
    if options.fragmented > 1 { throw .range("fragmented", "\(options.fragmented)", "0 (a standard M4A at stop) or 1") }
    settings.container = options.fragmented == 1 ? .fragmented : .standard
    if options.voice_processing > 1 { throw .range("voice_processing", "\(options.voice_processing)", "0 (off) or 1 (noise suppression, gain, high-pass)") }
    if options.trim_silence > 1 { throw .range("trim_silence", "\(options.trim_silence)", "0 or 1 (leading and trailing silence left out)") }
    settings.voiceProcessing = options.voice_processing == 1 ? .standard : .off
    settings.trimSilence = options.trim_silence == 1
    if options.prompt != 0 {
        guard engine != nil else { throw .null("engine (a prompt plays on an engine)") }
        settings.prompt = SoundID(rawValue: options.prompt)
    }
    return settings
}

/// A recorder's error as a C status: its settings out of range, its device, or anything else.
func recorderFailure(_ error: RecorderError) -> CAPIError {
    switch error {
    case .setting(let setting): CAPIError(SFX_ERROR_RANGE, setting.description)
    case .device, .noCardNoServer, .deviceLost: CAPIError(SFX_ERROR_DEVICE, error.description)
    default: CAPIError(SFX_ERROR_FAILED, error.description)
    }
}

@_cdecl("sfx_record_start")
public func exportedRecordStart(_ handle: OpaquePointer?, _ options: UnsafePointer<sfx_record_options>?,
                                _ recorder: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    cCall {
        guard let recorder else { throw CAPIError.null("recorder (the sfx_recorder ** to set)") }
        recorder.pointee = nil
        let engine = try handle.map { handle throws(CAPIError) in try Handles.engine(handle).engine }
        let settings = try recorderSettings(options?.pointee ?? sfx_record_options(), engine: engine)
        do throws(RecorderError) {
            let made = try Recorder(settings: settings, engine: engine)
            try made.record()
            recorder.pointee = RecorderHandles.register(made)
        } catch {
            throw recorderFailure(error)
        }
    }
}

@_cdecl("sfx_record_level")
public func exportedRecordLevel(_ handle: OpaquePointer?, _ average: UnsafeMutablePointer<Float>?,
                                _ peak: UnsafeMutablePointer<Float>?) -> Int32 {
    cCall {
        let recorder = try RecorderHandles.recorder(handle)
        average?.pointee = recorder.averagePower(channel: 0)
        peak?.pointee = recorder.peakPower(channel: 0)
    }
}

@_cdecl("sfx_record_elapsed")
public func exportedRecordElapsed(_ handle: OpaquePointer?, _ seconds: UnsafeMutablePointer<Double>?,
                                  _ finished: UnsafeMutablePointer<Int32>?) -> Int32 {
    cCall {
        let recorder = try RecorderHandles.recorder(handle)
        seconds?.pointee = recorder.currentTime
        finished?.pointee = recorder.isRecording ? 0 : 1
    }
}

@_cdecl("sfx_record_stop")
public func exportedRecordStop(_ handle: OpaquePointer?, _ path: UnsafeMutablePointer<CChar>?, _ size: Int,
                               _ seconds: UnsafeMutablePointer<Double>?) -> Int32 {
    cCall {
        let recorder = try RecorderHandles.recorder(handle, remove: true)
        // A recording that ended by itself has its last event already.
        let last = recorder.stop() ?? recorder.waitUntilFinished(timeout: .seconds(10))
        switch last {
        case .finished(let url, let duration)?:
            seconds?.pointee = duration
            if let path { try copy(url.path, to: path, size: size, what: "the recording's path") }
        case .discarded(let url, let reason)?:
            throw CAPIError(SFX_ERROR_REJECTED, "recording \(url.path) discarded: \(reason)")
        case .failed(let error)?:
            throw recorderFailure(error)
        default:
            throw CAPIError(SFX_ERROR_FAILED, "the recording did not end (\(last.map { "\($0)" } ?? "no event")); try again")
        }
    }
}

@_cdecl("sfx_record_cancel")
public func exportedRecordCancel(_ handle: OpaquePointer?) -> Int32 {
    cCall { _ = try RecorderHandles.recorder(handle, remove: true).cancel() }
}
