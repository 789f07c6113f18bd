import Foundation
import SFX

/// The fields of a play that place it in the world and filter it, and of the `filter` request
/// (docs/PROTOCOL.md), read in one place so that the daemon and the `sfx` command that writes
/// them agree:
///
/// - `position=X,Y,Z`: a positional play at that point (world units; the daemon's listener is
///   at the origin facing −z, y up), with the default source (inverse clamped distance from 1
///   unit, no cone). A positional play ignores `pan`.
/// - `filter=lowpass|highpass|bandpass|highshelf` (or `off`), `cutoff=HZ` (required with a
///   filter; the centre of a band-pass), `q=Q` (0.7071; a high shelf's slope, 1), `gain=G`
///   (the filtered path's linear gain, 1; a high shelf's gain above the cutoff). The ranges are
///   `SettingLimits`'.
///
/// Every value out of form or range is one line that names the field, what was given and what
/// it takes.
public enum WorldFields {
    /// The filter kinds as the protocol and the command spell them.
    public static let filterKinds: [(name: String, kind: FilterKind)] = [
        ("lowpass", .lowPass), ("highpass", .highPass), ("bandpass", .bandPass), ("highshelf", .highShelf),
    ]

    /// The protocol's name of a filter kind.
    public static func name(of kind: FilterKind) -> String {
        filterKinds.first { $0.kind == kind }?.name ?? "lowpass"
    }

    /// `text` as three finite coordinates `X,Y,Z` (spaces around them allowed), or nil.
    public static func point(_ text: String) -> Vector3? {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var values: [Float] = []
        for part in parts {
            guard let value = Double(part.trimmingCharacters(in: .whitespaces)), value.isFinite,
                  abs(value) <= Double(Float.greatestFiniteMagnitude) else { return nil }
            values.append(Float(value))
        }
        return Vector3(values[0], values[1], values[2])
    }

    /// A point as the protocol writes it (`1.5,0.0,-2.0`).
    public static func text(of point: Vector3) -> String { "\(point.x),\(point.y),\(point.z)" }

    /// The play's `position=`, or nil when absent.
    public static func position(_ fields: Fields) throws(FieldError) -> Vector3? {
        guard let text = fields["position"] else { return nil }
        guard let point = point(text) else {
            throw FieldError("position=\(text) is not a point X,Y,Z (three finite numbers, such as 2,0,-1); give position=X,Y,Z")
        }
        return point
    }

    /// What `filter=` asks for: nil when the fields name no filter, `.some(nil)` for `filter=off`.
    public static func filter(_ fields: Fields) throws(FieldError) -> FilterSettings?? {
        guard let name = fields["filter"] else {
            if let key = ["cutoff", "q", "gain"].first(where: { fields[$0] != nil }) {
                throw FieldError("\(key)= belongs to a filter: give filter=\(filterKinds.map(\.name).joined(separator: "|")) with it")
            }
            return nil
        }
        if name == "off" { return .some(nil) }
        guard let kind = filterKinds.first(where: { $0.name == name })?.kind else {
            throw FieldError("filter=\(name) is not a filter; give filter=\(filterKinds.map(\.name).joined(separator: "|")) or filter=off")
        }
        guard let cutoff = try number(fields, "cutoff", in: SettingLimits.filterCutoff) else {
            throw FieldError("filter=\(name) needs cutoff=HZ (\(SettingLimits.filterCutoff.lowerBound) to \(SettingLimits.filterCutoff.upperBound)); give its frequency")
        }
        let shelf = kind == .highShelf
        let q = try number(fields, "q", in: shelf ? SettingLimits.shelfSlope : SettingLimits.filterQ) ?? (shelf ? 1 : 0.7071)
        let gain = try number(fields, "gain", in: SettingLimits.filterGain) ?? 1
        return .some(FilterSettings(kind: kind, cutoff: cutoff, q: q, gain: gain))
    }

    /// The fields that ask for `settings` (none for nil).
    public static func fields(of settings: FilterSettings?) -> [String: String] {
        guard let settings else { return [:] }
        return ["filter": name(of: settings.kind), "cutoff": "\(settings.cutoff)", "q": "\(settings.q)", "gain": "\(settings.gain)"]
    }

    /// A group by name (`effects`, `ui`, `alerts`, `music`) or number (0–7).
    public static func group(_ fields: Fields) throws(FieldError) -> SoundGroup? {
        guard let text = fields["group"] else { return nil }
        let named: [SoundGroup] = [.effects, .ui, .alerts, .music]
        if let group = named.first(where: { $0.description == text }) { return group }
        if let index = UInt8(text), let group = SoundGroup(rawValue: index) { return group }
        throw FieldError("group=\(text) is not a group; give effects, ui, alerts, music or a number from 0 to \(SoundGroup.count - 1)")
    }

    static func number(_ fields: Fields, _ key: String, in range: ClosedRange<Float>) throws(FieldError) -> Float? {
        guard let text = fields[key] else { return nil }
        // Compared as the Float the mixer takes: 0.1 typed is SettingLimits' 0.1, not below it.
        guard let value = Double(text), range.contains(Float(value)) else {
            throw FieldError("\(key)=\(text) is not a number from \(range.lowerBound) to \(range.upperBound); give one in range")
        }
        return Float(value)
    }
}

/// A field out of form or range: the request's one-line error.
public struct FieldError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
