import CSFXAPI
import SFX

/// A failed C call: the status it returns and the line `sfx_last_error()` gives.
struct CAPIError: Error {
    let status: sfx_status
    let message: String

    init(_ status: sfx_status, _ message: String) {
        self.status = status
        self.message = message
    }

    static func null(_ argument: String) -> CAPIError {
        CAPIError(SFX_ERROR_NULL, "\(argument) is NULL; pass a valid pointer")
    }

    static let closed = CAPIError(SFX_ERROR_CLOSED, "the engine is closed (or the handle was never one sfx_open returned); open one with sfx_open")

    static func range(_ setting: String, _ value: String, _ allowed: String) -> CAPIError {
        CAPIError(SFX_ERROR_RANGE, SettingError(setting: setting, value: value, allowed: allowed).description)
    }

    /// The status for an error of the engine's layers, with its own line.
    init(_ error: any Error) {
        switch error {
        case let error as CAPIError: self = error
        case let error as SettingError: self.init(SFX_ERROR_RANGE, error.description)
        case let error as PatternError: self.init(SFX_ERROR_RANGE, String(describing: error))
        case let error as ALSAError: self.init(SFX_ERROR_DEVICE, String(describing: error))
        case let error as SoundError: self.init(SFX_ERROR_SOUND, error.description)
        case let error as MediaError: self.init(SFX_ERROR_SOUND, String(describing: error))
        case let error as HapticError: self.init(SFX_ERROR_HAPTICS, error.description)
        default: self.init(SFX_ERROR_FAILED, String(describing: error))
        }
    }
}

/// Runs one C call: SFX_OK, or the error's status with its line kept for `sfx_last_error()`.
func cCall(_ body: () throws -> Void) -> Int32 {
    do {
        try body()
        return SFX_OK.rawValue
    } catch {
        let failure = CAPIError(error)
        sfx_internal_set_last_error(failure.message)
        return failure.status.rawValue
    }
}

/// A C string argument as a Swift string, or SFX_ERROR_NULL naming it.
func string(_ pointer: UnsafePointer<CChar>?, _ argument: String) throws(CAPIError) -> String {
    guard let pointer else { throw .null(argument) }
    return String(cString: pointer)
}
