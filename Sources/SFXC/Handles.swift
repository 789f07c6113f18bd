import Synchronization
import CSFXAPI
import SFX

/// An engine behind a C handle, with the voices its plays returned that have not ended yet.
///
/// A C `sfx_engine *` is not a pointer to this: it is a number, never reused, that `Handles`
/// maps to it. So a handle passed after `sfx_close` (or one that never was a handle) finds no
/// engine and the call fails with SFX_ERROR_CLOSED instead of reading freed memory.
final class CEngine: Sendable {
    let engine: SoundEngine
    private let voices = Mutex<[UInt64: Voice]>([:])

    init(engine: SoundEngine) { self.engine = engine }

    func add(_ voice: Voice) { voices.withLock { $0[voice.id.rawValue] = voice } }
    func remove(_ voice: UInt64) { voices.withLock { _ = $0.removeValue(forKey: voice) } }
    /// The voice, or nil when it has ended (or was never one of this engine's).
    func voice(_ id: UInt64) -> Voice? { voices.withLock { $0[id] } }
}

enum Handles {
    private struct Table {
        var next: UInt = 1
        var engines: [UInt: CEngine] = [:]
    }

    private static let table = Mutex(Table())

    static func register(_ engine: CEngine) -> OpaquePointer {
        table.withLock { table in
            let token = table.next
            table.next += 1
            table.engines[token] = engine
            return OpaquePointer(bitPattern: token)!
        }
    }

    /// The open engine behind `handle`.
    static func engine(_ handle: OpaquePointer?) throws(CAPIError) -> CEngine {
        guard let handle else { throw .null("engine") }
        guard let engine = table.withLock({ $0.engines[UInt(bitPattern: handle)] }) else { throw .closed }
        return engine
    }

    /// Takes the engine out of the table: later calls with `handle` fail.
    static func remove(_ handle: OpaquePointer?) throws(CAPIError) -> CEngine {
        guard let handle else { throw .null("engine") }
        guard let engine = table.withLock({ $0.engines.removeValue(forKey: UInt(bitPattern: handle)) }) else { throw .closed }
        return engine
    }
}
