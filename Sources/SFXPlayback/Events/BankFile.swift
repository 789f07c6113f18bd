import FoundationEssentials
import SFXSystem
import Glibc
import SFXCore
import SFXMedia

/// A problem in a bank file: the file, the line (1-based; 0 when the file could not be read)
/// and what is wrong with which key and how to fix it. Its description is one line,
/// `footsteps.json:12: event "step": "pitch" must be …`.
public struct BankError: Error, Sendable, Hashable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var reason: String

    public init(file: String, line: Int, reason: String) {
        self.file = file
        self.line = line
        self.reason = reason
    }

    public var description: String { line > 0 ? "\(file):\(line): \(reason)" : "\(file): \(reason)" }
}

/// A bank file read and checked, before any sound is loaded: its events with their sounds as
/// files (see docs/banks.md for the schema).
public struct BankFile: Sendable {
    public struct Event: Sendable {
        public var name: String
        public var sounds: [URL]
        /// The line of each sound's path in the file (for errors in loading it).
        public var soundLines: [Int]
        public var choose: SoundEvent.Selection = .shuffle
        public var pitch: ClosedRange<Float> = 0...0
        public var volume: ClosedRange<Float> = 0...0
        public var cooldown: Duration = .zero
        public var maxInstances = 0
        public var priority = VoicePriority.normal
        public var group = SoundGroup.effects
        public var position: Vector3?
        public var normalize: LoudnessNormalization?
        public var seed: UInt64 = 0x5f3759df
    }

    /// A ducking rule of the bank (`SoundEngine.setDucking`): while any voice of `trigger`
    /// plays, `target` is `decibels` lower, reached over `attack` and given back over `release`.
    public struct DuckingRule: Sendable, Hashable {
        public var trigger: SoundGroup
        public var target: SoundGroup
        public var decibels: Float
        public var attack: Duration = .milliseconds(20)
        public var release: Duration = .milliseconds(300)
    }

    public let url: URL
    /// Events in the order of their names.
    public let events: [Event]
    /// The bank's ducking rules, one per trigger group, in file order.
    public let ducking: [DuckingRule]

    static let topKeys: Set<String> = ["events", "normalize", "ducking"]
    static let duckingKeys: Set<String> = ["trigger", "target", "by", "attack", "release"]
    static let eventKeys: Set<String> = ["sounds", "choose", "pitch", "volume", "cooldown", "maxInstances",
                                         "priority", "group", "position", "normalize", "seed"]
    static let groups = ["effects": SoundGroup.effects, "ui": .ui, "alerts": .alerts, "music": .music]
    static let priorities = ["low": VoicePriority.low, "normal": .normal, "high": .high, "critical": .critical]

