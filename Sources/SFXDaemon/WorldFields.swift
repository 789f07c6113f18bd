import FoundationEssentials
import SFXSystem
import Glibc
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
            guard let value = Double(part.trimmed), value.isFinite,
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

    /// The play's send to an effect bus: `send=LEVEL` (0–1, linear) to `bus=N` (0–3, default 0);
    /// nil when there is no `send=`.
    public static func send(_ fields: Fields) throws(FieldError) -> (bus: Int, level: Float)? {
        guard let level = try number(fields, "send", in: SettingLimits.send) else {
            if fields["bus"] != nil { throw FieldError("bus= belongs to a send: give send=LEVEL (0 to 1) with it") }
            return nil
        }
        return (try bus(fields) ?? 0, level)
    }

    /// `bus=`, 0–3, or nil when absent.
    static func bus(_ fields: Fields) throws(FieldError) -> Int? {
        guard let text = fields["bus"] else { return nil }
        guard let bus = Int(text), SettingLimits.effectBus.contains(bus) else {
            throw FieldError("bus=\(text) is not an effect bus; give a number from \(SettingLimits.effectBus.lowerBound) to \(SettingLimits.effectBus.upperBound)")
        }
        return bus
    }

    /// A reverb preset by name (`ReverbSettings.presets`, any case, - and _ ignored: living-room).
    public static func preset(named name: String) -> ReverbSettings? {
        func key(_ text: String) -> String { text.lowercased().filter { $0 != "-" && $0 != "_" } }
        return ReverbSettings.presets.first { key($0.name) == key(name) }?.settings
    }

    public static var presetNames: String { ReverbSettings.presets.map(\.name).joined(separator: ", ") }

    /// The echo's ranges, as `EchoSettings` documents them.
    public static let echoDelay: ClosedRange<Float> = 0.001...EchoSettings.maximumDelay
    public static let echoFeedback: ClosedRange<Float> = 0...0.95
    public static let echoWet: ClosedRange<Float> = 0...1
    public static let echoDamping: ClosedRange<Float> = 0...0.99

    /// The `effect` request: its bus (`bus=`, required), the effect (`effect=reverb` with
    /// `preset=NAME`, `effect=echo` with `delay=`, `feedback=`, `wet=`, `damping=`, or
    /// `effect=off`: nil) and the group it returns into (`group=`, effects).
    public static func effect(_ fields: Fields) throws(FieldError) -> (bus: Int, effect: Effect?, group: SoundGroup) {
        guard let bus = try bus(fields) else {
            throw FieldError("an effect request needs bus=N (\(SettingLimits.effectBus.lowerBound) to \(SettingLimits.effectBus.upperBound)); give the bus")
        }
        let group = try group(fields) ?? .effects
        switch fields["effect"] {
        case "off"?:
            return (bus, nil, group)
        case "reverb"?:
            let name = fields["preset"] ?? "room"
            guard let preset = preset(named: name) else {
                throw FieldError("preset=\(name) is not a reverb preset; give one of \(presetNames)")
            }
            return (bus, .reverb(preset), group)
        case "echo"?:
            guard let delay = try number(fields, "delay", in: echoDelay) else {
                throw FieldError("effect=echo needs delay=SECONDS (\(echoDelay.lowerBound) to \(echoDelay.upperBound)); give the time between taps")
            }
            return (bus, .echo(EchoSettings(delay: delay, feedback: try number(fields, "feedback", in: echoFeedback) ?? 0.4,
                                            wet: try number(fields, "wet", in: echoWet) ?? 0.5,
                                            damping: try number(fields, "damping", in: echoDamping) ?? 0.2)), group)
        case let other:
            throw FieldError("effect=\(other ?? "") is not an effect; give effect=reverb (preset=), effect=echo (delay=) or effect=off")
        }
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
