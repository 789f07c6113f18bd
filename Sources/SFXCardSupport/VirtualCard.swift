import CSFXSystem
import FoundationEssentials
import Glibc
import SFXSystem
import Synchronization

/// A virtual sound card for machines without one: the `libsfxcard.so` ALSA plugin, set up in a
/// directory of its own.
///
/// The card is real to every ALSA client: playback is consumed in real time (frame n reaches the
/// "DAC" at start + n / rate on CLOCK_MONOTONIC), recorded to a float WAV after the Master
/// control, and timed in an event log; capture plays a sound file in real time; the mixer has a
/// Master switch and volume; faults (xruns, unplugging) come on request.
///
///     let card = try VirtualCard()                 // a fresh private directory (mkdtemp, 0700)
///     card.makeCurrent()                           // this process's ALSA now sees the card
///     // … open "sfxcard" with alsa-lib (or "default"), play …
///     let played = try WAVAudio(contentsOf: card.recordingURL)
///     let onsets = try card.events().filter { if case .onset = $0.kind { true } else { false } }
///
///     // another process:
///     let aplay = Process()
///     aplay.executableURL = URL(filePath: "/usr/bin/aplay")
///     aplay.arguments = ["-D", card.pcmName, "coin.wav"]
///     aplay.environment = card.environment
///
/// ## Names
/// `pcmName` ("sfxcard") is the card behind ALSA's `plug` converter, so any client format works
/// (`aplay`, `arecord` without options); when the client's format is one the card has, `plug`
/// passes the stream straight through. `hardwarePCMName` ("sfxcard_hw") is the card alone, with
/// exactly the hardware's constraints: FLOAT_LE, S32_LE or S16_LE; 1–2 channels; 44100 or 48000
/// Hz; RW or MMAP interleaved access; periods of 16 frames or more, 2–64 per buffer. `ctlName`
/// ("sfxcard") is the mixer. The file also makes the card ALSA's `default`.
///
/// ## alsa-lib's configuration in a test process
/// alsa-lib reads ALSA_CONFIG_PATH and caches the configuration; at every open it checks whether
/// the path or the files changed and rereads them when they did. So a process selects a card
/// by setting ALSA_CONFIG_PATH before opening it — `makeCurrent()` does this — and several
/// cards can be used one after another in one process: open each right after its
/// `makeCurrent()` (an open stream keeps working when another card is made current). Child
/// processes get the card through `environment`.
///
/// ## Files in `directory`
/// `asound.conf` (the configuration), `state` (shared state: fault injection and Master),
/// `events.log` (see `CardEvent`), `playback.wav` (the first playback configuration's
/// recording; each later one goes to the next free `playback-2.wav`, `playback-3.wav`… — one
/// file per hw_params setup, since a WAV holds one rate and channel count; a card made with
/// `continuesRecording` goes on with the last file instead when the format is the same, as a
/// daemon's device opened again after each idle close would otherwise leave a file a sound). The directory is
/// private (see `CardDirectory`); each file is created 0600 and none is opened through a
/// symbolic link.
public struct VirtualCard: Sendable {
    /// Where the card's files are reached (for a card made with `init(opened:…)`, the
    /// descriptor's `/proc/self/fd/N/.`).
    public let directory: URL
    /// The directory's name for people (`directory` unless the card was made from an opened one).
    public let shownDirectory: URL
    /// The directory the card was made in, held open (`init(opened:…)`).
    private let opened: OwnedDirectory?
    /// For a card made from an opened directory: this process's configuration, in memory, which
    /// reaches the directory through its descriptor (`asound.conf` names it for other programs).
    private let ownConfiguration: InMemoryFile?
    public let pluginURL: URL
    public let captureSource: URL?
    public let loopCapture: Bool

    private let state: CardState