    /// Reads and checks `url`; throws every problem found (at least one), in file order.
    public init(contentsOf url: URL) throws(BankErrors) {
        let file = url.lastPathComponent
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw BankErrors([BankError(file: file, line: 0, reason: "cannot be read (\(errorText(error))): check the path and its permissions")])
        }
        let text = String(decoding: data, as: UTF8.self)
        let locator = KeyLocator(text: text)
        let root: Any
        do { root = try JSONValue.parse(data) } catch {
            throw BankErrors([BankError(file: file, line: error.offset == 0 ? 1 : locator.line(at: error.offset),
                                        reason: "is not valid JSON (\(error.message)): fix the syntax there")])
        }
        var errors: [BankError] = []
        func fail(_ line: Int, _ reason: String) { errors.append(BankError(file: file, line: line, reason: reason)) }
        guard let top = root as? [String: Any] else {
            throw BankErrors([BankError(file: file, line: 1, reason: "must be a JSON object with an \"events\" object")])
        }
        for key in top.keys.sorted() where !Self.topKeys.contains(key) {
            fail(locator.line(of: key), "unknown key \"\(key)\": use \"events\", \"normalize\" or \"ducking\"")
        }
        var bankNormalize: LoudnessNormalization?
        if let value = top["normalize"] {
            if let lufs = Self.number(value), (-70.0...0).contains(lufs) {
                bankNormalize = LoudnessNormalization(target: lufs)
            } else {
                fail(locator.line(of: "normalize"), "\"normalize\" must be a loudness in LUFS from -70 to 0, such as -23")
            }
        }
        let ducking = Self.ducking(top["ducking"], locator: locator, fail: fail)
        var events: [Event] = []
        let eventsStart = locator.offset(of: "events")
        if let list = top["events"] as? [String: Any] {
            for name in list.keys.sorted() {
                let at = locator.offset(of: name, after: eventsStart)
                let here = locator.line(at: at)
                func line(_ key: String) -> Int { locator.line(at: locator.offset(of: key, after: at)) }
                guard let body = list[name] as? [String: Any] else {
                    fail(here, "event \"\(name)\" must be an object with \"sounds\"")
                    continue
                }
                var event = Event(name: name, sounds: [], soundLines: [])
                event.normalize = bankNormalize
                for key in body.keys.sorted() where !Self.eventKeys.contains(key) {
                    fail(line(key), "event \"\(name)\": unknown key \"\(key)\": use one of \(Self.eventKeys.sorted().joined(separator: ", "))")
                }
                let prefix = "event \"\(name)\": "
                if let paths = body["sounds"] as? [String], !paths.isEmpty, !paths.contains(where: \.isEmpty) {
                    let base = url.deletingLastPathComponent()
                    var from = locator.offset(of: "sounds", after: at)
                    for path in paths {
                        event.sounds.append(path.hasPrefix("/") ? URL(fileURLWithPath: path) : base.appending(path: path))
                        from = locator.offset(ofString: path, after: from)
                        event.soundLines.append(locator.line(at: from))
                    }
                } else {
                    fail(body["sounds"] == nil ? here : line("sounds"),
                         prefix + "\"sounds\" must be a list of one or more file paths (relative to the bank), such as [\"step1.wav\"]")
                }
                if let value = body["choose"] {
                    if let raw = value as? String, let choose = SoundEvent.Selection(rawValue: raw) { event.choose = choose }
                    else { fail(line("choose"), prefix + "\"choose\" must be \"random\", \"roundRobin\" or \"shuffle\"") }
                }
                for (key, limits) in [("pitch", SoundEvent.pitchRange), ("volume", SoundEvent.volumeRange)] {
                    guard let value = body[key] else { continue }
                    let unit = key == "pitch" ? "semitones" : "dB"
                    if let range = Self.range(value, in: limits) {
                        if key == "pitch" { event.pitch = range } else { event.volume = range }
                    } else {
                        fail(line(key), prefix + "\"\(key)\" must be a number or [low, high] in \(unit) from \(Int(limits.lowerBound)) to \(Int(limits.upperBound)), low ≤ high")
                    }
                }
                if let value = body["cooldown"] {
                    if let ms = Self.number(value), (0.0...3_600_000).contains(ms) { event.cooldown = .microseconds(Int64(ms * 1000)) }
                    else { fail(line("cooldown"), prefix + "\"cooldown\" must be milliseconds from 0 to 3600000, such as 80") }
                }
                if let value = body["maxInstances"] {
                    if let n = Self.integer(value), (0...4096).contains(n) { event.maxInstances = n }
                    else { fail(line("maxInstances"), prefix + "\"maxInstances\" must be a whole number from 0 (no cap) to 4096") }
                }
                if let value = body["priority"] {
                    if let raw = value as? String, let p = Self.priorities[raw] { event.priority = p }
                    else if let n = Self.integer(value), (0...255).contains(n) { event.priority = VoicePriority(rawValue: UInt8(n)) }
                    else { fail(line("priority"), prefix + "\"priority\" must be \"low\", \"normal\", \"high\", \"critical\" or 0…255") }
                }
                if let value = body["group"] {
                    if let raw = value as? String, let g = Self.groups[raw] { event.group = g }
                    else if let n = Self.integer(value), let g = SoundGroup(rawValue: UInt8(clamping: n)), n >= 0 { event.group = g }
                    else { fail(line("group"), prefix + "\"group\" must be \"effects\", \"ui\", \"alerts\", \"music\" or 0…7") }
                }
                if let value = body["position"] {
                    if let xyz = value as? [Any], xyz.count == 3, let x = Self.number(xyz[0]), let y = Self.number(xyz[1]),
                       let z = Self.number(xyz[2]), [x, y, z].allSatisfy({ abs($0) < 1e9 }) {
                        event.position = Vector3(Float(x), Float(y), Float(z))
                    } else { fail(line("position"), prefix + "\"position\" must be [x, y, z], three numbers") }
                }
                if let value = body["normalize"] {
                    if let lufs = Self.number(value), (-70.0...0).contains(lufs) { event.normalize = LoudnessNormalization(target: lufs) }
                    else if value is JSONNull { event.normalize = nil }
                    else { fail(line("normalize"), prefix + "\"normalize\" must be a loudness in LUFS from -70 to 0, or null for none") }
                }
                if let value = body["seed"] {
                    if let n = Self.integer(value), n >= 0 { event.seed = UInt64(n) }
                    else { fail(line("seed"), prefix + "\"seed\" must be a whole number of 0 or more") }
                }
                events.append(event)
            }
        } else {
            fail(top["events"] == nil ? 1 : locator.line(at: eventsStart),
                 "\"events\" must be an object of events by name, such as {\"step\": {\"sounds\": [\"step1.wav\"]}}")
        }
        guard errors.isEmpty else { throw BankErrors(errors.sorted { $0.line < $1.line }) }
        self.url = url
        self.events = events
        self.ducking = ducking
    }

    /// The `"ducking"` list: `[{"trigger": "ui", "target": "music", "by": -9, "attack": 20, "release": 300}]`.
    private static func ducking(_ value: Any?, locator: KeyLocator, fail: (Int, String) -> Void) -> [DuckingRule] {
        guard let value else { return [] }
        let start = locator.offset(of: "ducking")
        guard let list = value as? [Any] else {
            fail(locator.line(at: start), "\"ducking\" must be a list of rules, such as [{\"trigger\": \"ui\", \"target\": \"music\", \"by\": -9}]")
            return []
        }
        var rules: [DuckingRule] = []
        var at = start
        for (n, item) in list.enumerated() {
            // Each rule's line: its own "trigger" key after the previous rule's.
            at = locator.offset(of: "trigger", after: at + 1)
            let line = locator.line(at: at)
            let prefix = "ducking rule \(n + 1): "
            guard let body = item as? [String: Any] else {
                fail(line, prefix + "must be an object with \"trigger\", \"target\" and \"by\"")
                continue
            }
            for key in body.keys.sorted() where !duckingKeys.contains(key) {
                fail(line, prefix + "unknown key \"\(key)\": use one of \(duckingKeys.sorted().joined(separator: ", "))")
            }
            func group(_ key: String) -> SoundGroup? {
                guard let value = body[key] else {
                    fail(line, prefix + "\"\(key)\" is required: a group, \"effects\", \"ui\", \"alerts\", \"music\" or 0…7")
                    return nil
                }
                if let raw = value as? String, let g = groups[raw] { return g }
                if let n = integer(value), n >= 0, let g = SoundGroup(rawValue: UInt8(clamping: n)) { return g }
                fail(line, prefix + "\"\(key)\" must be \"effects\", \"ui\", \"alerts\", \"music\" or 0…7")
                return nil
            }
            let trigger = group("trigger"), target = group("target")
            var rule = DuckingRule(trigger: trigger ?? .effects, target: target ?? .music, decibels: 0)
            if let by = body["by"].flatMap(number), (-96.0...0).contains(by) { rule.decibels = Float(by) }
            else { fail(line, prefix + "\"by\" must be decibels from -96 to 0, such as -9 (0 removes the trigger's rule)") }
            for key in ["attack", "release"] {
                guard let value = body[key] else { continue }
                let limit = SettingLimits.fadeMilliseconds.upperBound
                if let ms = number(value), ms >= 0, ms <= Double(limit) {
                    let duration = Duration.microseconds(Int64((ms * 1000).rounded()))
                    if key == "attack" { rule.attack = duration } else { rule.release = duration }
                } else { fail(line, prefix + "\"\(key)\" must be milliseconds from 0 to \(limit), such as \(key == "attack" ? 20 : 300)") }
            }
            guard trigger != nil, target != nil else { continue }
            if trigger == target { fail(line, prefix + "a group cannot duck itself: give another \"target\""); continue }
            if rules.contains(where: { $0.trigger == rule.trigger }) {
                fail(line, prefix + "a second rule for trigger group \(rule.trigger): the mixer keeps one per trigger, merge them")
                continue
            }
            rules.append(rule)
        }
        return rules
    }

    static func number(_ value: Any) -> Double? {
        guard let d = value as? Double, d.isFinite else { return nil }   // true and false are Bool: not numbers
        return d
    }

    static func integer(_ value: Any) -> Int? {
        guard let d = number(value), d == d.rounded(), abs(d) < 1e15 else { return nil }
        return Int(d)
    }

    static func range(_ value: Any, in limits: ClosedRange<Float>) -> ClosedRange<Float>? {
        let pair: [Double]
        if let one = number(value) { pair = [one, one] }
        else if let list = value as? [Any], list.count == 2, let a = number(list[0]), let b = number(list[1]) { pair = [a, b] }
        else { return nil }
        let lo = Float(pair[0]), hi = Float(pair[1])
        guard lo <= hi, limits.contains(lo), limits.contains(hi) else { return nil }
        return lo...hi
    }
}

