import SFXCore

/// A small command-line parser in swift-argument-parser's conventions, written here because
/// sfx depends on no Swift package outside the toolchain.
///
/// A subcommand declares its options and positionals as a `CommandSpec`; `ParsedArguments`
/// holds what the user typed. Usage errors are `UsageError`s: printed on stderr with the
/// subcommand's usage line, exit code 64 (EX_USAGE).

struct OptionSpec {
    /// Long name without the dashes, e.g. "output".
    let name: String
    /// One-letter short name, e.g. "o".
    let short: Character?
    /// Placeholder for the value ("SECONDS"); nil for a flag.
    let value: String?
    /// Whether the option may be given more than once (`--at 0 --at 0.5`).
    let repeatable: Bool
    /// The help line, made when shown: some list what they accept (the reverb presets), and
    /// building those lists at every command's start cost a play a tenth of a millisecond.
    private let makeHelp: @Sendable () -> String
    var help: String { makeHelp() }

    static func flag(_ name: String, short: Character? = nil, help: @autoclosure @escaping @Sendable () -> String) -> OptionSpec {
        OptionSpec(name: name, short: short, value: nil, repeatable: false, makeHelp: help)
    }

    static func option(_ name: String, short: Character? = nil, value: String, repeatable: Bool = false,
                       help: @autoclosure @escaping @Sendable () -> String) -> OptionSpec {
        OptionSpec(name: name, short: short, value: value, repeatable: repeatable, makeHelp: help)
    }

    var usage: String {
        let long = "--\(name)" + (value.map { " \($0)" } ?? "")
        return short.map { "-\($0), \(long)" } ?? "    \(long)"
    }
}

struct PositionalSpec {
    let name: String
    let help: String
    /// `min` values required, at most `max` (nil: unlimited).
    let min: Int
    let max: Int?
}

struct CommandSpec {
    let name: String
    let abstract: String
    let discussion: String
    /// Command lines that show the subcommand at work, one per line of help.
    var examples: [String] = []
    let positionals: [PositionalSpec]
    let options: [OptionSpec]

    var usageLine: String {
        var parts = ["sfx", name]
        if !options.isEmpty { parts.append("[options]") }
        for p in positionals {
            let one = p.name
            switch (p.min, p.max) {
            case (1, 1): parts.append(one)
            case (0, 1): parts.append("[\(one)]")
            case (0, _): parts.append("[\(one) …]")
            default: parts.append("\(one) …")
            }
        }
        return parts.joined(separator: " ")
    }

    /// Help in swift-argument-parser's layout, wrapped to `Help.width` columns.
    var help: String {
        var text = "OVERVIEW: " + Help.wrap(abstract, indent: 10).dropFirst(10) + "\n\nUSAGE: \(usageLine)\n"
        if !discussion.isEmpty { text += "\n" + Help.wrap(discussion, indent: 0) + "\n" }
        if !positionals.isEmpty {
            text += "\nARGUMENTS:\n"
            for p in positionals { text += Help.row("  " + p.name, p.help) }
        }
        text += "\nOPTIONS:\n"
        for o in options + [.flag("help", short: "h", help: "Show help information.")] {
            text += Help.row("  " + o.usage, o.help)
        }
        if !examples.isEmpty {
            text += "\nEXAMPLES:\n" + examples.map { "  \($0)\n" }.joined()
        }
        return text
    }
}

/// Help text layout: words wrapped at `width` columns, option help in a column of its own.
enum Help {
    static let width = 80
    /// Where option and argument help starts.
    static let column = 30

    /// `text` wrapped to `width`, every line indented by `indent` spaces.
    static func wrap(_ text: String, indent: Int, width: Int = Help.width) -> String {
        var lines: [String] = []
        var line = ""
        let pad = String(repeating: " ", count: indent)
        for word in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            if !line.isEmpty, indent + line.count + 1 + word.count > width {
                lines.append(pad + line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(pad + line) }
        return lines.joined(separator: "\n")
    }

    /// `left` then `help` wrapped in the help column; a `left` too wide for it puts the help on
    /// the next line.
    static func row(_ left: String, _ help: String, column: Int = Help.column) -> String {
        let wrapped = wrap(help, indent: column)
        if left.count + 2 <= column {
            return left + String(wrapped.dropFirst(left.count)) + "\n"
        }
        return left + "\n" + wrapped + "\n"
    }
}

/// A numeric option declared once: its spec and the range its value is checked against.
struct NumberOption {
    let spec: OptionSpec
    let range: ClosedRange<Double>

    init(spec: OptionSpec, range: ClosedRange<Double>) {
        self.spec = spec
        self.range = range
    }

    /// An option for one of `SettingLimits`' ranges.
    /// The bounds as their shortest decimals (Float's 0.1 is 0.10000000149 as a Double, which
    /// would refuse a typed 0.1).
    init(spec: OptionSpec, limits range: ClosedRange<Float>) {
        self.init(spec: spec, range: Double("\(range.lowerBound)")!...Double("\(range.upperBound)")!)
    }