    /// Sets the card up in `directory` (created 0700 if needed; a new mkdtemp directory in $TMPDIR
    /// when nil): writes the state file (connected, Master on at full volume) unless one is there,
    /// and the configuration. The directory must be private — see `CardDirectory` — or this
    /// throws, naming it and the fix; every file the card makes in it is 0600.
    ///
    /// - Parameters:
    ///   - captureSource: a sound file (any format libsndfile reads) played into capture
    ///     streams, converted to their format; silence when nil.
    ///   - loopCapture: repeat the capture source instead of following it with silence.
    ///   - onsetThreshold: the absolute sample value above which the DAC hears sound.
    ///   - onsetSilenceMilliseconds: silence that must precede an onset.
    ///   - record: write what reaches the DAC to playback.wav; false spares the disk writes (for
    ///     CPU measurements) and keeps the event log.
    ///   - recordingFormat: `.float32` (sample-exact, for tests) or `.pcm32` (what sox and other
    ///     tools read without a warning, for people who open the recording).
    ///   - pointer: how the playback hardware pointer moves (per period by default).
    ///   - rewind: whether a playback rewind takes effect (by default) or is accepted and ignored.
    ///   - plugin: the plugin library; `locatePlugin()` when nil.
    public init(directory: URL? = nil, captureSource: URL? = nil, loopCapture: Bool = false,
                onsetThreshold: Double = 0.001, onsetSilenceMilliseconds: Int = 10, record: Bool = true,
                recordingFormat: RecordingFormat = .float32, pointer: PointerGranularity,
                rewind: RewindBehavior = .honest, plugin: URL? = nil) throws {
        try self.init(directory: directory, opened: nil, captureSource: captureSource, loopCapture: loopCapture,
                      onsetThreshold: onsetThreshold, onsetSilenceMilliseconds: onsetSilenceMilliseconds, record: record,
                      recordingFormat: recordingFormat, pointer: pointer, rewind: rewind, plugin: plugin)
    }

    /// A card in a directory opened and checked by descriptor (`CardDirectory.openForUser`):
    /// the card, its configuration and ALSA reach the directory through
    /// `opened.descriptorPath`, so no rename above it can redirect them; `shownDirectory` is
    /// its name for people. The card keeps `opened` open. `continuesRecording`: each new stream
    /// of the same format appends to the last recording rather than starting the next file.
    public init(opened: OwnedDirectory, captureSource: URL? = nil, recordingFormat: RecordingFormat = .float32,
                continuesRecording: Bool = false, plugin: URL? = nil) throws {
        try self.init(directory: URL(filePath: opened.descriptorPath, directoryHint: .isDirectory), opened: opened,
                      captureSource: captureSource, loopCapture: false, onsetThreshold: 0.001, onsetSilenceMilliseconds: 10,
                      record: true, recordingFormat: recordingFormat, continuesRecording: continuesRecording,
                      pointer: .period, rewind: .honest, plugin: plugin)
    }

    private init(directory: URL?, opened: OwnedDirectory?, captureSource: URL?, loopCapture: Bool,
                 onsetThreshold: Double, onsetSilenceMilliseconds: Int, record: Bool,
                 recordingFormat: RecordingFormat, continuesRecording: Bool = false, pointer: PointerGranularity,
                 rewind: RewindBehavior, plugin: URL?) throws {
        if let captureSource, !FileManager.default.isReadableFile(atPath: captureSource.path) {
            throw CardError("capture source \(captureSource.path) cannot be read; give an existing sound file")
        }
        guard (0...1).contains(onsetThreshold), onsetSilenceMilliseconds >= 0 else {
            throw CardError("onset threshold \(onsetThreshold) or silence \(onsetSilenceMilliseconds) ms is out of range; use 0…1 and 0 ms or more")
        }
        let pluginURL = try plugin ?? VirtualCard.locatePlugin()
        let made = directory == nil
        let directory = try directory.map { try CardDirectory.prepare($0); return $0 } ?? CardDirectory.makeTemporary()
        let state: CardState
        do {
            state = try CardState(url: directory.appending(path: "state"))
            func text(_ place: URL) -> String {
                VirtualCard.configuration(plugin: pluginURL, directory: place, captureSource: captureSource,
                                          loop: loopCapture, onsetThreshold: onsetThreshold,
                                          onsetSilenceMilliseconds: onsetSilenceMilliseconds, record: record,
                                          recordingFormat: recordingFormat, continuesRecording: continuesRecording,
                                          pointer: pointer, rewind: rewind)
            }
            // asound.conf names the directory as people and other programs (amixer -D sfxcard,
            // aplay) reach it; this process reaches an opened one through its descriptor alone,
            // by a configuration of its own in memory, so no rename above it redirects ALSA.
            try PrivateFile.replace(directory.appending(path: "asound.conf"), with: Data(text(opened?.url ?? directory).utf8))
            ownConfiguration = try opened.map { _ in try InMemoryFile(name: "sfxcard-asound.conf", contents: text(directory)) }
        } catch {
            if made { try? FileManager.default.removeItem(at: directory) }
            throw error
        }
        self.directory = directory
        self.opened = opened
        shownDirectory = opened?.url ?? directory
        self.pluginURL = pluginURL
        self.captureSource = captureSource
        self.loopCapture = loopCapture
        self.state = state
    }

