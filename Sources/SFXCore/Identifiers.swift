/// Names one playing sound. The caller picks the number (for instance from a counter) before it
/// sends the play command, so starting a sound needs no round trip to the real-time thread; the
/// same number then appears in `stop`, `setGain` and in the voice's terminal event.
///
/// A `VoiceID` must be unique among the voices a mixer is playing; a play command reusing the
/// ID of a voice that is still sounding is rejected with `.duplicateVoice`.
public struct VoiceID: RawRepresentable, Hashable, Sendable, BitwiseCopyable, CustomStringConvertible {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { "voice \(rawValue)" }
}

/// A bus that voices are mixed into, with its own smoothed gain and mute: one for interface
/// clicks, one for alerts, one for music, one for everything else. Turning the music down or
/// muting the interface sounds is one command, whatever is playing.
///
/// There are `SoundGroup.count` (8) groups, numbered 0…7; four are named. Groups are mixed in
/// index order, so the result does not depend on which group a voice is in beyond its gain.
public struct SoundGroup: RawRepresentable, Hashable, Sendable, BitwiseCopyable, CustomStringConvertible {
    /// How many groups every mixer has.
    public static let count = 8

    /// The group index, 0..<`SoundGroup.count`.
    public let rawValue: UInt8

    /// Fails for indexes of `SoundGroup.count` or more.
    public init?(rawValue: UInt8) {
        guard Int(rawValue) < SoundGroup.count else { return nil }
        self.rawValue = rawValue
    }

    private init(index: UInt8) { rawValue = index }

    /// Sound effects: the default group.
    public static let effects = SoundGroup(index: 0)
    /// Interface feedback: clicks, ticks, key presses.
    public static let ui = SoundGroup(index: 1)
    /// Alerts and notifications.
    public static let alerts = SoundGroup(index: 2)
    /// Music and long ambiences.
    public static let music = SoundGroup(index: 3)

    public var description: String {
        switch self {
        case .effects: "effects"
        case .ui: "ui"
        case .alerts: "alerts"
        case .music: "music"
        default: "group \(rawValue)"
        }
    }
}

/// How much a voice matters when the mixer runs out of voices.
///
/// When all voices are busy, a new voice takes the place of the lowest-priority playing voice
/// (the oldest of those if several tie), provided that voice's priority is not higher than the
/// new one's; otherwise the new voice is rejected. Any raw value 0…255 may be used; the named
/// levels leave room in between.
public struct VoicePriority: RawRepresentable, Hashable, Comparable, Sendable, BitwiseCopyable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let low = VoicePriority(rawValue: 64)
    public static let normal = VoicePriority(rawValue: 128)
    public static let high = VoicePriority(rawValue: 192)
    public static let critical = VoicePriority(rawValue: 255)

    public static func < (a: VoicePriority, b: VoicePriority) -> Bool { a.rawValue < b.rawValue }
}
