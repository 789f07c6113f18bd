// sfx_system_sound, sfx_load_file, sfx_load_memory, sfx_load_pcm, sfx_dispose (see sfx.h).
import Glibc
import CSFXAPI
import SFX

@_cdecl("sfx_system_sound")
public func exportedSystemSound(_ engine: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ sound: UnsafeMutablePointer<UInt32>?) -> Int32 {
    cCall {
        let engine = try Handles.engine(engine).engine
        let name = try string(name, "name")
        guard let sound else { throw CAPIError.null("sound (the sfx_sound * to set)") }
        sound.pointee = try engine.systemSound(named: name).rawValue
    }
}

@_cdecl("sfx_load_file")
public func exportedLoadFile(_ engine: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ sound: UnsafeMutablePointer<UInt32>?) -> Int32 {
    cCall {
        let engine = try Handles.engine(engine).engine
        guard let path else { throw CAPIError.null("path") }
        guard let sound else { throw CAPIError.null("sound (the sfx_sound * to set)") }
        // The path's bytes as they are: a file name need not be UTF-8.
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(path).assumingMemoryBound(to: UInt8.self), count: strlen(path))
        sound.pointee = try engine.library.load(file: RawFilePath(bytes: Array(bytes))).rawValue
    }
}

@_cdecl("sfx_load_memory")
public func exportedLoadMemory(_ engine: OpaquePointer?, _ data: UnsafeRawPointer?, _ size: Int, _ sound: UnsafeMutablePointer<UInt32>?) -> Int32 {
    cCall {
        let engine = try Handles.engine(engine).engine
        guard let data else { throw CAPIError.null("data") }
        guard let sound else { throw CAPIError.null("sound (the sfx_sound * to set)") }
        guard size > 0 else { throw CAPIError(SFX_ERROR_SOUND, "the sound in memory is empty (size 0); pass the bytes of a sound file") }
        // The decoder reads files: the bytes go into an anonymous memory file (no name on any
        // file system), read through /proc/self/fd.
        let fd = sfx_internal_memory_file("sfx-sound")
        guard fd >= 0 else {
            throw CAPIError(SFX_ERROR_FAILED, "cannot make a memory file for the sound: \(String(cString: strerror(errno))); free some memory")
        }
        defer { close(fd) }
        var written = 0
        while written < size {
            let n = write(fd, data + written, size - written)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw CAPIError(SFX_ERROR_FAILED, "cannot copy the sound into memory: \(String(cString: strerror(errno))); free some memory")
            }
            written += n
        }
        let path = "/proc/self/fd/\(fd)"
        do {
            sound.pointee = try engine.library.load(file: RawFilePath(path)).rawValue
        } catch {
            let failure = CAPIError(error)
            throw CAPIError(failure.status, failure.message.replacing(path, with: "the sound in memory (\(size) bytes)"))
        }
    }
}

@_cdecl("sfx_load_pcm")
public func exportedLoadPCM(_ engine: OpaquePointer?, _ samples: UnsafePointer<Float>?, _ frames: Int, _ channels: UInt32,
                     _ sampleRate: UInt32, _ sound: UnsafeMutablePointer<UInt32>?) -> Int32 {
    cCall {
        let engine = try Handles.engine(engine).engine
        guard let samples else { throw CAPIError.null("samples") }
        guard let sound else { throw CAPIError.null("sound (the sfx_sound * to set)") }
        guard (1...2).contains(channels) else { throw CAPIError.range("channels", "\(channels)", "1…2") }
        let (count, overflow) = frames.multipliedReportingOverflow(by: Int(channels))
        guard frames > 0, !overflow else { throw CAPIError.range("frames", "\(frames)", "1 or more, fitting in memory") }
        let buffer = Array(UnsafeBufferPointer(start: samples, count: count))
        sound.pointee = try engine.load(buffer: buffer, sampleRate: Int(sampleRate), channels: Int(channels), name: "pcm").rawValue
    }
}

@_cdecl("sfx_dispose")
public func exportedDispose(_ engine: OpaquePointer?, _ sound: UInt32) -> Int32 {
    cCall { try Handles.engine(engine).engine.dispose(SoundID(rawValue: sound)) }
}