    /// A card whose pointer moves per period and whose rewinds take effect (see the full initialiser).
    public init(directory: URL? = nil, captureSource: URL? = nil, loopCapture: Bool = false,
                onsetThreshold: Double = 0.001, onsetSilenceMilliseconds: Int = 10, record: Bool = true,
                recordingFormat: RecordingFormat = .float32, plugin: URL? = nil) throws {
        try self.init(directory: directory, captureSource: captureSource, loopCapture: loopCapture,
                      onsetThreshold: onsetThreshold, onsetSilenceMilliseconds: onsetSilenceMilliseconds,
                      record: record, recordingFormat: recordingFormat, pointer: .period, rewind: .honest, plugin: plugin)
    }

    /// How playback.wav holds its samples.
    public enum RecordingFormat: String, Sendable {
        /// 32-bit float: every sample exactly as it reached the DAC (what tests compare).
        case float32 = "float"
        /// 32-bit integer PCM: within 2^-31 of full scale, and read by sox without a warning.
        case pcm32 = "s32"
    }

    /// How the playback hardware pointer that alsa-lib reads moves. The DAC itself plays frame by
    /// frame either way (what is recorded is what it played by the clock): a client that trusts a
    /// per-period pointer and rewinds to it rewrites frames already played, and the card logs
    /// them as `.lost`.
    public enum PointerGranularity: String, Sendable {
        /// A period at a time, as period interrupts move it.
        case period
        /// Frame by frame, as an HDA card's DMA position register gives it.
        case frame
    }

    /// What a playback rewind (snd_pcm_rewind) does. Either way the card logs it (`.rewind`).
    public enum RewindBehavior: String, Sendable {
        /// It takes effect: frames the DAC has not reached are replaced by what is written again.
        case honest
        /// It is answered as done and ignored, as by ALSA's `pulse` plugin: everything written
        /// plays, in order, and snd_pcm_delay does not drop.
        case ignore
    }

    // MARK: Names and files

    /// The card behind ALSA's `plug` converter: what applications open.
    public var pcmName: String { "sfxcard" }
    /// The card alone, with the hardware's exact constraints.
    public var hardwarePCMName: String { "sfxcard_hw" }
    /// The card's mixer (Master Playback Switch and Volume).
    public var ctlName: String { "sfxcard" }

    /// The ALSA configuration for this process: put it in ALSA_CONFIG_PATH (`makeCurrent`). For a
    /// card made from an opened directory it is `/proc/self/fd/N` of its in-memory copy.
    public var configURL: URL {
        ownConfiguration.map { URL(filePath: $0.path) } ?? directory.appending(path: "asound.conf")
    }
    /// The configuration other programs read (a child process, `amixer`, `aplay`): `asound.conf`
    /// in the directory by its name.
    public var sharedConfigURL: URL { shownDirectory.appending(path: "asound.conf") }
    /// The first playback configuration's recording.
    public var recordingURL: URL { directory.appending(path: "playback.wav") }
    public var eventsURL: URL { directory.appending(path: "events.log") }

    /// Every recording so far, in the order the streams began them.
    public func recordingURLs() -> [URL] {
        var urls: [URL] = []
        for n in 1... {
            let url = directory.appending(path: n == 1 ? "playback.wav" : "playback-\(n).wav")
            guard FileManager.default.fileExists(atPath: url.path) else { return urls }
            urls.append(url)
        }
        return urls
    }

    /// This process's environment with ALSA_CONFIG_PATH set to the card's configuration, for a
    /// child process such as aplay.
    public var environment: [String: String] {
        ProcessInfo.processInfo.environment.merging(["ALSA_CONFIG_PATH": sharedConfigURL.path]) { $1 }
    }

    /// Points this process's ALSA at the card: the next open of a PCM or mixer reads its
    /// configuration. Call it before opening the card's devices.
    public func makeCurrent() {
        // ALSA reads the configuration at later opens too, wherever this card value has gone by
        // then: an in-memory one is kept for the rest of the process (a card or two a process).
        if let ownConfiguration { VirtualCard.kept.withLock { $0.append(ownConfiguration) } }
        setenv("ALSA_CONFIG_PATH", configURL.path, 1)
    }

