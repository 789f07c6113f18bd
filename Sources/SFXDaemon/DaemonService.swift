import CSFXSystem
import FoundationEssentials
import SFXSystem
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
    public let limits: DaemonLimits
    /// Plays (and alerts) and loads done since the start.
    public let playsServed = Atomic<Int>(0)
    public let loadsServed = Atomic<Int>(0)

    /// What clients hold: the sounds they loaded by name (with their owner and size), and the
    /// files passed to play that are still playing.
    private struct Holdings {
        var loaded: [String: (uid: uid_t, bytes: Int)] = [:]
        /// Bytes of files playing once, by owner.
        var playing: [uid_t: Int] = [:]

        func count(of uid: uid_t?) -> Int { loaded.values.count { uid == nil || $0.uid == uid } }
        func bytes(of uid: uid_t?) -> Int {
            loaded.values.reduce(0) { $0 + (uid == nil || $1.uid == uid ? $1.bytes : 0) }
                + playing.reduce(0) { $0 + (uid == nil || $1.key == uid ? $1.value : 0) }
        }
    }
    private let holdings = Mutex(Holdings())
    /// Banks loaded with `loadBank` (`sfx serve --bank`).
    let banks = DaemonBanks()

    /// Who hears of every alert the engine makes (the server, for its `notices` subscribers).
    private let noticeHandler = Mutex<(@Sendable (AlertNotice) -> Void)?>(nil)

    public init(engine: SoundEngine, configurationURL: URL?, hapticBackend: String, limits: DaemonLimits = DaemonLimits()) {
        self.engine = engine
        self.configurationURL = configurationURL
        self.hapticBackend = hapticBackend
        self.limits = limits
        // Every alert of the engine, whichever client asked (and any other), on its delivery
        // thread; a handler set before is still called (setting the engine's `onAlert` later
        // would replace this hook, and the subscribers would hear nothing).
        let earlier = engine.onAlert
        engine.onAlert = { [weak self] notice in
            earlier?(notice)
            self?.noticeHandler.withLock { $0 }?(notice)
        }
    }

    /// Calls `handler` for every alert notice of the engine, on the engine's delivery thread (nil:
    /// no longer). `DaemonServer` sets it to push the notices to its subscribers.
    public func onNotice(_ handler: (@Sendable (AlertNotice) -> Void)?) {
        noticeHandler.withLock { $0 = handler }
    }

    /// The fields that tell an alert's notice, in the alert's reply and in each `notice` pushed to
    /// a subscriber: `caption=` (the alert's words), `sound=` (its name), `reached=` (heard,
    /// felt, flashed comma-joined, or none), `flashed=`, `quiet=` (held to its caption by the
    /// do-not-disturb window) and `notice=` (all of it in one line).
    public static func fields(of notice: AlertNotice) -> [String: String] {
        ["caption": notice.caption, "sound": notice.sound, "reached": notice.reached,
         "flashed": "\(notice.flashed)", "quiet": "\(notice.quiet)", "notice": notice.description]
    }

    /// Loads the system sounds that announce events (those the bundled theme gives a loudness
    /// class: input feedback, notifications, dialogs, alarms), then the configured custom
    /// sounds. The rest of the theme chain (freedesktop's speaker-test voices
    /// `audio-channel-*`, `audio-test-signal`, the call-progress tones `phone-outgoing-*`: 17 s
    /// of audio, 6.5 MB as the mixer holds it) is decoded at its first play and kept. Returns
    /// the problems (a configured file that does not load), one line each.
    public func preload() -> [String] {
        var loaded = 0
        for sound in engine.library.systemSounds() where engine.library.loudnessClass(ofSystemSound: sound.name) != nil
            && (try? engine.systemSound(named: sound.name)) != nil {
            loaded += 1
        }
        systemCount.store(loaded, ordering: .relaxed)
        let problems = reload()
        // What the decoders and resamplers freed would stay resident in the heap for as long as
        // the daemon runs: give it back.
        sfx_malloc_trim()
        return problems
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
        // A configured name takes over a client's sound of that name: no longer the client's.
        holdings.withLock { holdings in
            for name in wanted.sounds.keys { holdings.loaded[name] = nil }
        }
        configured.withLock { $0 = wanted.sounds }
        return problems
    }

    /// Whether a request is answered at once on the serving thread (it never waits: a play of a
    /// sound already loaded, a stop); the others run on the daemon's worker.
    public func isQuick(_ kind: RequestKind, _ fields: Fields, hasFile: Bool) -> Bool {
        kind.isQuick(hasFile: hasFile)
    }

    /// Performs a request; `file` is the descriptor the client passed, closed here.
    public func handle(_ kind: RequestKind, _ fields: Fields, file: Int32?, context: RequestContext = RequestContext()) -> (ReplyKind, [UInt8]) {
        defer { if let file { close(file) } }
        do {
            switch kind {
            case .play: return try play(fields, file: file, uid: context.uid)
            case .alert: return try alert(fields, file: file, uid: context.uid)
            case .vibrate: return try vibrate(fields)
            case .stop:
                let fade = try number(fields, "fade", in: SettingLimits.fadeMilliseconds) ?? 30
                try engine.stopAll(fade: .milliseconds(Int64(fade)))
                return (.ok, [])
            case .mute: return try mute(fields)
            case .filter: return try groupFilter(fields)
            case .effect:
                let (bus, effect, group) = try WorldFields.effect(fields)
                do {
                    guard try engine.setEffect(effect, bus: bus, returnsTo: group) else {
                        throw RequestError("busy: the engine's command queue is full; try again")
                    }
                } catch let error as SettingError {
                    throw RequestError(error.description)
                }
                return (.ok, [])
            case .load: return try load(fields, file: file, uid: context.uid)
            case .notices:
                throw RequestError("a notices request is answered by the daemon's serving loop (DaemonServer), which keeps the connection; send it to sfx serve")
            case .status:
                var status = DaemonStatus(engine: engine, daemon: true, systemSoundsLoaded: systemCount.load(ordering: .relaxed),
                                          customSounds: named.withLock { Array($0.keys) }, hapticBackend: hapticBackend,
                                          started: started, socket: context.socket, clients: context.clients)
                status.playsServed = playsServed.load(ordering: .relaxed)
                status.loadsServed = loadsServed.load(ordering: .relaxed)
                status.clientsServed = context.clientsServed
                status.customSoundBytes = holdings.withLock { $0.bytes(of: nil) }
                status.subscribers = context.subscribers
                status.noticesSent = context.noticesSent
                status.noticesDropped = context.noticesDropped
                let data = (try? JSONEncoder().encode(status)) ?? Data()
                return (.ok, Array(data))
            }
        } catch let error as RequestError {
            return (.error, Array(error.description.utf8))
        } catch let error as FieldError {
            return (.error, Array(error.description.utf8))
        } catch {
            return (.error, Array("\(error)".utf8))
        }
    }

    // MARK: Requests

    private func play(_ fields: Fields, file: Int32?, uid: uid_t) throws -> (ReplyKind, [UInt8]) {
        if let played = try playEvent(fields) { return played }
        let volume = try number(fields, "volume", in: SettingLimits.gain) ?? 1
        let pan = try number(fields, "pan", in: SettingLimits.pan) ?? 0
        let loops = Int(try number(fields, "loops", in: SettingLimits.textLoops) ?? 0)
        let position = try WorldFields.position(fields)
        let filter = try WorldFields.filter(fields) ?? nil
        let send = try WorldFields.send(fields)
        let (sound, temporary) = try sound(fields, file: file, uid: uid)
        // A file played once is forgotten when its play ends.
        let ended: @Sendable (PlayOutcome) -> Void = { [self] _ in if let temporary { forget(sound, temporary, of: uid) } }
        var sends = SIMD4<Float>.zero
        if let send { sends[send.bus] = send.level }
        let voice = if let position {
            engine.play(sound, from: Source(position: position), volume: Float(volume), loops: loops, sends: sends, completion: ended)
        } else {
            engine.play(sound, volume: Float(volume), pan: Float(pan), loops: loops, completion: ended)
        }
        // In range (checked above), so they cannot throw; they reach the mixer right behind the play.
        if let filter { try? voice.setFilter(filter) }
        if let send, position == nil { try? voice.setSend(send.level, bus: send.bus) }
        playsServed.wrappingAdd(1, ordering: .relaxed)
        return (.id, Fields(["id": "\(voice.id.rawValue)"]).payload)
    }

    /// A group's filter: `group=` (effects unless given) and `filter=KIND` with its values, or
    /// `filter=off`.
    private func groupFilter(_ fields: Fields) throws -> (ReplyKind, [UInt8]) {
        let group = try WorldFields.group(fields) ?? .effects
        guard let filter = try WorldFields.filter(fields) else {
            throw RequestError("a filter request needs filter=\(WorldFields.filterKinds.map(\.name).joined(separator: "|")) (with cutoff=HZ) or filter=off")
        }
        do {
            try engine.setFilter(filter, for: group)
        } catch {
            throw RequestError(error.description)
        }
        return (.ok, [])
    }

    private func alert(_ fields: Fields, file: Int32?, uid: uid_t) throws -> (ReplyKind, [UInt8]) {
        let volume = try number(fields, "volume", in: SettingLimits.gain) ?? 1
        let (sound, temporary) = try sound(fields, file: file, uid: uid)
        let result = engine.alert(sound, volume: Float(volume)) { [self] _ in
            if let temporary { forget(sound, temporary, of: uid) }
        }
        playsServed.wrappingAdd(1, ordering: .relaxed)
        var reply = ["played": "\(result.played)", "vibrated": "\(result.vibrated)",
                     "noticed": "\(result.wasNoticed)", "result": result.description]
        // The caption channel for the client (and its person): what the alert says and what reached them.
        if let notice = result.notice { reply.merge(Self.fields(of: notice)) { $1 } }
        return (.ok, Fields(reply).payload)
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

    private func load(_ fields: Fields, file: Int32?, uid: uid_t) throws -> (ReplyKind, [UInt8]) {
        guard let name = fields["name"], !name.isEmpty, !name.contains("/") else {
            throw RequestError("a load needs name=NAME (no /) to play it by; give the sound a name")
        }
        guard let file else { throw RequestError("a load needs the sound file passed as a descriptor (file=1 with SCM_RIGHTS); the daemon opens no client paths") }
        let label = fields["label"] ?? name
        if configured.withLock({ $0[name] != nil }) {
            throw RequestError("'\(name)' is a sound of serve.conf; load yours under another name")
        }
        // Count first (a sound of the same name is replaced, so it makes room).
        try holdings.withLock { holdings throws(RequestError) in
            let replacing = holdings.loaded[name]
            let mine = holdings.count(of: uid) - (replacing?.uid == uid ? 1 : 0)
            let all = holdings.count(of: nil) - (replacing == nil ? 0 : 1)
            if mine >= limits.soundsPerClient {
                throw RequestError("\(label): uid \(uid) has loaded \(mine) sounds, the daemon's limit per client; load it under a name already loaded, or raise sfx serve --max-sounds-per-client")
            }
            if all >= limits.sounds {
                throw RequestError("\(label): the daemon holds \(all) loaded sounds, its limit; load it under a name already loaded, or raise sfx serve --max-sounds")
            }
        }
        let id = try decode(file, label: label)
        let bytes = (engine.library.cue(for: id)?.samples.count ?? 0) * MemoryLayout<Float>.size
        do {
            try holdings.withLock { holdings throws(RequestError) in
                try admit(bytes, label: label, uid: uid, freeing: holdings.loaded[name], in: holdings)
                holdings.loaded[name] = (uid, bytes)
            }
        } catch {
            try? engine.dispose(id)
            throw error
        }
        // replaced=1 tells the client that the name held another sound, now disposed.
        let replaced = replace(name, with: id)
        loadsServed.wrappingAdd(1, ordering: .relaxed)
        return (.id, Fields(replaced ? ["id": "\(id.rawValue)", "replaced": "1"] : ["id": "\(id.rawValue)"]).payload)
    }

    /// Throws, naming the limit, when `bytes` more would take `uid` or everyone past the
    /// daemon's memory for clients' sounds (`freeing`: a sound the new one replaces).
    private func admit(_ bytes: Int, label: String, uid: uid_t, freeing: (uid: uid_t, bytes: Int)?, in holdings: Holdings) throws(RequestError) {
        func mb(_ n: Int) -> String { String(cFormat: "%.1f MB", Double(n) / 1_048_576) }
        let mine = holdings.bytes(of: uid) - (freeing?.uid == uid ? freeing!.bytes : 0)
        let all = holdings.bytes(of: nil) - (freeing?.bytes ?? 0)
        if mine + bytes > limits.soundBytesPerClient {
            throw RequestError("\(label): its \(mb(bytes)) decoded would take uid \(uid)'s sounds to \(mb(mine + bytes)), over the daemon's \(mb(limits.soundBytesPerClient)) per client; dispose of some (load another under the same name), give a shorter sound, or raise sfx serve --max-sound-memory-per-client")
        }
        if all + bytes > limits.soundBytes {
            throw RequestError("\(label): its \(mb(bytes)) decoded would take the daemon's sounds to \(mb(all + bytes)), over its \(mb(limits.soundBytes)) in all; give a shorter sound, or raise sfx serve --max-sound-memory")
        }
    }

    /// A file played once has ended: dispose of it and give its memory back to its owner.
    private func forget(_ sound: SoundID, _ bytes: Int, of uid: uid_t) {
        try? engine.dispose(sound)
        holdings.withLock { holdings in
            let left = (holdings.playing[uid] ?? 0) - bytes
            holdings.playing[uid] = left > 0 ? left : nil
        }
    }

    // MARK: Helpers

    /// The sound a play or alert names: a passed file (decoded, to forget after the play), a
    /// sound loaded under that name, or a system sound.
    /// `temporary` is the decoded bytes of a passed file, counted against its owner until it ends.
    private func sound(_ fields: Fields, file: Int32?, uid: uid_t) throws -> (SoundID, temporary: Int?) {
        if fields["file"] == "1" {
            guard let file else { throw RequestError("the request says file=1 but no descriptor came with it; pass the open file with SCM_RIGHTS") }
            let label = fields["label"] ?? "the passed file"
            let id = try decode(file, label: label)
            let bytes = (engine.library.cue(for: id)?.samples.count ?? 0) * MemoryLayout<Float>.size
            do {
                try holdings.withLock { holdings throws(RequestError) in
                    try admit(bytes, label: label, uid: uid, freeing: nil, in: holdings)
                    holdings.playing[uid, default: 0] += bytes
                }
            } catch {
                try? engine.dispose(id)
                throw error
            }
            return (id, bytes)
        }
        guard let name = fields["name"], !name.isEmpty else {
            throw RequestError("the request names no sound; give name=NAME or pass a file with file=1")
        }
        if let id = named.withLock({ $0[name] }) { return (id, nil) }
        do {
            return (try engine.systemSound(named: name), nil)
        } catch {
            throw RequestError("\(error)")
        }
    }

    /// Reads a client's descriptor (through it only) into a memory file and decodes that.
    ///
    /// Only a regular file is read (fstat, as the command does): a pipe, a socket, an eventfd,
    /// a FIFO or a device may never end, and would hold the loader for ever. It is read up to
    /// the size fstat gave (a file that grows meanwhile is cut there, one truncated ends
    /// early), at most `maximumFileBytes`, and for at most `limits.readTimeoutSeconds`.
    private func decode(_ fd: Int32, label: String) throws -> SoundID {
        let flags = fcntl(fd, F_GETFL)
        let pathOnly: Int32 = 0o10000000   // O_PATH, which Swift's Glibc does not carry
        if flags < 0 || flags & O_ACCMODE == O_WRONLY || flags & pathOnly != 0 {
            let why = flags < 0 ? String(cString: strerror(errno)) : flags & pathOnly != 0 ? "an O_PATH descriptor" : "opened for writing only"
            throw RequestError("\(label): cannot be read through the passed descriptor (\(why)); pass a file opened for reading")
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw RequestError("\(label): cannot be examined through the passed descriptor (\(String(cString: strerror(errno)))); pass a file opened for reading")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw RequestError("\(label): the passed descriptor is \(Self.kind(of: info.st_mode)), not a regular file; pass an open sound file (save a stream to a file first, or play it with --no-daemon)")
        }
        guard Int(info.st_size) <= Self.maximumFileBytes else {
            throw RequestError("\(label): \(Int(info.st_size) >> 20) MB, more than the daemon's \(Self.maximumFileBytes >> 20) MB for a sound; give a shorter file")
        }
        let size = Int(info.st_size)
        guard size > 0 else { throw RequestError("\(label): is empty; pass a sound file") }
        let memory = sfx_memfd("sfx-client-sound")
        guard memory >= 0 else { throw RequestError("\(label): the daemon cannot hold it in memory (\(String(cString: strerror(errno)))); try again") }
        defer { close(memory) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var total = 0
        let deadline = DaemonStatus.now() + limits.readTimeoutSeconds
        while total < size {
            let got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, min($0.count, size - total), off_t(total)) }
            if got < 0 {
                if errno == EINTR { continue }
                throw RequestError("\(label): cannot be read through the passed descriptor (\(String(cString: strerror(errno)))); pass a file opened for reading")
            }
            if got == 0 { break }   // truncated meanwhile: what was there
            total += got
            var written = 0
            while written < got {
                let n = buffer.withUnsafeBytes { write(memory, $0.baseAddress! + written, got - written) }
                guard n > 0 else { throw RequestError("\(label): the daemon cannot hold it in memory (\(String(cString: strerror(errno)))); try again") }
                written += n
            }
            if DaemonStatus.now() > deadline {
                throw RequestError("\(label): reading it took more than \(Int(limits.readTimeoutSeconds)) s; pass a file on a local disk")
            }
        }
        guard total > 0 else { throw RequestError("\(label): is empty; pass a sound file") }
        do {
            return try engine.library.load(file: RawFilePath("/proc/self/fd/\(memory)"))
        } catch {
            throw RequestError("\(error)".replacing("/proc/self/fd/\(memory)", with: label))
        }
    }

    static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: return "a pipe or FIFO"
        case S_IFSOCK: return "a socket"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFDIR: return "a directory"
        case 0: return "an anonymous inode (an eventfd, a timerfd, an epoll…)"
        default: return "not a file (mode \(String(mode & S_IFMT, radix: 8)))"
        }
    }

    /// Whether `name` held another sound, which is disposed.
    @discardableResult
    private func replace(_ name: String, with id: SoundID) -> Bool {
        guard let old = named.withLock({ $0.updateValue(id, forKey: name) }), old != id else { return false }
        try? engine.dispose(old)
        return true
    }

    func number(_ fields: Fields, _ key: String, in range: ClosedRange<Float>) throws -> Double? {
        try number(fields, key, in: Double(range.lowerBound)...Double(range.upperBound))
    }

    private func number(_ fields: Fields, _ key: String, in range: ClosedRange<Int>) throws -> Double? {
        try number(fields, key, in: Double(range.lowerBound)...Double(range.upperBound))
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
