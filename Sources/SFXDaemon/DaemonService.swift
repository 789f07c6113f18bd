import CSFXSystem
import Foundation
import Glibc
import Synchronization
import SFX
import SFXHaptics
import SFXMedia

/// What the daemon does for each request, on its engine: system sounds and the configured custom
/// sounds preloaded, sounds that clients load kept by name, the vibrator owned by the engine (so
/// an alert from any client vibrates when muted).
///
/// A client's file arrives as a descriptor: the daemon reads it through that descriptor alone
/// (with the client's access, never its own) into an anonymous memory file, and decodes that.
public final class DaemonService: Sendable {
    public let engine: SoundEngine
    let configurationURL: URL?
    let hapticBackend: String
    let started = DaemonStatus.now()
    /// Custom sounds by name: the configured ones and those loaded by clients.
    private let named = Mutex<[String: SoundID]>([:])
    /// The configured ones and their files, to reload on SIGHUP.
    private let configured = Mutex<[String: String]>([:])
    private let systemCount = Atomic<Int>(0)
    /// The largest file a client may pass: 256 MB.
    public static let maximumFileBytes = 256 << 20

    public init(engine: SoundEngine, configurationURL: URL?, hapticBackend: String) {
        self.engine = engine
        self.configurationURL = configurationURL
        self.hapticBackend = hapticBackend
    }

    /// Loads every system sound of the theme, then the configured custom sounds. Returns the
    /// problems (a configured file that does not load), one line each.
    public func preload() -> [String] {
        var loaded = 0
        for sound in engine.library.systemSounds() where (try? engine.systemSound(named: sound.name)) != nil {
            loaded += 1
        }
        systemCount.store(loaded, ordering: .relaxed)
        return reload()
    }

    /// Reads serve.conf again: loads sounds that are new or whose file changed, disposes those
    /// no longer listed. Returns the problems, one line each.
    @discardableResult
    public func reload() -> [String] {
        guard let configurationURL else { return [] }
        let wanted: ServeConfiguration
        do {
            wanted = try ServeConfiguration.load(configurationURL)
        } catch {
            return [error.description]
        }
        var problems = wanted.warnings
        let before = configured.withLock { $0 }
        for (name, path) in wanted.sounds where before[name] != path {
            do {
                let id = try engine.library.load(file: RawFilePath(path))
                replace(name, with: id)
            } catch {
                problems.append("\(configurationURL.path): sound '\(name)': \(error)")
            }
        }
        for name in before.keys where wanted.sounds[name] == nil {
            if let old = named.withLock({ $0.removeValue(forKey: name) }) { try? engine.dispose(old) }
        }
        configured.withLock { $0 = wanted.sounds }
        return problems
    }

    /// Whether a request is answered at once on the serving thread (it never waits: a play of a
    /// sound already loaded, a stop); the others run on the daemon's worker.
    public func isQuick(_ kind: RequestKind, _ fields: Fields, hasFile: Bool) -> Bool {
        switch kind {
        case .play: return !hasFile
        case .stop: return true
        default: return false
        }
    }

    /// Performs a request; `file` is the descriptor the client passed, closed here.
    public func handle(_ kind: RequestKind, _ fields: Fields, file: Int32?, clients: Int = 0, socket: String? = nil) -> (ReplyKind, [UInt8]) {
        defer { if let file { close(file) } }
        do {
            switch kind {
            case .play: return try play(fields, file: file)
            case .alert: return try alert(fields, file: file)
            case .vibrate: return try vibrate(fields)
            case .stop:
                let fade = try number(fields, "fade", in: 0...60_000) ?? 30
                try engine.stopAll(fade: .milliseconds(Int64(fade)))
                return (.ok, [])
            case .mute: return try mute(fields)
            case .load: return try load(fields, file: file)
            case .status:
                let status = DaemonStatus(engine: engine, daemon: true, systemSoundsLoaded: systemCount.load(ordering: .relaxed),
                                          customSounds: named.withLock { Array($0.keys) }, hapticBackend: hapticBackend,
                                          started: started, socket: socket, clients: clients)
                let data = (try? JSONEncoder().encode(status)) ?? Data()
                return (.ok, Array(data))
            }
        } catch let error as RequestError {
            return (.error, Array(error.description.utf8))
        } catch {
            return (.error, Array("\(error)".utf8))
        }
    }

    // MARK: Requests

    private func play(_ fields: Fields, file: Int32?) throws -> (ReplyKind, [UInt8]) {
        let volume = try number(fields, "volume", in: 0...16) ?? 1
        let pan = try number(fields, "pan", in: -1...1) ?? 0
        let loops = Int(try number(fields, "loops", in: -1...1_000_000) ?? 0)
        let (sound, temporary) = try sound(fields, file: file)
        let library = engine
        let voice = engine.play(sound, volume: Float(volume), pan: Float(pan), loops: loops) { _ in
            // A file played once is forgotten when its play ends.
            if temporary { try? library.dispose(sound) }
        }
        return (.id, Fields(["id": "\(voice.id.rawValue)"]).payload)
    }

    private func alert(_ fields: Fields, file: Int32?) throws -> (ReplyKind, [UInt8]) {
        let volume = try number(fields, "volume", in: 0...16) ?? 1
        let (sound, temporary) = try sound(fields, file: file)
        let library = engine
        let result = engine.alert(sound, volume: Float(volume)) { _ in
            if temporary { try? library.dispose(sound) }
        }
        return (.ok, Fields(["played": "\(result.played)", "vibrated": "\(result.vibrated)",
                             "noticed": "\(result.wasNoticed)", "result": result.description]).payload)
    }

