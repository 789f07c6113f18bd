import FoundationEssentials
import Glibc
import Synchronization
import SFX

/// The daemon's sound banks (`sfx serve --bank FILE`): their events play by name.
final class DaemonBanks: Sendable {
    private let banks = Mutex<[SoundBank]>([])

    func add(_ bank: SoundBank) { banks.withLock { $0.append(bank) } }

    /// The event of this name in the first bank that has one.
    func event(named name: String) -> SoundEvent? {
        banks.withLock { banks in banks.lazy.compactMap { $0.event(named: name) }.first }
    }
}

extension DaemonService {
    /// Loads a bank whose events clients then play with `event=NAME` (or `name=NAME`: an event
    /// wins over a sound of the same name), watched and reloaded on edits unless `watch` is off.
    public func loadBank(_ url: URL, watch: Bool = true) throws(BankErrors) -> SoundBank {
        let bank = try engine.loadBank(url, watch: watch)
        banks.add(bank)
        return bank
    }

    /// A play of a bank's event, if the request names one: `event=NAME`, or `name=NAME` that a
    /// bank has. Nil when it names none (a sound then).
    func playEvent(_ fields: Fields) throws -> (ReplyKind, [UInt8])? {
        guard fields["file"] != "1" else { return nil }
        let event: SoundEvent
        if let name = fields["event"] {
            guard let found = banks.event(named: name) else {
                throw RequestError("no bank has an event \"\(name)\": check its name, or load its bank with sfx serve --bank FILE")
            }
            event = found
        } else if let name = fields["name"], let found = banks.event(named: name) {
            event = found
        } else {
            return nil
        }
        let volume = try number(fields, "volume", in: SettingLimits.gain) ?? 1
        let position = try WorldFields.position(fields)
        let voice = engine.play(event, at: position, volume: Float(volume))
        playsServed.wrappingAdd(1, ordering: .relaxed)
        return (.id, Fields(["id": "\(voice.id.rawValue)"]).payload)
    }
}
