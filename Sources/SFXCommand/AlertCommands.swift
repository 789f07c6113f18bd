import Foundation
import Glibc
import SFX
import Synchronization

enum AlertCommand: Subcommand {
    static let spec = CommandSpec(
        name: "alert", abstract: "Play an alert sound; vibrate instead when the output is muted.",
        discussion: """
        Muted means sfx's mute flag (`sfx mute`), the output's Master switch off or volume at \\
        zero, or no usable output. `vibrate-with-alert` in ~/.config/sfx/sfx.conf (never, \\
        when-muted, always) decides when it vibrates. Exits 1 when it could neither play nor vibrate.
        """,
        positionals: [PositionalSpec(name: "NAME|FILE", help: "A system sound name or a sound file.", min: 1, max: 1)],
        options: [.option("volume", value: "GAIN", help: "Gain, 0 to 1 (default 1)."),
                  .option("vibrate", value: "WHEN", help: "never, when-muted or always (default: the settings file, else when-muted).")]
            + HapticOptions.options + EngineSession.options)

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        var settings = try UserSettings.load()
        try HapticOptions.apply(arguments, to: &settings)
        if let when = arguments.value("vibrate") {
            guard let mode = AlertVibration(rawValue: when) else {
                throw UsageError(message: "invalid value '\(when)' for '--vibrate': expected never, when-muted or always", command: spec)
            }
            settings.alertVibration = mode
        }
        let volume = Float(try arguments.number("volume", in: 0...1) ?? 1)
        let session = try EngineSession(arguments, settings: settings)
        let sound = try SoundArgument(arguments.positionals[0]).load(into: session.engine.library)
        let interruption = VibrationInterruption { try? session.engine.stopAll(fade: .milliseconds(30)) }
        let result = session.engine.alert(sound, volume: volume)
        if result.vibrated { session.engine.waitForVibration() }
        session.finish()
        if let status = interruption.exitStatus() { return status }
        print(result)
        return result.wasNoticed ? 0 : 1
    }
}

enum VibrateCommand: Subcommand {
    static let spec = CommandSpec(
        name: "vibrate", abstract: "Vibrate: one 400 ms buzz, a pattern, or a named effect.",
        discussion: """
        Patterns alternate on and off, starting with on: --pattern 200,100,200 buzzes 200 ms, \\
        rests 100 ms, buzzes 200 ms. Ctrl-C stops and leaves the actuator off.
        """,
        positionals: [],
        options: [.option("pattern", value: "MS,MS,…", help: "On/off durations in milliseconds."),
                  .option("amplitude", value: "A[,A…]", help: "Strength 0 to 1, one for all or one per duration."),
                  .option("repeat", value: "INDEX", help: "Loop back to this segment until Ctrl-C (default: play once)."),
                  .option("effect", value: "NAME", help: "click, tick, double-click or heavy-click.")]
            + HapticOptions.options)

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        var settings = try UserSettings.load()
        try HapticOptions.apply(arguments, to: &settings)
        let pattern: VibrationPattern
        do {
            if let effect = arguments.value("effect") {
                guard arguments.value("pattern") == nil else {
                    throw UsageError(message: "give --pattern or --effect, not both", command: spec)
                }
                guard let named = VibrationPattern.named(effect) else {
                    throw UsageError(message: "unknown effect '\(effect)': expected \(VibrationPattern.namedEffects.map(\.name).joined(separator: ", "))", command: spec)
                }
                pattern = named
            } else if let text = arguments.value("pattern") {
                let repeatIndex = try arguments.integer("repeat", in: -1...255) ?? -1
                pattern = try VibrationPattern(parsing: text, amplitude: arguments.value("amplitude"), repeatIndex: repeatIndex)
            } else {
                pattern = .default
            }
        } catch let error as PatternError {
            throw UsageError(message: error.description, command: spec)
        }
        var haptics = HapticConfiguration()
        settings.apply(to: &haptics)
        let vibrator = try Vibrator(configuration: haptics, backend: settings.hapticBackend)
        let interruption = VibrationInterruption()
        vibrator.vibrate(pattern)
        vibrator.waitUntilIdle()
        if let status = interruption.exitStatus() { return status }
        if let error = vibrator.lastError { throw Failure(error.description) }
        vibrator.close()
        return 0
    }
}

enum HapticsCommand: Subcommand {
    static let spec = CommandSpec(
        name: "haptics", abstract: "Show which vibration backends this machine has, and why the others are missing.",
        discussion: "Detection order: evdev, gpio, sysfs, command, callback; the first available is used.",
        positionals: [],
        options: HapticOptions.options)

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        var settings = try UserSettings.load()
        try HapticOptions.apply(arguments, to: &settings)
        var haptics = HapticConfiguration()
        settings.apply(to: &haptics)
        let report = haptics.detect()
        print(report)
        if let chosen = settings.hapticBackend ?? report.firstAvailable {
            print("\nsfx vibrates with: \(chosen.rawValue)")
        } else {
            print("\nsfx cannot vibrate here: no backend is available")
        }
        return 0
    }
}

