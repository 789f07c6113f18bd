import FoundationEssentials
import Glibc
import Synchronization
import SFXCore
import SFXMedia

/// A bank file's events, loaded into an engine (`SoundEngine.loadBank`). While it watches its
/// files, an edit to the bank or to a sound it names is reloaded in the background: the next
/// trigger of an event plays the new version, voices already playing finish on the old sounds
/// (freed once nothing plays them), and a bank with an error keeps the last good one and
/// reports why (`EngineEvent.bankRejected`).
public final class SoundBank: Sendable {
    public let url: URL
    /// The file's name without its extension.
    public var name: String { url.deletingPathExtension().lastPathComponent }

    struct Loaded: Sendable {
        var events: [String: SoundEvent] = [:]
        /// Sounds by file and normalisation, with the file's identity when it was decoded.
        var sounds: [SoundKey: (id: SoundID, stamp: FileStamp)] = [:]
        /// The ducking rules the bank set on the engine.
        var ducking: [BankFile.DuckingRule] = []
        var reloads = 0
        /// Why the last watched reload was refused, until one succeeds.
        var rejection: BankError?
    }

    struct SoundKey: Hashable { var path: String; var normalize: LoudnessNormalization? }

    private let state = Mutex(Loaded())
    private let reloading = Mutex(())
    private weak let engineRef: SoundEngine?
    private let watcher = Mutex<BankWatcher?>(nil)

    init(url: URL, engine: SoundEngine) {
        self.url = url
        engineRef = engine
    }

    /// The event of this name now (after a reload, the reloaded one).
    public func event(named name: String) -> SoundEvent? { state.withLock { $0.events[name] } }

    /// The events' names, sorted.
    public var eventNames: [String] { state.withLock { $0.events.keys.sorted() } }

    /// The ducking rules the bank sets on its engine (its `"ducking"` list), in file order.
    public var ducking: [BankFile.DuckingRule] { state.withLock { $0.ducking } }

    /// How many times the bank was reloaded since it was loaded.
    public var reloads: Int { state.withLock { $0.reloads } }

    /// Why the last reload of an edit was refused (the bank kept the version before it), or nil
    /// when the last one (or the load) went well: what `EngineEvent.bankRejected` reported.
    public var lastRejection: BankError? { state.withLock { $0.rejection } }

    /// Stops watching the files (the events stay).
    public func stopWatching() {
        let old = watcher.withLock { w -> BankWatcher? in defer { w = nil }; return w }
        old?.stop()
    }

    deinit { watcher.withLock { $0 }?.stop() }

    /// Reads the bank and its sounds again and swaps them in; throws (and keeps the bank as it
    /// was) if the bank or a sound has a problem. Sounds whose files did not change are kept.
    public func reload() throws(BankErrors) {
        guard let engine = engineRef else { return }
        try reloading.withLock { _ throws(BankErrors) in
            let file = try BankFile(contentsOf: url)
            let known = state.withLock { $0.sounds }
            var sounds: [SoundKey: (id: SoundID, stamp: FileStamp)] = [:]
            var fresh: [SoundID] = []
            var events: [String: SoundEvent] = [:]
            do throws(BankErrors) {
                for definition in file.events {
                    var ids: [SoundID] = []
                    for (n, sound) in definition.sounds.enumerated() {
                        let key = SoundKey(path: sound.path, normalize: definition.normalize)
                        let stamp = FileStamp(sound)
                        if let have = sounds[key] ?? known[key], have.stamp == stamp, stamp != nil {
                            sounds[key] = have
                            ids.append(have.id)
                            continue
                        }
                        do {
                            let id = try engine.load(contentsOf: sound, normalize: definition.normalize)
                            fresh.append(id)
                            sounds[key] = (id, stamp ?? FileStamp.none)
                            ids.append(id)
                        } catch {
                            throw BankErrors([BankError(file: url.lastPathComponent, line: definition.soundLines[n],
                                                        reason: "event \"\(definition.name)\": sound \"\(sound.lastPathComponent)\": \(error)")])
                        }
                    }
                    do {
                        events[definition.name] = try SoundEvent(
                            name: definition.name, sounds: ids, choose: definition.choose, pitch: definition.pitch,
                            volume: definition.volume, cooldown: definition.cooldown, maxInstances: definition.maxInstances,
                            priority: definition.priority, group: definition.group,
                            source: definition.position.map { Source(position: $0) }, seed: definition.seed)
                    } catch {
                        throw BankErrors([BankError(file: url.lastPathComponent, line: definition.soundLines.first ?? 1,
                                                    reason: "event \"\(definition.name)\": \(error)")])
                    }
                }
            } catch {
                for id in fresh { try? engine.dispose(id) }
                throw error
            }
            let (oldEvents, oldSounds, oldDucking) = state.withLock { loaded -> ([SoundEvent], [SoundID], [BankFile.DuckingRule]) in
                let keep = Set(sounds.values.map(\.id))
                let gone = loaded.sounds.values.map(\.id).filter { !keep.contains($0) }
                let old = Array(loaded.events.values)
                let oldDucking = loaded.ducking
                loaded.events = events
                loaded.sounds = sounds
                loaded.ducking = file.ducking
                loaded.reloads += 1
                loaded.rejection = nil
                return (old, gone, oldDucking)
            }
            // The bank's ducking: a rule it no longer has is removed (0 dB), its rules are set
            // (checked by BankFile against the same limits, so they cannot throw).
            for rule in oldDucking where !file.ducking.contains(where: { $0.trigger == rule.trigger }) {
                try? engine.setDucking(rule.trigger, ducks: rule.target, by: 0)
            }
            for rule in file.ducking {
                try? engine.setDucking(rule.trigger, ducks: rule.target, by: rule.decibels, attack: rule.attack, release: rule.release)
            }
            // Old sounds go once no old event plays them (dispose would stop those voices).
            let waiting = Atomic<Int>(oldEvents.count + 1)
            let free: @Sendable () -> Void = { [weak engine] in
                guard waiting.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 else { return }
                for id in oldSounds { try? engine?.dispose(id) }
            }
            for event in oldEvents { event.retire(whenIdle: free) }
            free()
        }
    }

