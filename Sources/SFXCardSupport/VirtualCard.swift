import Foundation

/// A virtual sound card for machines without one: the `libsfxcard.so` ALSA plugin, set up in a
/// directory of its own.
///
/// The card is real to every ALSA client: playback is consumed in real time (frame n reaches the
/// "DAC" at start + n / rate on CLOCK_MONOTONIC), recorded to a float WAV after the Master
/// control, and timed in an event log; capture plays a sound file in real time; the mixer has a
/// Master switch and volume; faults (xruns, unplugging) come on request.
///
///     let card = try VirtualCard()                 // a fresh temporary directory
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
/// file per hw_params setup, since a WAV holds one rate and channel count).
public struct VirtualCard: Sendable {
    public let directory: URL
    public let pluginURL: URL
    public let captureSource: URL?
    public let loopCapture: Bool

    private let state: CardState

    /// Sets the card up in `directory` (created if needed; a new temporary directory when nil):
    /// writes the state file (connected, Master on at full volume) unless one is there, and the
    /// configuration.
    ///
    /// - Parameters:
    ///   - captureSource: a sound file (any format libsndfile reads) played into capture
    ///     streams, converted to their format; silence when nil.
    ///   - loopCapture: repeat the capture source instead of following it with silence.
    ///   - onsetThreshold: the absolute sample value above which the DAC hears sound.
    ///   - onsetSilenceMilliseconds: silence that must precede an onset.
    ///   - record: write what reaches the DAC to playback.wav; false spares the disk writes (for
    ///     CPU measurements) and keeps the event log.
    ///   - plugin: the plugin library; `locatePlugin()` when nil.
    public init(directory: URL? = nil, captureSource: URL? = nil, loopCapture: Bool = false,
                onsetThreshold: Double = 0.001, onsetSilenceMilliseconds: Int = 10, record: Bool = true,
                plugin: URL? = nil) throws {
        let directory = directory ?? FileManager.default.temporaryDirectory
            .appending(path: "sfxcard-\(UUID().uuidString)", directoryHint: .isDirectory)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw CardError("cannot create the card directory \(directory.path) (\(error.localizedDescription)); choose a writable one")
        }
        if let captureSource, !FileManager.default.isReadableFile(atPath: captureSource.path) {
            throw CardError("capture source \(captureSource.path) cannot be read; give an existing sound file")
        }
        guard (0...1).contains(onsetThreshold), onsetSilenceMilliseconds >= 0 else {
            throw CardError("onset threshold \(onsetThreshold) or silence \(onsetSilenceMilliseconds) ms is out of range; use 0…1 and 0 ms or more")
        }
        self.directory = directory
        self.pluginURL = try plugin ?? VirtualCard.locatePlugin()
        self.captureSource = captureSource
        self.loopCapture = loopCapture
        self.state = try CardState(url: directory.appending(path: "state"))
        let text = VirtualCard.configuration(plugin: pluginURL, directory: directory, captureSource: captureSource,
                                             loop: loopCapture, onsetThreshold: onsetThreshold,
                                             onsetSilenceMilliseconds: onsetSilenceMilliseconds, record: record)
        do {
            try Data(text.utf8).write(to: configURL, options: .atomic)
        } catch {
            throw CardError("cannot write \(configURL.path) (\(error.localizedDescription)); choose a writable directory")
        }
    }

    // MARK: Names and files

    /// The card behind ALSA's `plug` converter: what applications open.
    public var pcmName: String { "sfxcard" }
    /// The card alone, with the hardware's exact constraints.
    public var hardwarePCMName: String { "sfxcard_hw" }
    /// The card's mixer (Master Playback Switch and Volume).
    public var ctlName: String { "sfxcard" }

    /// The ALSA configuration: put it in ALSA_CONFIG_PATH.
    public var configURL: URL { directory.appending(path: "asound.conf") }
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
        ProcessInfo.processInfo.environment.merging(["ALSA_CONFIG_PATH": configURL.path]) { $1 }
    }

    /// Points this process's ALSA at the card: the next open of a PCM or mixer reads its
    /// configuration. Call it before opening the card's devices.
    public func makeCurrent() {
        setenv("ALSA_CONFIG_PATH", configURL.path, 1)
    }

    /// The events logged so far, in timestamp order.
    public func events() throws -> [CardEvent] {
        guard FileManager.default.fileExists(atPath: eventsURL.path) else { return [] }
        let text: String
        do {
            text = try String(contentsOf: eventsURL, encoding: .utf8)
        } catch {
            throw CardError("cannot read \(eventsURL.path) (\(error.localizedDescription)); check the card directory")
        }
        let events = try text.split(separator: "\n").map(CardEvent.init(line:))
        return events.enumerated().sorted { ($0.element.nanoseconds, $0.offset) < ($1.element.nanoseconds, $1.offset) }.map(\.element)
    }

    /// Deletes the card's directory and everything in it.
    public func remove() throws {
        do {
            try FileManager.default.removeItem(at: directory)
        } catch {
            throw CardError("cannot remove \(directory.path) (\(error.localizedDescription)); remove it by hand")
        }
    }

    // MARK: Faults and Master

    /// Forces one xrun on every stream running now (or on the next to run): its next position
    /// query fails with -EPIPE and the stream is in SND_PCM_STATE_XRUN.
    public func injectXrun() {
        state[.xrunRequests] &+= 1
    }

    /// Unplugs the card: from each stream's next call on, every call fails with -ENODEV and the
    /// stream is in SND_PCM_STATE_DISCONNECTED; opening fails with -ENODEV.
    public func disconnect() {
        state[.disconnected] = 1
        log("disconnect")
    }

    /// Plugs the card back: new opens work (streams that saw the unplug stay dead; reopen them).
    public func reconnect() {
        state[.disconnected] = 0
        log("reconnect")
    }

    public var isDisconnected: Bool { state[.disconnected] != 0 }

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

    /// Where `libsfxcard.so` is: $SFXCARD_PLUGIN; else `libsfxcard.so` or `.build/{debug,release}/`
    /// in the running executable's directory or any directory above it; else
    /// `.build/{debug,release}/` of the package this file was built from.
    public static func locatePlugin() throws -> URL {
        let fileManager = FileManager.default
        if let path = ProcessInfo.processInfo.environment["SFXCARD_PLUGIN"], !path.isEmpty {
            guard fileManager.fileExists(atPath: path) else {
                throw CardError("SFXCARD_PLUGIN names \(path), which does not exist; point it at libsfxcard.so or unset it")
            }
            return URL(filePath: path)
        }
        var roots: [URL] = []
        if let executable = try? fileManager.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            var dir = URL(filePath: executable).deletingLastPathComponent()
            while dir.path != "/" {
                roots.append(dir)
                dir = dir.deletingLastPathComponent()
            }
        }
        let packageRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var candidates = roots.map { $0.appending(path: "libsfxcard.so") }
        for root in roots + [packageRoot] {
            candidates += ["debug", "release"].map { root.appending(path: ".build/\($0)/libsfxcard.so") }
        }
        if let found = candidates.first(where: { fileManager.fileExists(atPath: $0.path) }) {
            return found
        }
        throw CardError("libsfxcard.so not found next to the program or in \(packageRoot.path)/.build; run `swift build` in the sfx package (or set SFXCARD_PLUGIN to the library)")
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
        let fd = open(eventsURL.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o666)
        guard fd >= 0 else { return }
        _ = line.withCString { write(fd, $0, strlen($0)) }
        close(fd)
    }

    private static func configuration(plugin: URL, directory: URL, captureSource: URL?, loop: Bool,
                                      onsetThreshold: Double, onsetSilenceMilliseconds: Int, record: Bool) -> String {
        func quoted(_ text: String) -> String {
            "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        let capture = captureSource.map { "\n    capture \(quoted($0.path))\n    loop \(loop ? "yes" : "no")" } ?? ""
        return """
        # The sfx virtual sound card. Select it with ALSA_CONFIG_PATH=\(directory.appending(path: "asound.conf").path)
        </usr/share/alsa/alsa.conf>

        pcm_type.sfxcard { lib \(quoted(plugin.path)) }
        ctl_type.sfxcard { lib \(quoted(plugin.path)) }

        # The card alone: the hardware's exact formats, rates and period sizes.
        pcm.sfxcard_hw {
            type sfxcard
            dir \(quoted(directory.path))\(capture)
            onset_threshold \(onsetThreshold)
            onset_silence_ms \(onsetSilenceMilliseconds)
            record \(record ? "yes" : "no")
            hint.description "sfx virtual sound card (no conversion)"
        }

        # The card behind plug, which converts what the card does not take.
        pcm.sfxcard {
            type plug
            slave.pcm "sfxcard_hw"
            hint.description "sfx virtual sound card"
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
