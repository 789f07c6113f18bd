/// A number given to the engine that it does not accept. Its description is one line that names
/// the setting, the value given and the values allowed.
public enum SettingError: Error, CustomStringConvertible, Sendable, Hashable {
    /// `setting` (its name as written in code: `output.periodFrames`, `fade`, `volume`…) was
    /// given `value`; `allowed` says what it may be.
    case outOfRange(setting: String, value: String, allowed: String)

    public init(setting: String, value: String, allowed: String) {
        self = .outOfRange(setting: setting, value: value, allowed: allowed)
    }

    /// The setting's name as it is written in code (`output.periodFrames`, `fade`, `volume`…).
    public var setting: String {
        switch self { case .outOfRange(let setting, _, _): setting }
    }

    public var value: String {
        switch self { case .outOfRange(_, let value, _): value }
    }

    public var allowed: String {
        switch self { case .outOfRange(_, _, let allowed): allowed }
    }

    public var description: String { "\(setting) \(value) is out of range: use \(allowed)" }

    /// Throws unless `value` lies in `range`.
    package static func check(_ setting: String, _ value: Int, in range: ClosedRange<Int>) throws(SettingError) {
        guard range.contains(value) else {
            throw SettingError(setting: setting, value: "\(value)", allowed: "\(range.lowerBound)…\(range.upperBound)")
        }
    }

    /// Throws unless `value` is a number (not NaN, not infinite) in `range`.
    package static func check(_ setting: String, _ value: Float, in range: ClosedRange<Float>) throws(SettingError) {
        guard value.isFinite, range.contains(value) else {
            throw SettingError(setting: setting, value: "\(value)", allowed: "a number from \(range.lowerBound) to \(range.upperBound)")
        }
    }

    /// Throws unless `value` lies in `range`.
    package static func check(_ setting: String, _ value: Duration, in range: ClosedRange<Duration>) throws(SettingError) {
        guard range.contains(value) else {
            throw SettingError(setting: setting, value: "\(value)", allowed: "\(range.lowerBound) to \(range.upperBound)")
        }
    }
}
