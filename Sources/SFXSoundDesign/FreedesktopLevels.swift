/// One sound of the freedesktop theme as libebur128 measured it (the way `SFXMedia.Loudness`
/// measures: integrated loudness from 400 ms up, the loudest 400 ms window below, a mono file
/// counted on both speakers), and the sfx loudness class its event belongs to.
public struct FreedesktopLevel: Sendable, Hashable {
    /// The sound's name (its file is `<name>.oga`).
    public let name: String
    /// The class its event has in sfx; nil for the speaker-test voices and the in-call tones,
    /// which are not events.
    public let loudnessClass: LoudnessClass?
    /// Its length in seconds, to the hundredth.
    public let seconds: Double
    /// Its loudness in LUFS, to the tenth.
    public let lufs: Double
    /// Its true peak in dBTP, to the tenth.
    public let truePeak: Double

    init(_ name: String, _ loudnessClass: LoudnessClass?, seconds: Double, lufs: Double, truePeak: Double) {
        self.name = name
        self.loudnessClass = loudnessClass
        self.seconds = seconds
        self.lufs = lufs
        self.truePeak = truePeak
    }
}

/// The levels of the freedesktop sound theme that sfx's theme inherits from, measured once
/// (Debian 12's sound-theme-freedesktop 0.8, `/usr/share/sounds/freedesktop/stereo/*.oga`) to set
/// the class targets against. `FreedesktopLevelsTests` measures the installed files again and
/// fails when a figure here is off by more than 0.1.
public enum FreedesktopLevels {
    /// The installed theme's sound directory.
    public static let directory = "/usr/share/sounds/freedesktop/stereo"

    /// Every sound of the theme, by name.
    public static let all: [FreedesktopLevel] = [
        FreedesktopLevel("alarm-clock-elapsed", .alarm, seconds: 6.13, lufs: -9.3, truePeak: -5.7),
        FreedesktopLevel("audio-channel-front-center", nil, seconds: 1.43, lufs: -18.9, truePeak: -6.8),
        FreedesktopLevel("audio-channel-front-left", nil, seconds: 1.48, lufs: -18.5, truePeak: -6.0),
        FreedesktopLevel("audio-channel-front-right", nil, seconds: 1.53, lufs: -18.7, truePeak: -6.0),
        FreedesktopLevel("audio-channel-rear-center", nil, seconds: 1.35, lufs: -16.4, truePeak: -5.8),
        FreedesktopLevel("audio-channel-rear-left", nil, seconds: 1.31, lufs: -18.7, truePeak: -6.0),
        FreedesktopLevel("audio-channel-rear-right", nil, seconds: 1.53, lufs: -17.6, truePeak: -6.6),
        FreedesktopLevel("audio-channel-side-left", nil, seconds: 1.40, lufs: -18.3, truePeak: -6.1),
        FreedesktopLevel("audio-channel-side-right", nil, seconds: 1.35, lufs: -19.1, truePeak: -5.9),
        FreedesktopLevel("audio-test-signal", nil, seconds: 1.41, lufs: -26.9, truePeak: -17.5),
        FreedesktopLevel("audio-volume-change", .inputFeedback, seconds: 0.07, lufs: -35.7, truePeak: -17.2),
        FreedesktopLevel("bell", .dialog, seconds: 0.14, lufs: -23.1, truePeak: -10.3),
        FreedesktopLevel("camera-shutter", .inputFeedback, seconds: 0.87, lufs: -23.9, truePeak: -0.4),
        FreedesktopLevel("complete", .notification, seconds: 1.09, lufs: -17.1, truePeak: -1.5),
        FreedesktopLevel("device-added", .notification, seconds: 0.22, lufs: -32.8, truePeak: -10.9),
        FreedesktopLevel("device-removed", .notification, seconds: 0.22, lufs: -32.9, truePeak: -11.1),
        FreedesktopLevel("dialog-error", .alarm, seconds: 0.50, lufs: -27.6, truePeak: -20.3),
        FreedesktopLevel("dialog-information", .dialog, seconds: 0.06, lufs: -32.7, truePeak: -13.5),
        FreedesktopLevel("dialog-warning", .dialog, seconds: 0.50, lufs: -27.6, truePeak: -20.3),
        FreedesktopLevel("message-new-instant", .notification, seconds: 1.03, lufs: -30.4, truePeak: -15.4),
        FreedesktopLevel("message", .notification, seconds: 0.31, lufs: -25.1, truePeak: -5.9),
        FreedesktopLevel("network-connectivity-established", .notification, seconds: 0.22, lufs: -32.8, truePeak: -10.9),
        FreedesktopLevel("network-connectivity-lost", .notification, seconds: 0.22, lufs: -32.9, truePeak: -11.1),
        FreedesktopLevel("phone-incoming-call", .alarm, seconds: 1.46, lufs: -6.8, truePeak: -2.8),
        FreedesktopLevel("phone-outgoing-busy", nil, seconds: 2.88, lufs: -14.9, truePeak: -10.5),
        FreedesktopLevel("phone-outgoing-calling", nil, seconds: 1.19, lufs: -13.0, truePeak: -10.7),
        FreedesktopLevel("power-plug", .notification, seconds: 0.22, lufs: -32.8, truePeak: -10.9),
        FreedesktopLevel("power-unplug", .notification, seconds: 0.22, lufs: -32.9, truePeak: -11.1),
        FreedesktopLevel("screen-capture", .inputFeedback, seconds: 0.87, lufs: -23.9, truePeak: -0.4),
        FreedesktopLevel("service-login", .notification, seconds: 2.18, lufs: -17.5, truePeak: -8.5),
        FreedesktopLevel("service-logout", .notification, seconds: 1.77, lufs: -18.7, truePeak: -8.4),
        FreedesktopLevel("suspend-error", .alarm, seconds: 1.19, lufs: -2.0, truePeak: -0.9),
        FreedesktopLevel("trash-empty", .notification, seconds: 1.13, lufs: -20.7, truePeak: -3.0),
        FreedesktopLevel("window-attention", .dialog, seconds: 0.50, lufs: -27.6, truePeak: -20.3),
        FreedesktopLevel("window-question", .dialog, seconds: 0.50, lufs: -27.6, truePeak: -20.3),
    ]

    /// The sound called `name`, or nil.
    public static func level(named name: String) -> FreedesktopLevel? { all.first { $0.name == name } }
}
