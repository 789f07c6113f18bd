// sfx_bank_load, sfx_event_play, sfx_bank_status, sfx_bank_close (see sfx.h).
import CSFXAPI
import FoundationEssentials
import Dispatch
import Glibc
import SFX
import Synchronization

/// A loaded bank behind its C handle, with the engine it plays on.
final class CBank: Sendable {
    let bank: SoundBank
    let owner: CEngine
    init(bank: SoundBank, owner: CEngine) {
        self.bank = bank
        self.owner = owner
    }
}

enum BankHandles {
    static let banks = HandleTable<CBank>()

    static func bank(_ handle: OpaquePointer?, remove: Bool = false) throws(CAPIError) -> CBank {
        guard let handle else { throw .null("bank") }
        guard let bank = banks.value(handle, remove: remove) else {
            throw CAPIError(SFX_ERROR_CLOSED, "the bank was closed (or the handle was never one sfx_bank_load returned); load it with sfx_bank_load")
        }
        return bank
    }
}

@_cdecl("sfx_bank_load")
public func exportedBankLoad(_ handle: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ watch: Int32,
                             _ bank: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    cCall {
        bank?.pointee = nil
        let owner = try Handles.engine(handle)
        guard let path else { throw CAPIError.null("path") }
        guard let bank else { throw CAPIError.null("bank") }
        let loaded: SoundBank
        do throws(BankErrors) {
            loaded = try owner.engine.loadBank(URL(filePath: String(cString: path)), watch: watch != 0)
        } catch {
            let more = error.errors.count > 1 ? " (and \(error.errors.count - 1) more: sfx bank check lists them)" : ""
            throw CAPIError(SFX_ERROR_SOUND, (error.errors.first.map { "\($0)" } ?? "\(error)") + more)
        }
        bank.pointee = BankHandles.banks.register(CBank(bank: loaded, owner: owner))
    }
}

@_cdecl("sfx_event_play")
public func exportedEventPlay(_ handle: OpaquePointer?, _ bankHandle: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                              _ volume: Float, _ completion: sfx_completion_fn?, _ userData: UnsafeMutableRawPointer?,
                              _ voice: UnsafeMutablePointer<UInt64>?) -> Int32 {
    cCall {
        voice?.pointee = 0
        let owner = try Handles.engine(handle)
        let bank = try BankHandles.bank(bankHandle)
        guard bank.owner === owner else {
            throw CAPIError(SFX_ERROR_FAILED, "the bank was loaded on another engine; load it with sfx_bank_load on this one")
        }
        guard let name else { throw CAPIError.null("name") }
        try checkGain("volume", volume)
        let eventName = String(cString: name)
        guard let event = bank.bank.event(named: eventName) else {
            throw CAPIError(SFX_ERROR_SOUND, "the bank has no event \"\(eventName)\"; sfx bank check lists its events")
        }
        let callback = completion.map { CCompletion(function: $0, userData: userData) }
        // As sfx_play: a refusal is returned here and never completed; the voice is recorded
        // before its completion can run (the completion waits for nothing).
        let number = Mutex<UInt64?>(nil)
        let recorded = DispatchSemaphore(value: 0)
        let (played, refusal) = owner.engine.start(event, volume: volume) { [weak owner] outcome in
            recorded.wait()
            recorded.signal()
            guard let id = number.withLock({ $0 }) else { return }
            owner?.remove(id)
            callback?.call(id, outcome)
        }
        if let refusal {
            recorded.signal()
            throw CAPIError(SFX_ERROR_REJECTED, "event \"\(eventName)\" did not play: \(refusal)")
        }
        owner.add(played)
        number.withLock { $0 = played.id.rawValue }
        recorded.signal()
        voice?.pointee = played.id.rawValue
    }
}

@_cdecl("sfx_bank_status")
public func exportedBankStatus(_ handle: OpaquePointer?, _ reloads: UnsafeMutablePointer<UInt32>?,
                               _ problem: UnsafeMutablePointer<CChar>?, _ size: Int) -> Int32 {
    cCall {
        let bank = try BankHandles.bank(handle).bank
        reloads?.pointee = UInt32(clamping: bank.reloads)
        if let problem { try copy(bank.lastRejection.map { "\($0)" } ?? "", to: problem, size: size, what: "the reload's problem") }
    }
}

@_cdecl("sfx_bank_close")
public func exportedBankClose(_ handle: OpaquePointer?) -> Int32 {
    cCall { try BankHandles.bank(handle, remove: true).bank.stopWatching() }
}