/// Every problem of a bank file, one `BankError` each.
public struct BankErrors: Error, Sendable, CustomStringConvertible {
    public var errors: [BankError]
    public init(_ errors: [BankError]) { self.errors = errors }
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}

/// Finds where a key stands in a JSON text, to name its line: JSONDecoder gives values, not
/// places.
struct KeyLocator {
    let bytes: [UInt8]

    init(text: String) { bytes = Array(text.utf8) }

    /// The offset of `"key"` followed by a colon, at or after `start`; `start` if absent.
    func offset(of key: String, after start: Int = 0) -> Int {
        let quoted = Array("\"\(key)\"".utf8)
        var i = max(0, start)
        while let hit = find(quoted, from: i) {
            var j = hit + quoted.count
            while j < bytes.count, [0x20, 0x09, 0x0a, 0x0d].contains(bytes[j]) { j += 1 }
            if j < bytes.count, bytes[j] == UInt8(ascii: ":") { return hit }
            i = hit + 1
        }
        return start
    }

    /// The offset of the string value `"text"` at or after `start`; `start` if absent.
    func offset(ofString text: String, after start: Int) -> Int {
        find(Array("\"\(text)\"".utf8), from: start) ?? start
    }

    func line(of key: String) -> Int { line(at: offset(of: key)) }

    func line(at offset: Int) -> Int {
        1 + bytes.prefix(min(offset, bytes.count)).reduce(0) { $0 + ($1 == 0x0a ? 1 : 0) }
    }

    private func find(_ needle: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
        var i = start
        while i <= bytes.count - needle.count {
            if bytes[i] == needle[0], Array(bytes[i..<i + needle.count]) == needle { return i }
            i += 1
        }
        return nil
    }
}