enum MuteCommand: Subcommand {
    static let spec = CommandSpec(
        name: "mute", abstract: "Set or show sfx's mute flag (alerts vibrate instead while it is on).",
        discussion: "The flag lives in $XDG_STATE_HOME/sfx/muted (default ~/.local/state/sfx/muted), shared by the command, the library and the daemon.",
        positionals: [PositionalSpec(name: "on|off|toggle|status", help: "What to do (default: status).", min: 0, max: 1)],
        options: [.option("device", short: "D", value: "PCM", help: "Also show this output's mixer (default: default).")])

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let flag = MuteFlag.user()
        switch arguments.positionals.first ?? "status" {
        case "on": try flag.set(true)
        case "off": try flag.set(false)
        case "toggle": try flag.toggle()
        case "status": break
        case let other:
            throw UsageError(message: "unknown action '\(other)': expected on, off, toggle or status", command: spec)
        }
        print("sfx mute flag: \(flag.isMuted ? "on" : "off")")
        let device = try arguments.value("device") ?? UserSettings.load().device ?? "default"
        do {
            let master = try MixerControl(device: device).read()
            let volume = master.volume.map { "\(Int(($0 * 100).rounded())) %" } ?? "no volume"
            let switchText = master.switchOn.map { $0 ? "on" : "off" } ?? "no switch"
            print("output mixer (\(device)): \(master.control) \(switchText), \(volume)\(master.isMuted ? " — muted" : "")")
        } catch {
            print("output mixer (\(device)): unavailable — \(error)")
        }
        return 0
    }
}

/// SIGINT and SIGTERM during `alert` and `vibrate`: every vibrator is closed — the actuator off,
/// a vibration command's process group sent SIGTERM and waited for — and the command then exits
/// 128 + the signal's number (130, 143), as a shell reports a program the signal ended.
///
/// The signal only records itself and starts the cleanup, on a Dispatch queue; the main thread,
/// woken because the vibration ended, asks `exitStatus()`, which waits for the cleanup to finish.
/// The exit status does not depend on which thread gets there first.
final class VibrationInterruption: @unchecked Sendable {
    private let received = Atomic<Int32>(0)
    private let cleanedUp = DispatchSemaphore(value: 0)
    /// Kept alive while the command runs; set once, in init.
    private var sources: [any DispatchSourceSignal] = []

    /// Handles SIGINT and SIGTERM from now on; `alsoOnInterrupt` runs after the vibrators close.
    init(alsoOnInterrupt: @escaping @Sendable () -> Void = {}) {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                guard received.compareExchange(expected: 0, desired: number, ordering: .acquiringAndReleasing).exchanged else { return }
                Vibrator.closeAll()
                alsoOnInterrupt()
                cleanedUp.signal()
            }
            source.resume()
            sources.append(source)
        }
    }

    /// 128 + the signal's number once one arrived (after its cleanup has finished), else nil.
    func exitStatus() -> Int32? {
        let number = received.load(ordering: .acquiring)
        guard number != 0 else { return nil }
        cleanedUp.wait()
        cleanedUp.signal()
        return 128 + number
    }
}

/// The haptic options shared by `alert`, `vibrate` and `haptics`; they override the settings file.
enum HapticOptions {
    static let options: [OptionSpec] = [
        .option("backend", value: "NAME", help: "evdev, gpio, sysfs, command or callback (default: the first available)."),
        .option("input-device", value: "PATH", help: "evdev: this event device instead of the first with rumble."),
        .option("gpio", value: "CHIP:LINE[:active-low]", help: "gpio: the line driving the buzzer, e.g. gpiochip0:17."),
        .option("command", value: "PROGRAM", help: "command: a program to run for each vibration."),
    ]

    static func apply(_ arguments: ParsedArguments, to settings: inout UserSettings) throws {
        if let name = arguments.value("backend") {
            guard let kind = HapticBackendKind(rawValue: name) else {
                throw UsageError(message: "unknown backend '\(name)': expected \(HapticBackendKind.allCases.map(\.rawValue).joined(separator: ", "))", command: arguments.spec)
            }
            settings.hapticBackend = kind
        }
        if let device = arguments.value("input-device") { settings.inputDevice = device }
        if let gpio = arguments.value("gpio") {
            do {
                settings.gpio = try GPIOLineConfiguration(parsing: gpio)
            } catch {
                throw UsageError(message: "invalid value '\(gpio)' for '--gpio': \(error)", command: arguments.spec)
            }
        }
        if let command = arguments.value("command") { settings.command = [command] }
    }
}
