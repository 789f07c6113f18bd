/// One bundled system sound: its stable id, its name, what it is for, and how to make it.
///
/// `id` is the number a program may store (like iOS's SystemSoundID): it never changes once
/// assigned. `name` follows the freedesktop Sound Naming Specification where a name exists
/// (`bell`, `message-new-instant`, `dialog-error` …) and the familiar phone names otherwise
/// (`tock`, `key-click`, `camera-shutter` …). `render()` synthesises the finished sound:
/// 48 kHz mono floats, starting and ending at exact zero, at its `loudnessClass`'s target.
///
/// The level is set by `peak`, the sample peak in dBFS the mastering scales the sound to: a
/// constant chosen once from libebur128's measurement of the sound (`peak` = the peak at which
/// it was measured + target − measured loudness), so synthesis stays plain deterministic
/// arithmetic. `SystemSoundLoudnessTests` measures every generated file with libebur128 and
/// fails when a sound is more than 1 LU from its target or its true peak is over −1 dBTP.
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
    /// What the sound is for, which sets how loud it is.
    public let loudnessClass: LoudnessClass
    /// The sample peak, in dBFS, that puts the sound at its class's target loudness.
    public let peak: Double
    /// The committed file's loudness and true peak as libebur128 measures them, to the tenth,
    /// for the README; `SystemSoundLoudnessTests` checks them against the generated file.
    public let measured: MeasuredLoudness
    private let design: @Sendable () -> Signal

    init(_ id: Int, _ name: String, _ loudnessClass: LoudnessClass, peak: Double, lufs: Double, truePeak: Double,
         _ description: String, _ design: @escaping @Sendable () -> Signal) {
        self.id = id
        self.name = name
        self.loudnessClass = loudnessClass
        self.peak = peak
        self.measured = MeasuredLoudness(lufs: lufs, truePeak: truePeak)
        self.description = description
        self.design = design
    }

    /// The finished sound: mono samples at `SystemSoundCatalog.sampleRate`, the same on every call.
    public func render() -> [Float] { design().mastered(peak: peak) }
}

/// A sound's measured level: loudness in LUFS and true peak in dBTP.
public struct MeasuredLoudness: Sendable, Hashable {
    public let lufs: Double
    public let truePeak: Double
}

/// Every sound sfx ships, in id order: the contents of the `sfx` sound theme.
///
/// Ids start at 1000 and are only ever appended; a sound is never renumbered.
public enum SystemSoundCatalog {
    /// The sample rate of every rendered sound, in hertz.
    public static let sampleRate = Int(Signal.sampleRate)