    /// Loads for the first time (not counted as a reload).
    func loadFirst() throws(BankErrors) {
        try reload()
        state.withLock { $0.reloads = 0 }
    }

    /// Starts watching the bank's directory and its sounds' directories.
    func watch() throws(BankError) {
        var directories = Set([url.deletingLastPathComponent().path])
        for key in state.withLock({ Array($0.sounds.keys) }) {
            directories.insert(URL(fileURLWithPath: key.path).deletingLastPathComponent().path)
        }
        let w = try BankWatcher(file: url.lastPathComponent, directories: Array(directories)) { [weak self] in self?.changed() }
        watcher.withLock { $0 = w }
    }

    /// A watched file changed: reload, and report how it went.
    private func changed() {
        guard let engine = engineRef else { return }
        do {
            try reload()
            engine.report(.bankReloaded(name))
        } catch {
            let first = error.errors.first ?? BankError(file: url.lastPathComponent, line: 0, reason: "unknown problem")
            state.withLock { $0.rejection = first }
            engine.report(.bankRejected(file: first.file, line: first.line, reason: first.reason))
        }
    }
}

/// A file's identity and version: device, inode, size and modification time (an editor's save
/// by rename changes the inode; an in-place write the time or size).
struct FileStamp: Hashable, Sendable {
    var device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int
    static let none = FileStamp(device: 0, inode: 0, size: -1, seconds: 0, nanoseconds: 0)

    init(device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int) {
        self.device = device; self.inode = inode; self.size = size; self.seconds = seconds; self.nanoseconds = nanoseconds
    }

    init?(_ url: URL) {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return nil }
        self.init(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                  seconds: info.st_mtim.tv_sec, nanoseconds: info.st_mtim.tv_nsec)
    }
}

extension SoundEngine {
    /// Loads a bank file (JSON; schema in docs/banks.md) and its sounds, and returns its events
    /// by name. With `watch` (the default) the bank follows edits to its file and sounds while
    /// the engine runs (see `SoundBank`). Throws every problem of the file, each naming its line.
    public func loadBank(_ url: URL, watch: Bool = true) throws(BankErrors) -> SoundBank {
        let bank = SoundBank(url: url, engine: self)
        try bank.loadFirst()
        if watch {
            do throws(BankError) { try bank.watch() } catch { throw BankErrors([error]) }
        }
        return bank
    }

    /// Triggers the event `name` of `bank` (see `play(_ event:...)`); an unknown name completes
    /// `.rejected(.unknownEvent)`.
    @discardableResult
    public func play(event name: String, in bank: SoundBank, at position: Vector3? = nil, volume: Float = 1,
                     completion: (@Sendable (PlayOutcome) -> Void)? = nil) -> Voice {
        guard let event = bank.event(named: name) else {
            let voice = reserveVoice()
            delivery.reject(completion, voice.handle, .unknownEvent(name))
            return voice
        }
        return play(event, at: position, volume: volume, completion: completion)
    }
}
