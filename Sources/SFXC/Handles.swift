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

/// Objects behind C handles, by token: a number, never reused, that a handle is; a token
/// taken out (closed, stopped) or never handed out finds nothing, so a stale handle is an
/// error, never a read of freed memory. Engines (`Handles`) and recorders (`RecorderHandles`)
/// each have one.
final class HandleTable<Value: Sendable>: Sendable {
    private let table = Mutex<(next: UInt, values: [UInt: Value])>((1, [:]))

    func register(_ value: Value) -> OpaquePointer {
        table.withLock { table in
            let token = table.next
            table.next += 1
            table.values[token] = value
            return OpaquePointer(bitPattern: token)!
        }
    }

    /// The value behind `handle` (taken out of the table when `remove`), or nil.
    func value(_ handle: OpaquePointer, remove: Bool = false) -> Value? {
        let token = UInt(bitPattern: handle)
        return table.withLock { remove ? $0.values.removeValue(forKey: token) : $0.values[token] }
    }
}

enum Handles {
    private static let engines = HandleTable<CEngine>()

    static func register(_ engine: CEngine) -> OpaquePointer { engines.register(engine) }

    /// The open engine behind `handle`.
    static func engine(_ handle: OpaquePointer?) throws(CAPIError) -> CEngine {
        guard let handle else { throw .null("engine") }
        guard let engine = engines.value(handle) else { throw .closed }
        return engine
    }

    /// Takes the engine out of the table: later calls with `handle` fail.
    static func remove(_ handle: OpaquePointer?) throws(CAPIError) -> CEngine {
        guard let handle else { throw .null("engine") }
        guard let engine = engines.value(handle, remove: true) else { throw .closed }
        return engine
    }
}
