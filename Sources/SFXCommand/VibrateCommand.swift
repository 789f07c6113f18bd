import FoundationEssentials
import Glibc
import SFX

enum VibrateCommand: Subcommand {
    static let spec = CommandSpec(
        name: "vibrate", abstract: "Vibrate: one 400 ms buzz, a pattern, or a named effect.",
        discussion: """
        Patterns alternate on and off, starting with on: --pattern 200,100,200 buzzes 200 ms, \
        rests 100 ms, buzzes 200 ms. Ctrl-C stops and leaves the actuator off.
        """,
        examples: ["sfx vibrate", "sfx vibrate --pattern 200,100,200 --amplitude 0.7", "sfx vibrate --effect double-click --backend evdev"],
        positionals: [],
        options: [pattern, amplitude, repeatIndex.spec, effect] + HapticOptions.options + DaemonRoute.specs)

    static let pattern = OptionSpec.option("pattern", value: "MS,MS,…", help: "On/off durations in milliseconds.")
    static let amplitude = OptionSpec.option("amplitude", value: "A[,A…]", help: "Strength 0 to 1, one for all or one per duration.")
    static let repeatIndex = IntegerOption(spec: .option("repeat", value: "INDEX", help: "Loop back to this segment until Ctrl-C (default: play once)."), range: -1...255)
    static let effect = OptionSpec.option("effect", value: "NAME", help: "click, tick, double-click or heavy-click.")

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        var settings = try CommandSettings.load(needing: UserSettings.hapticKeys)
        try HapticOptions.apply(arguments, to: &settings)
        try HapticOptions.checkCommand(settings)
        let chosen: VibrationPattern
        do {
            if let effect = arguments.value(effect) {
                guard arguments.value(pattern) == nil else {
                    throw UsageError(message: "give --pattern or --effect, not both", command: spec)
                }
                guard let named = VibrationPattern.named(effect) else {
                    throw UsageError(message: "unknown effect '\(effect)': expected \(VibrationPattern.namedEffects.map(\.name).joined(separator: ", "))", command: spec)
                }
                chosen = named
            } else if let text = arguments.value(pattern) {
                let loopBack = try repeatIndex.read(arguments) ?? -1
                chosen = try VibrationPattern(parsing: text, amplitude: arguments.value(amplitude), repeatIndex: loopBack)
            } else {
                chosen = .default
            }
        } catch let error as PatternError {
            // The pattern's own words, under the option they came from.
            let text = error.description
            let option = text.contains("repeat") ? "--repeat" : text.contains("amplitude") ? "--amplitude" : "--pattern"
            throw UsageError(message: "\(option): \(error.description)", command: spec)
        }
        if let status = try vibrateThroughDaemon(arguments) { return status }
        var haptics = HapticConfiguration()
        settings.apply(to: &haptics)
        let vibrator = try Vibrator(configuration: haptics, backend: settings.hapticBackend)
        let interruption = VibrationInterruption()
        vibrator.vibrate(chosen)
        vibrator.waitUntilIdle()
        if let status = interruption.exitStatus() { return status }
        if let error = vibrator.lastError { throw Failure(error.description) }
        vibrator.close()
        return 0
    }
}
