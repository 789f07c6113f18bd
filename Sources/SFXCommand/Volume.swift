import FoundationEssentials
import SFXSystem
import Glibc
import SFXCore

/// A volume as the user writes it: a linear factor (`0.5`, as sox's `-v` takes it) or decibels
/// (`-6dB`, `+3 dB`; canberra-gtk-play's `-V` takes plain decibels). Above 1 is gain, up to
/// `maximumGain` (+12 dB); the mixer's limiter keeps the mix from clipping.
enum Volume {
    /// The largest factor: 4, +12.04 dB (`SettingLimits.commandGain`, which says why it is less
    /// than a program may ask for).
    static let maximumGain = SettingLimits.commandGain.upperBound

    static let option = OptionSpec.option("volume", value: "GAIN", help: "A factor, 0 to \(Int(maximumGain)) (0.5), or decibels (-6dB); above 1 is gain, the limiter guards clipping (default 1).")
    static let decibelOption = OptionSpec.option("decibels", short: "V", value: "DB", help: "Volume in decibels, as canberra-gtk-play's -V: -6 is half, up to +12 (default 0).")

    /// The factor the options give, or nil when neither is given.
    static func factor(_ arguments: ParsedArguments) throws(UsageError) -> Float? {
        let volume = arguments.value(option.name), decibels = arguments.value(decibelOption.name)
        if volume != nil, decibels != nil {
            throw UsageError(message: "give --volume or --decibels (-V), not both", command: arguments.spec)
        }
        if let volume {
            guard let factor = parse(volume, decibels: false) else {
                throw UsageError(message: "invalid value '\(volume)' for '--volume': expected a factor from 0 to \(Int(maximumGain)) (0.5) or decibels up to +12 (-6dB)", command: arguments.spec)
            }
            return Float(factor)
        }
        if let decibels {
            guard let factor = parse(decibels, decibels: true) else {
                throw UsageError(message: "invalid value '\(decibels)' for '--decibels': expected decibels up to +12 (-6, -6dB, -inf for silence)", command: arguments.spec)
            }
            return Float(factor)
        }
        return nil
    }

    /// `text` as a linear factor in 0…maximumGain, or nil. A `dB` suffix (any case) means
    /// decibels; so does every number when `decibels` is set.
    static func parse(_ text: String, decibels: Bool) -> Double? {
        var number = text.trimmed
        var isDecibels = decibels
        if number.lowercased().hasSuffix("db") {
            number = String(number.dropLast(2)).trimmed
            isDecibels = true
        }
        if number.hasPrefix("+") { number.removeFirst() }
        let factor: Double
        if isDecibels {
            if number.lowercased() == "-inf" { return 0 }
            guard let db = Double(number), db.isFinite else { return nil }
            factor = pow(10, db / 20)
        } else {
            guard let x = Double(number), x.isFinite else { return nil }
            factor = x
        }
        // 12 dB is 3.98: allow it as the documented limit.
        guard factor >= 0, factor <= maximumGain * 1.0001 else { return nil }
        return min(factor, maximumGain)
    }
}