    /// In-memory configurations ALSA_CONFIG_PATH has named in this process (`makeCurrent`).
    private static let kept = Mutex<[InMemoryFile]>([])

    /// `url`, a file in the card's directory, as people find it (in `shownDirectory`).
    public func shownPath(of url: URL) -> String {
        let prefix = directory.path.hasSuffix("/") ? directory.path : directory.path + "/"
        guard url.path.hasPrefix(prefix) else { return url.path }
        return shownDirectory.appending(path: String(url.path.dropFirst(prefix.count))).path
    }

    /// The events logged so far, in timestamp order.
    public func events() throws -> [CardEvent] {
        guard let data = try PrivateFile.read(eventsURL) else { return [] }
        let text = String(decoding: data, as: UTF8.self)
        let events = try text.split(separator: "\n").map(CardEvent.init(line:))
        return events.enumerated().sorted { ($0.element.nanoseconds, $0.offset) < ($1.element.nanoseconds, $1.offset) }.map(\.element)
    }

    /// Deletes the card's directory and everything in it.
    public func remove() throws {
        do {
            try FileManager.default.removeItem(at: directory)
        } catch {
            throw CardError("cannot remove \(directory.path) (\(errorText(error))); remove it by hand")
        }
    }

    // MARK: Faults and Master

    /// Forces one xrun on every stream running now (or on the next to run): its next position
    /// query fails with -EPIPE and the stream is in SND_PCM_STATE_XRUN.
    public func injectXrun() {
        state[.xrunRequests] &+= 1
    }

    /// Makes every playback stream running now (or the next to run) underrun as a client held
    /// up too long does: at its next position query its DAC plays all that was written, and the
    /// query fails with -EPIPE (SND_PCM_STATE_XRUN, logged as an underrun). Unlike
    /// `injectXrun`, nothing written is dropped: what the client writes after recovering follows
    /// what was heard.
    public func injectUnderrun() {
        state[.underrunRequests] &+= 1
    }

    /// Unplugs the card: from each stream's next call on, every call fails with -ENODEV and the
    /// stream is in SND_PCM_STATE_DISCONNECTED; opening fails with -ENODEV.
    public func disconnect() {
        state[.disconnected] = 1
        removeAsoundTree()
        log("disconnect")
    }

    /// Plugs the card back: new opens work (streams that saw the unplug stay dead; reopen them).
    public func reconnect() {
        state[.disconnected] = 0
        writeAsoundTree()
        log("reconnect")
    }

    /// Plugs the card back as the kernel may number a USB card plugged in again: with the index
    /// `index` (its id stays), so that `pcmName(card:)` by the old index no longer opens and by
    /// the id does; the asound tree, if made, shows it as card`index`.
    public func reconnect(index: Int) {
        removeAsoundTree()
        state[.cardIndex] = UInt32(clamping: max(index, 0))
        state[.disconnected] = 0
        writeAsoundTree()
        log("reconnect index=\(cardIndex)")
    }

    public var isDisconnected: Bool { state[.disconnected] != 0 }

    /// Makes every PCM open of the card fail with `code` (a positive errno: EBUSY as when another
    /// program holds a card, EACCES as when the user may not open it) until set back to nil;
    /// open streams play on.
    public var refusesOpen: Int32? {
        get { state[.refuseOpen] == 0 ? nil : Int32(bitPattern: state[.refuseOpen]) }
        nonmutating set { state[.refuseOpen] = newValue.map { UInt32(bitPattern: abs($0)) } ?? 0 }
    }

    // MARK: The card's identity

    /// The card's index now (0 unless `reconnect(index:)` changed it), as /proc/asound/cardN.
    public var cardIndex: Int { Int(state[.cardIndex]) }

    /// The card's stable name, as /proc/asound/cardN/id holds it: "sfxcard" unless set (at most
    /// 15 bytes of it are kept).
    public var cardID: String {
        get { let id = state.cardID; return id.isEmpty ? "sfxcard" : id }
        nonmutating set {
            state.cardID = newValue
            if !isDisconnected { removeAsoundTree(); writeAsoundTree() }
        }
    }

    /// The card behind `plug`, opening only while `card` (the `CARD` argument) is the card's id or
    /// its index now, as `plughw:CARD=…` does: "sfxcard_card:CARD=sfxcard,DEV=0",
    /// "sfxcard_card:1" (by index). Otherwise its open fails with ENODEV.
    public func pcmName(card: String) -> String { "sfxcard_card:CARD=\(card),DEV=0" }

