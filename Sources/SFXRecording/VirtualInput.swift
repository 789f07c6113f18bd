import FoundationEssentials
import Glibc
import SFXCardSupport
import SFXDevice
import SFXSystem
import Synchronization

/// A library `Recorder` records from sfx's virtual card, fed by a sound file, when the
/// environment asks for it as `sfx record` does: `SFX_VIRTUAL_INPUT` names the file (played once
/// into the card's capture side, then silence), and either there is no sound card here or
/// `SFX_VIRTUAL_CARD=1`. Only a recorder with the default device (`device == "default"` and the
/// system's capture devices) takes the card, and not when ALSA_CONFIG_PATH already points ALSA
/// elsewhere. Unlike the command, a library recorder never falls back to the card without
/// `SFX_VIRTUAL_INPUT` (it would record silence where the caller expects an error).
///
/// The card is engaged once a process, in the user's card directory (as `sfx record` uses it),
/// and made ALSA's `default` for the rest of the process (`VirtualCard.makeCurrent`), so an
/// engine opened afterwards plays through it too; the notice `sfx record` prints goes to
/// standard error once, when it is engaged:
/// `sfx: no sound card here: recording from sfx's virtual card (DIR), which plays SFX_VIRTUAL_INPUT=FILE into its input`.
public enum VirtualInput {
    public static let inputKey = "SFX_VIRTUAL_INPUT"
    public static let cardKey = "SFX_VIRTUAL_CARD"
    private static let engaged = Mutex<VirtualCard?>(nil)

    /// Engages the card when the environment asks for it (see the type's comment) and returns
    /// its notice, once; nil when not asked, or already engaged. Call it before opening a
    /// `SoundEngine` for the engine to play through the card as well; `Recorder.record()`
    /// calls it for a recorder with the default device.
    @discardableResult
    public static func engageIfAsked(environment: [String: String] = ProcessInfo.processInfo.environment) throws(RecorderError) -> String? {
        guard let path = environment[inputKey], !path.isEmpty, environment["ALSA_CONFIG_PATH"] == nil else { return nil }
        let reason: String
        if environment[cardKey] == "1" {
            reason = "\(cardKey)=1"
        } else if !DeviceList.hasSoundCard {
            reason = "no sound card here"
        } else {
            return nil
        }
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        guard FileManager.default.isReadableFile(atPath: absolute) else {
            throw .virtualInput("\(inputKey) names \(path), which cannot be read; point it at a sound file (WAV, FLAC, Ogg…) or unset it")
        }
        return try engaged.withLock { (card: inout VirtualCard?) throws(RecorderError) -> String? in
            guard card == nil else { return nil }
            do {
                let plugin = try VirtualCard.locatePlugin()
                let opened = try CardDirectory.openForUser(name: "card")
                for old in (try? FileManager.default.contentsOfDirectory(atPath: opened.descriptorPath)) ?? []
                where old.hasPrefix("playback") || old == "events.log" {
                    unlinkat(opened.descriptor, old, 0)
                }
                let made = try VirtualCard(opened: opened, captureSource: URL(filePath: absolute), recordingFormat: .pcm32, plugin: plugin)
                openedDirectories.withLock { $0.append(opened) }
                made.makeCurrent()
                card = made
                let notice = "\(reason): recording from sfx's virtual card (\(made.shownDirectory.path)), which plays \(inputKey)=\(absolute) into its input"
                writeToStandardError("sfx: \(notice)\n")
                return notice
            } catch {
                throw .virtualInput("\(reason), and sfx's virtual card is not available (\(error)); set a device in RecorderSettings.device, or unset \(inputKey)")
            }
        }
    }

    /// The card directories engaged, open until the process ends (ALSA reads through them).
    private static let openedDirectories = Mutex<[OwnedDirectory]>([])
}