    private func vibrate(_ fields: Fields) throws -> (ReplyKind, [UInt8]) {
        let pattern: VibrationPattern
        if let effect = fields["effect"] {
            guard let named = VibrationPattern.named(effect) else {
                throw RequestError("unknown effect '\(effect)': expected \(VibrationPattern.namedEffects.map(\.name).joined(separator: ", "))")
            }
            pattern = named
        } else if let text = fields["pattern"] {
            let loopBack = Int(try number(fields, "repeat", in: -1...255) ?? -1)
            do {
                pattern = try VibrationPattern(parsing: text, amplitude: fields["amplitude"], repeatIndex: loopBack)
            } catch {
                throw RequestError(error.description)
            }
        } else {
            pattern = .default
        }
        do {
            try engine.vibrate(pattern)
        } catch {
            throw RequestError(error.description)
        }
        return (.ok, [])
    }

    private func mute(_ fields: Fields) throws -> (ReplyKind, [UInt8]) {
        let flag = engine.configuration.muteFlag
        switch fields["action"] ?? "status" {
        case "on": try flag.set(true)
        case "off": try flag.set(false)
        case "toggle": _ = try flag.toggle()
        case "status": break
        case let other: throw RequestError("unknown mute action '\(other)': expected on, off, toggle or status")
        }
        let state = engine.muteState()
        var reply = Fields(["flag": flag.isMuted ? "on" : "off", "muted": "\(state.isMuted)",
                            "state": state.description, "device": state.device,
                            "reasons": state.reasons.map(\.description).joined(separator: "\t")])
        reply["server"] = state.server?.serverName
        reply["mixer"] = state.master.flatMap { try? JSONEncoder().encode($0) }.map { String(decoding: $0, as: UTF8.self) }
        return (.ok, reply.payload)
    }

    private func load(_ fields: Fields, file: Int32?) throws -> (ReplyKind, [UInt8]) {
        guard let name = fields["name"], !name.isEmpty, !name.contains("/") else {
            throw RequestError("a load needs name=NAME (no /) to play it by; give the sound a name")
        }
        guard let file else { throw RequestError("a load needs the sound file passed as a descriptor (file=1 with SCM_RIGHTS); the daemon opens no client paths") }
        let id = try decode(file, label: fields["label"] ?? name)
        // replaced=1 tells the client that the name held another sound, now disposed.
        let replaced = replace(name, with: id)
        return (.id, Fields(replaced ? ["id": "\(id.rawValue)", "replaced": "1"] : ["id": "\(id.rawValue)"]).payload)
    }

    // MARK: Helpers

    /// The sound a play or alert names: a passed file (decoded, to forget after the play), a
    /// sound loaded under that name, or a system sound.
    private func sound(_ fields: Fields, file: Int32?) throws -> (SoundID, temporary: Bool) {
        if fields["file"] == "1" {
            guard let file else { throw RequestError("the request says file=1 but no descriptor came with it; pass the open file with SCM_RIGHTS") }
            return (try decode(file, label: fields["label"] ?? "the passed file"), true)
        }
        guard let name = fields["name"], !name.isEmpty else {
            throw RequestError("the request names no sound; give name=NAME or pass a file with file=1")
        }
        if let id = named.withLock({ $0[name] }) { return (id, false) }
        do {
            return (try engine.systemSound(named: name), false)
        } catch {
            throw RequestError("\(error)")
        }
    }

    /// Reads a client's descriptor (through it only) into a memory file and decodes that.
    private func decode(_ fd: Int32, label: String) throws -> SoundID {
        let memory = sfx_memfd("sfx-client-sound")
        guard memory >= 0 else { throw RequestError("\(label): the daemon cannot hold it in memory (\(String(cString: strerror(errno)))); try again") }
        defer { close(memory) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var total = 0
        var offset: off_t = 0
        while true {
            // pread from the start where the file allows it, read where it does not (a pipe).
            var got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
            if got < 0, errno == ESPIPE { got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } }
            if got < 0 {
                if errno == EINTR { continue }
                throw RequestError("\(label): cannot be read through the passed descriptor (\(String(cString: strerror(errno)))); pass a file opened for reading")
            }
            if got == 0 { break }
            total += got
            offset += off_t(got)
            guard total <= Self.maximumFileBytes else {
                throw RequestError("\(label): more than \(Self.maximumFileBytes >> 20) MB, too large for a sound; give a shorter file")
            }
            var written = 0
            while written < got {
                let n = buffer.withUnsafeBytes { write(memory, $0.baseAddress! + written, got - written) }
                guard n > 0 else { throw RequestError("\(label): the daemon cannot hold it in memory (\(String(cString: strerror(errno)))); try again") }
                written += n
            }
        }
        guard total > 0 else { throw RequestError("\(label): is empty; pass a sound file") }
        do {
            return try engine.library.load(file: RawFilePath("/proc/self/fd/\(memory)"))
        } catch {
            throw RequestError("\(error)".replacing("/proc/self/fd/\(memory)", with: label))
        }
    }

    /// Whether `name` held another sound, which is disposed.
    @discardableResult
    private func replace(_ name: String, with id: SoundID) -> Bool {
        guard let old = named.withLock({ $0.updateValue(id, forKey: name) }), old != id else { return false }
        try? engine.dispose(old)
        return true
    }

    private func number(_ fields: Fields, _ key: String, in range: ClosedRange<Double>) throws -> Double? {
        guard let text = fields[key] else { return nil }
        guard let value = Double(text), range.contains(value) else {
            throw RequestError("\(key)=\(text) is not a number from \(range.lowerBound) to \(range.upperBound); give one in range")
        }
        return value
    }
}

/// A request the daemon cannot do: its error reply.
struct RequestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
