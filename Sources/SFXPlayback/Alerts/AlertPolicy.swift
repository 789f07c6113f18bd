import FoundationEssentials
import SFXSystem
import Glibc

/// When one of an alert's channels (sound, vibration, flash, caption) is used.
public enum AlertChannelRule: String, Sendable, CaseIterable {
    case never
    /// Only when the output is muted (or there is no usable output).
    case whenMuted = "when-muted"
    case always

    /// Whether the channel is used at this mute state.
    public func applies(muted: Bool) -> Bool {
        switch self {
        case .never: false
        case .whenMuted: muted
        case .always: true
        }
    }
}

/// How important an alert is; alerts below `AlertPolicy.quietHoursPriority` are captioned only
/// during the do-not-disturb window.
public enum AlertPriority: Int, Sendable, Comparable, CaseIterable {
    case low, normal, high, critical

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    public init?(name: String) {
        switch name {
        case "low": self = .low
        case "normal": self = .normal
        case "high": self = .high
        case "critical": self = .critical
        default: return nil
        }
    }

    public var name: String { ["low", "normal", "high", "critical"][rawValue] }
}

/// A do-not-disturb window in local time of day, from `start` (included) to `end` (excluded),
/// in minutes after midnight. A window whose end is before its start wraps past midnight
/// (22:00–07:00); start equal to end is the whole day.
public struct QuietHours: Sendable, Equatable {
    public var start: Int
    public var end: Int

    public init(start: Int, end: Int) {
        self.start = ((start % 1440) + 1440) % 1440
        self.end = ((end % 1440) + 1440) % 1440
    }

    /// Parses "22:00-07:30"; nil when it is not two HH:MM times joined by '-'.
    public init?(text: String) {
        let parts = text.split(separator: "-").map { $0.trimmed }
        guard parts.count == 2, let start = Self.minutes(parts[0]), let end = Self.minutes(parts[1]) else { return nil }
        self.init(start: start, end: end)
    }

    static func minutes(_ text: String) -> Int? {
        let fields = text.split(separator: ":")
        guard fields.count == 2, let hours = Int(fields[0]), let minutes = Int(fields[1]),
              (0..<24).contains(hours), (0..<60).contains(minutes) else { return nil }
        return hours * 60 + minutes
    }

    /// Whether `minute` (minutes after local midnight) is inside the window.
    public func contains(minute: Int) -> Bool {
        if start == end { return true }
        return start < end ? (start..<end).contains(minute) : (minute >= start || minute < end)
    }

    /// Whether `date` falls inside the window in `calendar`'s time zone (the local one by default).
    public func contains(_ date: Date, calendar: Calendar = .current) -> Bool {
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        return contains(minute: (parts.hour ?? 0) * 60 + (parts.minute ?? 0))
    }

    public var description: String {
        String(cFormat: "%02d:%02d-%02d:%02d", start / 60, start % 60, end / 60, end % 60)
    }
}

/// Which channels an alert uses: sound, vibration, a flash and a caption, each `.always`,
/// `.whenMuted` or `.never`, and an optional do-not-disturb window during which alerts below
/// `quietHoursPriority` are captioned only.
public struct AlertPolicy: Sendable, Equatable {
    /// Play the sound (when muted, playing is refused all the same: nothing would be heard).
    public var sound = AlertChannelRule.always
    public var vibrate = AlertChannelRule.whenMuted
    public var flash = AlertChannelRule.whenMuted
    public var caption = AlertChannelRule.always
    public var quietHours: QuietHours?
    /// Alerts at this priority or above still sound, vibrate and flash during `quietHours`.
    public var quietHoursPriority = AlertPriority.critical

    public init(sound: AlertChannelRule = .always, vibrate: AlertChannelRule = .whenMuted,
                flash: AlertChannelRule = .whenMuted, caption: AlertChannelRule = .always,
                quietHours: QuietHours? = nil, quietHoursPriority: AlertPriority = .critical) {
        self.sound = sound
        self.vibrate = vibrate
        self.flash = flash
        self.caption = caption
        self.quietHours = quietHours
        self.quietHoursPriority = quietHoursPriority
    }

    /// The policy the older `vibrate-with-alert` setting stands for.
    public init(vibration: AlertVibration) {
        self.init()
        vibrate = switch vibration {
        case .never: .never
        case .whenMuted: .whenMuted
        case .always: .always
        }
    }

    /// The channels to use for an alert of `priority` at `date`, with the output muted or not.
    public func channels(muted: Bool, priority: AlertPriority = .normal, at date: Date = Date(),
                         calendar: Calendar = .current) -> AlertChannels {
        if let quietHours, priority < quietHoursPriority, quietHours.contains(date, calendar: calendar) {
            return AlertChannels(sound: false, vibrate: false, flash: false, caption: true, quiet: true)
        }
        return AlertChannels(sound: sound.applies(muted: muted) && !muted, vibrate: vibrate.applies(muted: muted),
                             flash: flash.applies(muted: muted), caption: caption.applies(muted: muted), quiet: false)
    }
}

/// The channels one alert uses, as `AlertPolicy.channels` decides.
public struct AlertChannels: Sendable, Equatable {
    public var sound: Bool
    public var vibrate: Bool
    public var flash: Bool
    public var caption: Bool
    /// The do-not-disturb window held the alert to its caption.
    public var quiet: Bool

    public init(sound: Bool, vibrate: Bool, flash: Bool, caption: Bool, quiet: Bool = false) {
        self.sound = sound
        self.vibrate = vibrate
        self.flash = flash
        self.caption = caption
        self.quiet = quiet
    }
}

/// What `onAlert` receives for each alert: its caption, the sound's name and how it reached
/// the user.
public struct AlertNotice: Sendable, Equatable, CustomStringConvertible {
    /// The text to show: the caption given to `alert`, else one made from the sound's name.
    public var caption: String
    /// The sound's name (the theme name, as `sfx alert bell` gives it), or its id.
    public var sound: String
    public var heard: Bool
    public var felt: Bool
    public var flashed: Bool
    /// Whether the caption channel was on for this alert (per the policy).
    public var captioned: Bool
    /// The do-not-disturb window held the alert to its caption.
    public var quiet: Bool
    public var priority: AlertPriority

    /// "heard", "felt", "flashed" joined, or "none".
    public var reached: String {
        let ways = [heard ? "heard" : nil, felt ? "felt" : nil, flashed ? "flashed" : nil].compactMap { $0 }
        return ways.isEmpty ? "none" : ways.joined(separator: ",")
    }

    public var description: String { "\(caption) [\(sound): \(reached)\(quiet ? ", quiet hours" : "")]" }

    /// A caption from a theme name: "message-new-instant" → "Message new instant".
    public static func caption(forName name: String) -> String {
        let words = name.replacing("-", with: " ").replacing("_", with: " ")
        return words.prefix(1).uppercased() + words.dropFirst()
    }
}