    /// The definition behind `pcmName(card:)`, whose arguments are hw's (CARD, DEV).
    public var cardPCMName: String { "sfxcard_card" }

    /// Where the card's tree laid out like /proc/asound is (`makeAsoundTree()`): `card<index>/id`
    /// while the card is plugged in. Give it to the functions that take an asound root
    /// (`CardName.resolve(_:asoundRoot:)`, `CardWatcher`).
    public var asoundRoot: URL { directory.appending(path: "asound", directoryHint: .isDirectory) }

    /// Makes the tree at `asoundRoot` (0700, the id file 0600) and returns it; from then on
    /// `disconnect` removes the card from it and `reconnect` writes it back, at its index then. A
    /// card whose tree was never made has none (its directory holds what it always held).
    @discardableResult
    public func makeAsoundTree() -> URL {
        _ = mkdir(asoundRoot.path, 0o700)
        if !isDisconnected { writeAsoundTree() }
        return asoundRoot
    }

    private func writeAsoundTree() {
        let card = asoundRoot.appending(path: "card\(cardIndex)", directoryHint: .isDirectory)
        guard FileManager.default.fileExists(atPath: asoundRoot.path) else { return }
        _ = mkdir(card.path, 0o700)
        try? PrivateFile.replace(card.appending(path: "id"), with: Data((cardID + "\n").utf8))
    }

    private func removeAsoundTree() {
        try? FileManager.default.removeItem(at: asoundRoot.appending(path: "card\(cardIndex)"))
    }

    /// The Master Playback Switch: off sends silence to the DAC.
    public var masterSwitch: Bool {
        get { state[.masterSwitch] != 0 }
        nonmutating set { state[.masterSwitch] = newValue ? 1 : 0 }
    }

    /// The Master Playback Volume, 0 … 100: 100 is 0 dB, each step 0.5 dB, 0 mutes.
    public var masterVolume: Int {
        get { Int(state[.masterVolume]) }
        nonmutating set { state[.masterVolume] = UInt32(min(max(newValue, 0), 100)) }
    }

    /// The linear gain Master applies: 0 when off or at volume 0, else 10^((volume - 100) / 40).
    public var masterGain: Float {
        guard masterSwitch, masterVolume > 0 else { return 0 }
        return Float(pow(10, Double(masterVolume - 100) * 0.5 / 20))
    }

    // MARK: Finding the plugin

    /// Where `libsfxcard.so` is, relative to the running program and never to where it was built
    /// (a copied or installed program must not load a library from its build directory, where
    /// someone else might put one):
    /// 1. `$SFXCARD_PLUGIN`, when set;
    /// 2. `libsfxcard.so` beside the executable — SwiftPM builds it there (`.build/debug/sfx`
    ///    finds `.build/debug/libsfxcard.so`; test bundles run from the same directory) — or
    ///    else `libSFXTesting.so`, which holds the plugin too: a game whose test target depends
    ///    on the `SFXTesting` product gets it built beside its test binary;
    /// 3. `<prefix>/lib/sfx/libsfxcard.so` for an executable installed as `<prefix>/bin/sfx`.
    ///
    /// A candidate found by 2 or 3 is used only when it, and each directory between it and the
    /// executable's directory or prefix, belongs to the user or root and is not writable by
    /// others; otherwise this throws, naming the file.
    public static func locatePlugin(executablePath: String? = currentExecutable(),
                                    environment: [String: String] = ProcessInfo.processInfo.environment) throws -> URL {
        if let path = environment["SFXCARD_PLUGIN"], !path.isEmpty {
            guard FileManager.default.fileExists(atPath: path) else {
                throw CardError("SFXCARD_PLUGIN names \(path), which does not exist; point it at libsfxcard.so or unset it")
            }
            return URL(filePath: path)
        }
        guard let executablePath else {
            throw CardError("libsfxcard.so cannot be searched for: the running program's path is unknown; set SFXCARD_PLUGIN to the library")
        }
        let programDirectory = URL(filePath: executablePath).deletingLastPathComponent().standardizedFileURL
        let prefix = programDirectory.deletingLastPathComponent()
        let candidates = [(programDirectory.appending(path: "libsfxcard.so"), programDirectory),
                          (programDirectory.appending(path: "libSFXTesting.so"), programDirectory),
                          (prefix.appending(path: "lib/sfx/libsfxcard.so"), prefix)]
        for (candidate, anchor) in candidates where FileManager.default.fileExists(atPath: candidate.path) {
            if let problem = TrustedPath.problem(candidate, below: anchor) {
                throw CardError("\(problem), so the virtual card's plugin is not loaded from there; remove it, or set SFXCARD_PLUGIN to a libsfxcard.so of your own")
            }
            return candidate
        }
        throw CardError("libsfxcard.so not found beside \(executablePath) (nor libSFXTesting.so) or in \(prefix.path)/lib/sfx; build sfx with `swift build` (a game: depend on the SFXTesting product) and run the program from .build, install the library there, or set SFXCARD_PLUGIN to it")
    }