    public static let all: [SystemSoundSpec] = [
        SystemSoundSpec(1000, "tock", .inputFeedback, peak: -10.4, lufs: -30.0, truePeak: -10.4, "A soft wooden tock for taps, pickers and keyboard keys", SoundDesigns.tock),
        SystemSoundSpec(1001, "tink", .inputFeedback, peak: -16.9, lufs: -30.0, truePeak: -16.8, "A small, bright glass tink", SoundDesigns.tink),
        SystemSoundSpec(1002, "key-click", .inputFeedback, peak: -6.8, lufs: -30.0, truePeak: -6.7, "A typewriter-like key click for the on-screen keyboard", SoundDesigns.keyClick),
        SystemSoundSpec(1003, "lock", .inputFeedback, peak: -7.9, lufs: -30.0, truePeak: -7.9, "A firm, low latch: the screen locked", SoundDesigns.lock),
        SystemSoundSpec(1004, "unlock", .inputFeedback, peak: -8.6, lufs: -30.0, truePeak: -8.6, "A lighter latch opening: the screen unlocked", SoundDesigns.unlock),
        SystemSoundSpec(1005, "camera-shutter", .inputFeedback, peak: -9.6, lufs: -30.0, truePeak: -9.6, "A mechanical camera shutter opening and closing", SoundDesigns.cameraShutter),
        SystemSoundSpec(1006, "sent", .notification, peak: -20.8, lufs: -26.0, truePeak: -20.8, "A rising swoosh: message sent", SoundDesigns.sent),
        SystemSoundSpec(1007, "received", .notification, peak: -15.1, lufs: -26.0, truePeak: -15.1, "A falling swoop onto a soft chime: message received", SoundDesigns.received),
        SystemSoundSpec(1008, "alarm", .alarm, peak: -9.7, lufs: -14.0, truePeak: -9.7, "Three bursts of four quick beeps: an alarm or timer", SoundDesigns.alarm),
        SystemSoundSpec(1009, "low-power", .alarm, peak: -3.0, lufs: -14.0, truePeak: -3.0, "A slow tone falling an octave: battery low", SoundDesigns.lowPower),
        SystemSoundSpec(1010, "bell", .dialog, peak: -8.5, lufs: -24.0, truePeak: -8.5, "A warm struck bell: the generic alert", SoundDesigns.bell),
        SystemSoundSpec(1011, "message-new-instant", .notification, peak: -16.5, lufs: -26.0, truePeak: -16.5, "Two glass notes rising a fourth: new instant message", SoundDesigns.messageNewInstant),
        SystemSoundSpec(1012, "dialog-warning", .dialog, peak: -14.5, lufs: -24.0, truePeak: -14.5, "Two firm hollow notes: a warning needs attention", SoundDesigns.dialogWarning),
        SystemSoundSpec(1013, "dialog-error", .alarm, peak: -5.7, lufs: -14.0, truePeak: -5.7, "Two hollow notes falling a minor third: an error", SoundDesigns.dialogError),
        SystemSoundSpec(1014, "dialog-information", .dialog, peak: -12.0, lufs: -24.0, truePeak: -12.0, "A single soft marimba note: information", SoundDesigns.dialogInformation),
        SystemSoundSpec(1015, "complete", .notification, peak: -15.8, lufs: -26.0, truePeak: -15.8, "A quick rising major arpeggio: task complete", SoundDesigns.complete),
        SystemSoundSpec(1016, "device-added", .notification, peak: -14.0, lufs: -26.0, truePeak: -14.0, "Two marimba notes rising a fourth: device connected", SoundDesigns.deviceAdded),
        SystemSoundSpec(1017, "device-removed", .notification, peak: -13.7, lufs: -26.0, truePeak: -13.7, "Two marimba notes falling a fourth: device disconnected", SoundDesigns.deviceRemoved),
        SystemSoundSpec(1018, "message-new-email", .notification, peak: -16.0, lufs: -26.0, truePeak: -16.0, "A chime falling a fifth: new email", SoundDesigns.messageNewEmail),
        SystemSoundSpec(1019, "power-plug", .notification, peak: -14.2, lufs: -26.0, truePeak: -14.2, "A click and a tone rising a fifth: charger connected", SoundDesigns.powerPlug),
        SystemSoundSpec(1020, "power-unplug", .notification, peak: -14.5, lufs: -26.0, truePeak: -14.5, "A click and a tone falling a fifth: charger disconnected", SoundDesigns.powerUnplug),
        SystemSoundSpec(1021, "screen-capture", .inputFeedback, peak: -9.7, lufs: -30.0, truePeak: -9.7, "A quick, light shutter snap: screenshot taken", SoundDesigns.screenCapture),
        SystemSoundSpec(1022, "audio-volume-change", .inputFeedback, peak: -12.3, lufs: -30.0, truePeak: -12.3, "A short soft pop: volume changed", SoundDesigns.audioVolumeChange),
        SystemSoundSpec(1023, "service-login", .notification, peak: -17.4, lufs: -26.0, truePeak: -17.4, "A warm rising four-note chime: logged in", SoundDesigns.serviceLogin),
        SystemSoundSpec(1024, "service-logout", .notification, peak: -17.2, lufs: -26.0, truePeak: -17.2, "The login chime descending: logged out", SoundDesigns.serviceLogout),
        SystemSoundSpec(1025, "trash-empty", .notification, peak: -11.6, lufs: -26.0, truePeak: -11.5, "Paper crumpling into the bin: trash emptied", SoundDesigns.trashEmpty),
        SystemSoundSpec(1026, "suspend-error", .alarm, peak: -6.8, lufs: -14.0, truePeak: -6.8, "A short low double buzz: could not suspend", SoundDesigns.suspendError),
        SystemSoundSpec(1027, "button-pressed", .inputFeedback, peak: -11.1, lufs: -30.0, truePeak: -11.1, "A crisp, tiny tick for on-screen buttons", SoundDesigns.buttonPressed),
        SystemSoundSpec(1028, "dialog-question", .dialog, peak: -13.8, lufs: -24.0, truePeak: -13.8, "Two chime notes rising a sixth: a question", SoundDesigns.dialogQuestion),
    ]

    /// The sound called `name`, or nil.
    public static func sound(named name: String) -> SystemSoundSpec? { all.first { $0.name == name } }

    /// The sound numbered `id`, or nil.
    public static func sound(id: Int) -> SystemSoundSpec? { all.first { $0.id == id } }
}
