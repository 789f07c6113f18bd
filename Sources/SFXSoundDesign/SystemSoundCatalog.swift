/// One bundled system sound: its stable id, its name, what it is for, and how to make it.
///
/// `id` is the number a program may store (like iOS's SystemSoundID): it never changes once
/// assigned. `name` follows the freedesktop Sound Naming Specification where a name exists
/// (`bell`, `message-new-instant`, `dialog-error` …) and the familiar phone names otherwise
/// (`tock`, `key-click`, `camera-shutter` …). `render()` synthesises the finished sound:
/// 48 kHz mono floats, peak at −1 dBFS, starting and ending at exact zero.
///
/// ```swift
/// let tock = SystemSoundCatalog.sound(named: "tock")!
/// let wav = WAVEncoder16.encode(samples: tock.render(), sampleRate: SystemSoundCatalog.sampleRate,
///                               seed: UInt64(tock.id))
/// ```
public struct SystemSoundSpec: Sendable {
    public let id: Int
    public let name: String
    /// One line, for `sfx list` and the theme index.
    public let description: String
    private let design: @Sendable () -> Signal

    init(_ id: Int, _ name: String, _ description: String, _ design: @escaping @Sendable () -> Signal) {
        self.id = id
        self.name = name
        self.description = description
        self.design = design
    }

    /// The finished sound: mono samples at `SystemSoundCatalog.sampleRate`, the same on every call.
    public func render() -> [Float] { design().mastered() }
}

/// Every sound sfx ships, in id order: the contents of the `sfx` sound theme.
///
/// Ids start at 1000 and are only ever appended; a sound is never renumbered.
public enum SystemSoundCatalog {
    /// The sample rate of every rendered sound, in hertz.
    public static let sampleRate = Int(Signal.sampleRate)

    public static let all: [SystemSoundSpec] = [
        SystemSoundSpec(1000, "tock", "A soft wooden tock for taps, pickers and keyboard keys", SoundDesigns.tock),
        SystemSoundSpec(1001, "tink", "A small, bright glass tink", SoundDesigns.tink),
        SystemSoundSpec(1002, "key-click", "A typewriter-like key click for the on-screen keyboard", SoundDesigns.keyClick),
        SystemSoundSpec(1003, "lock", "A firm, low latch: the screen locked", SoundDesigns.lock),
        SystemSoundSpec(1004, "unlock", "A lighter latch opening: the screen unlocked", SoundDesigns.unlock),
        SystemSoundSpec(1005, "camera-shutter", "A mechanical camera shutter opening and closing", SoundDesigns.cameraShutter),
        SystemSoundSpec(1006, "sent", "A rising swoosh: message sent", SoundDesigns.sent),
        SystemSoundSpec(1007, "received", "A falling swoop onto a soft chime: message received", SoundDesigns.received),
        SystemSoundSpec(1008, "alarm", "Three bursts of four quick beeps: an alarm or timer", SoundDesigns.alarm),
        SystemSoundSpec(1009, "low-power", "A slow tone falling an octave: battery low", SoundDesigns.lowPower),
        SystemSoundSpec(1010, "bell", "A warm struck bell: the generic alert", SoundDesigns.bell),
        SystemSoundSpec(1011, "message-new-instant", "Two glass notes rising a fourth: new instant message", SoundDesigns.messageNewInstant),
        SystemSoundSpec(1012, "dialog-warning", "Two firm hollow notes: a warning needs attention", SoundDesigns.dialogWarning),
        SystemSoundSpec(1013, "dialog-error", "Two hollow notes falling a minor third: an error", SoundDesigns.dialogError),
        SystemSoundSpec(1014, "dialog-information", "A single soft marimba note: information", SoundDesigns.dialogInformation),
        SystemSoundSpec(1015, "complete", "A quick rising major arpeggio: task complete", SoundDesigns.complete),
        SystemSoundSpec(1016, "device-added", "Two marimba notes rising a fourth: device connected", SoundDesigns.deviceAdded),
        SystemSoundSpec(1017, "device-removed", "Two marimba notes falling a fourth: device disconnected", SoundDesigns.deviceRemoved),
        SystemSoundSpec(1018, "message-new-email", "A chime falling a fifth: new email", SoundDesigns.messageNewEmail),
        SystemSoundSpec(1019, "power-plug", "A click and a tone rising a fifth: charger connected", SoundDesigns.powerPlug),
        SystemSoundSpec(1020, "power-unplug", "A click and a tone falling a fifth: charger disconnected", SoundDesigns.powerUnplug),
        SystemSoundSpec(1021, "screen-capture", "A quick, light shutter snap: screenshot taken", SoundDesigns.screenCapture),
        SystemSoundSpec(1022, "audio-volume-change", "A short soft pop: volume changed", SoundDesigns.audioVolumeChange),
        SystemSoundSpec(1023, "service-login", "A warm rising four-note chime: logged in", SoundDesigns.serviceLogin),
        SystemSoundSpec(1024, "service-logout", "The login chime descending: logged out", SoundDesigns.serviceLogout),
        SystemSoundSpec(1025, "trash-empty", "Paper crumpling into the bin: trash emptied", SoundDesigns.trashEmpty),
        SystemSoundSpec(1026, "suspend-error", "A short low double buzz: could not suspend", SoundDesigns.suspendError),
        SystemSoundSpec(1027, "button-pressed", "A crisp, tiny tick for on-screen buttons", SoundDesigns.buttonPressed),
        SystemSoundSpec(1028, "dialog-question", "Two chime notes rising a sixth: a question", SoundDesigns.dialogQuestion),
    ]

    /// The sound called `name`, or nil.
    public static func sound(named name: String) -> SystemSoundSpec? { all.first { $0.name == name } }

    /// The sound numbered `id`, or nil.
    public static func sound(id: Int) -> SystemSoundSpec? { all.first { $0.id == id } }
}
