import FoundationEssentials
import Glibc
import SFXDevice
import SFXCardSupport
import SFXSystem
import Synchronization

/// On a machine with no sound card, `sfx play` plays through sfx's virtual card so that the
/// first command of the README works anywhere; the card's directory holds what it "played".
/// `SFX_VIRTUAL_CARD=1` asks for the card where there is a sound card too (silent runs, tests).
/// `sfx record` and `sfx meter` capture from the card the same way; its capture side plays the
/// sound file named by `SFX_VIRTUAL_INPUT` (silence without one).
enum VirtualCardFallback {
    static let environmentKey = "SFX_VIRTUAL_CARD"
    /// The sound file the card's capture side plays (once, then silence).
    static let inputKey = "SFX_VIRTUAL_INPUT"
    /// The card directories engaged, open until the process ends.
    private static let held = Mutex<[OwnedDirectory]>([])

    /// Why the card is used ("no sound card here", or the variable), or nil when a device was
    /// given, ALSA is already pointed elsewhere (ALSA_CONFIG_PATH set), there is a sound card,
    /// or a sound server was chosen (it is heard; the virtual card is not: `ServerOutput`).
    static func reason(deviceGiven: Bool, serverChosen: Bool) -> String? {
        let environment = ProcessInfo.processInfo.environment
        guard !deviceGiven, environment["ALSA_CONFIG_PATH"] == nil else { return nil }
        if environment[environmentKey] == "1" { return "\(environmentKey)=1" }
        if serverChosen || DeviceList.hasSoundCard { return nil }
        return "no sound card here"
    }

    /// The card to use, or nil when `reason` gives none. It lives in a private directory (see
    /// `CardDirectory.forUser`): `$XDG_RUNTIME_DIR/sfx/card`, whose last recording and log are
    /// cleared at each run, else `$XDG_STATE_HOME/sfx/card` kept the same way, else a fresh
    /// mkdtemp directory in $TMPDIR; never at a fixed path in a directory others can write.
    /// `captureSource` is what the card's capture side plays (silence when nil).
    /// `keepRecordings` leaves the last run's recording and event log (for `sfx mute status`,
    /// which reads the card's mixer and plays nothing). `directoryName` other than "card" is a
    /// card of its own beside the user's (`sfx serve`: "daemon-card"), so that an in-process
    /// run, which clears the user's card, never takes the daemon's recording.
    static func engage(deviceGiven: Bool, serverChosen: Bool, captureSource: URL? = nil,
                       keepRecordings: Bool = false, directoryName: String = "card") throws -> (card: VirtualCard, reason: String)? {
        guard let reason = reason(deviceGiven: deviceGiven, serverChosen: serverChosen) else { return nil }
        let card: VirtualCard
        do {
            let plugin = try VirtualCard.locatePlugin()   // first: a failure leaves no directory behind
            // Opened and checked from the base directory down by descriptor, and reached through
            // it, by sfx and by ALSA: no rename above it can swap in another configuration.
            let opened = try CardDirectory.openForUser(name: directoryName)
            // Each run's recording starts afresh (unlink removes a link itself, never its target).
            for old in (keepRecordings ? nil : try? FileManager.default.contentsOfDirectory(atPath: opened.descriptorPath)) ?? []
            where old.hasPrefix("playback") || old == "events.log" {
                unlinkat(opened.descriptor, old, 0)
            }
            // Its recording is for people to open: 32-bit PCM, which sox reads without a warning.
            // A card of its own (the daemon's, whose device closes when idle and opens again for
            // the next sound) keeps one recording going rather than a file a sound.
            card = try VirtualCard(opened: opened, captureSource: captureSource, recordingFormat: .pcm32,
                                   continuesRecording: directoryName != "card", plugin: plugin)
            // ALSA_CONFIG_PATH names the descriptor for the rest of the process (`makeCurrent`),
            // whoever keeps the card: the directory stays open as long.
            held.withLock { $0.append(opened) }
        } catch {
            throw Failure("\(reason), and sfx's virtual card is not available (\(error)); pick a device with --device (`sfx devices` lists them)")
        }
        card.makeCurrent()
        return (card, reason)
    }
}