    /// The value given, checked; nil when the option is absent.
    func read(_ arguments: ParsedArguments) throws(UsageError) -> Double? {
        try arguments.number(spec.name, in: range)
    }
}

/// A whole-number option declared once: its spec and its range.
struct IntegerOption {
    let spec: OptionSpec
    let range: ClosedRange<Int>

    func read(_ arguments: ParsedArguments) throws(UsageError) -> Int? {
        try arguments.integer(spec.name, in: range)
    }
}

/// Options several subcommands share, declared once.
enum CommonOptions {
    static let json = OptionSpec.flag("json", help: "Print JSON.")
    static let pan = NumberOption(spec: .option("pan", value: "PAN", help: "Pan, -1 (left) to 1 (right) (default 0)."), limits: SettingLimits.pan)
}

struct UsageError: Error, CustomStringConvertible {
    let message: String
    let command: CommandSpec?
    var description: String { message }
}

/// What the user typed, checked against a `CommandSpec`.
struct ParsedArguments {
    private(set) var positionals: [String] = []
    /// Every positional (option nil) and option value in the order typed.
    private(set) var ordered: [(option: String?, value: String)] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []
    let spec: CommandSpec

    /// Parses `arguments` (without the program and subcommand names). `--help` is reported as `helpRequested`.
    init(_ arguments: [String], spec: CommandSpec) throws(UsageError) {
        self.spec = spec
        var rest = arguments[...]
        var onlyPositionals = false
        while let arg = rest.popFirst() {
            if onlyPositionals || arg == "-" || !arg.hasPrefix("-") || Double(arg) != nil {
                positionals.append(arg)
                ordered.append((nil, arg))
                continue
            }
            if arg == "--" { onlyPositionals = true; continue }
            if arg == "--help" || arg == "-h" { flags.insert("help"); continue }
            var name: Substring
            var inlineValue: String?
            if arg.hasPrefix("--") {
                name = arg.dropFirst(2)
                if let eq = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: eq)...])
                    name = name[..<eq]
                }
            } else {
                guard arg.count == 2 else { throw UsageError(message: "unknown option '\(arg)'", command: spec) }
                name = arg.dropFirst()
            }
            // A long name first: `--q` is the filter's Q where there is one, `-q` always --quiet.
            let long = arg.hasPrefix("--") ? spec.options.first(where: { $0.name == name }) : nil
            guard let option = long ?? spec.options.first(where: { name.count == 1 && $0.short == name.first }) else {
                throw UsageError(message: "unknown option '\(arg)'", command: spec)
            }
            if let placeholder = option.value {
                guard let value = inlineValue ?? rest.popFirst() else {
                    throw UsageError(message: "missing value for '--\(option.name) \(placeholder)'", command: spec)
                }
                if !option.repeatable, values[option.name] != nil {
                    throw UsageError(message: "'--\(option.name)' given more than once", command: spec)
                }
                values[option.name, default: []].append(value)
                ordered.append((option.name, value))
            } else {
                if inlineValue != nil { throw UsageError(message: "'--\(option.name)' takes no value", command: spec) }
                flags.insert(option.name)
            }
        }
        if helpRequested { return }
        let minimum = spec.positionals.reduce(0) { $0 + $1.min }
        let maximum = spec.positionals.contains { $0.max == nil } ? Int.max : spec.positionals.reduce(0) { $0 + ($1.max ?? 0) }
        if positionals.count < minimum {
            let missing = spec.positionals.first { $0.min > 0 }?.name ?? "argument"
            throw UsageError(message: "missing expected argument '\(missing)'", command: spec)
        }
        if positionals.count > maximum {
            throw UsageError(message: "unexpected argument '\(positionals[maximum])'", command: spec)
        }
    }

    var helpRequested: Bool { flags.contains("help") }

    func flag(_ name: String) -> Bool { flags.contains(name) }

    func values(_ name: String) -> [String] { values[name] ?? [] }

    func value(_ name: String) -> String? { values[name]?.last }

    func flag(_ option: OptionSpec) -> Bool { flag(option.name) }

    func values(_ option: OptionSpec) -> [String] { values(option.name) }

    func value(_ option: OptionSpec) -> String? { value(option.name) }

    /// The option's value as a number in `range`, or nil when absent.
    func number(_ name: String, in range: ClosedRange<Double>) throws(UsageError) -> Double? {
        guard let text = value(name) else { return nil }
        return try Self.number(text, option: name, in: range, spec: spec)
    }

    func integer(_ name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = value(name) else { return nil }
        guard let n = Int(text), range.contains(n) else {
            throw UsageError(message: "invalid value '\(text)' for '--\(name)': expected a whole number from \(range.lowerBound) to \(range.upperBound)", command: spec)
        }
        return n
    }

    static func number(_ text: String, option: String, in range: ClosedRange<Double>, spec: CommandSpec) throws(UsageError) -> Double {
        guard let x = Double(text), x.isFinite, range.contains(x) else {
            throw UsageError(message: "invalid value '\(text)' for '--\(option)': expected a number from \(range.lowerBound) to \(range.upperBound)", command: spec)
        }
        return x
    }
}