    /// The running executable, from /proc/self/exe.
    public static func currentExecutable() -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    }

    /// CLOCK_MONOTONIC now, in nanoseconds: the card's clock.
    public static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    // MARK: Private

    private func log(_ event: String) {
        let line = "\(VirtualCard.monotonicNanoseconds()) \(event)\n"
        PrivateFile.append(line, to: eventsURL)
    }

    private static func configuration(plugin: URL, directory: URL, captureSource: URL?, loop: Bool,
                                      onsetThreshold: Double, onsetSilenceMilliseconds: Int, record: Bool,
                                      recordingFormat: RecordingFormat, continuesRecording: Bool,
                                      pointer: PointerGranularity, rewind: RewindBehavior) -> String {
        func quoted(_ text: String) -> String {
            "\"" + text.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
        }
        let capture = captureSource.map { " capture \(quoted($0.path)) loop \(loop ? "yes" : "no")" } ?? ""
        // The card's own settings, the same for each PCM that reaches it (one line: ALSA's
        // configuration takes any white space between them).
        let card = "type sfxcard dir \(quoted(directory.path))\(capture) onset_threshold \(onsetThreshold) "
            + "onset_silence_ms \(onsetSilenceMilliseconds) record \(record ? "yes" : "no") record_format \(recordingFormat.rawValue) "
            + "record_continue \(continuesRecording ? "yes" : "no") pointer \(pointer.rawValue) rewind \(rewind.rawValue)"
        return """
        # The sfx virtual sound card. Select it with ALSA_CONFIG_PATH=\(directory.appending(path: "asound.conf").path)
        </usr/share/alsa/alsa.conf>
        # Only this file decides: the system's and the user's additions (alsa.conf's load hook:
        # conf.d, asound.conf, ~/.asoundrc), which may make another device the default (as
        # pipewire-alsa does), are not loaded.
        @hooks.0.!files [ ]

        pcm_type.sfxcard { lib \(quoted(plugin.path)) }
        ctl_type.sfxcard { lib \(quoted(plugin.path)) }

        # The card alone: the hardware's exact formats, rates and period sizes.
        pcm.sfxcard_hw {
            \(card)
            hint.description "sfx virtual sound card (no conversion)"
        }

        # The card behind plug, which converts what the card does not take.
        pcm.sfxcard {
            type plug
            slave.pcm "sfxcard_hw"
            hint.description "sfx virtual sound card"
        }

        # The card by its id or index (hw's arguments), behind plug: it opens only while CARD
        # is the card's id or its index now (the state file's), as plughw:CARD=… does.
        pcm.sfxcard_card {
            @args [ CARD DEV ]
            @args.CARD { type string default "sfxcard" }
            @args.DEV { type integer default 0 }
            type plug
            slave.pcm {
                \(card)
                card $CARD
            }
            hint.description "sfx virtual sound card, by its id or index"
        }

        ctl.sfxcard {
            type sfxcard
            dir \(quoted(directory.path))
        }

        # Each PCM has a control of the same name, as hw:N has, so programs find the mixer.
        ctl.sfxcard_hw "sfxcard"

        pcm.!default "sfxcard"
        ctl.!default "sfxcard"

        """
    }
}

/// A file with no name (memfd), reached as `/proc/self/fd/N` in this process while it lives.
final class InMemoryFile: @unchecked Sendable {
    let descriptor: Int32

    init(name: String, contents: String) throws {
        descriptor = sfx_memfd(name)
        guard descriptor >= 0 else { throw CardError("cannot hold the card's configuration in memory (\(errnoName())); use a kernel with memfd_create") }
        let bytes = Array(contents.utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard n > 0 else {
                close(descriptor)
                throw CardError("cannot hold the card's configuration in memory (\(errnoName()))")
            }
            written += n
        }
    }

    deinit { close(descriptor) }

    var path: String { "/proc/self/fd/\(descriptor)" }
}
