import FoundationEssentials
import Glibc

/// Vibration by running a program of the user's choice, for hardware sfx has no backend for.
///
/// The program runs without a shell (arguments are passed as given) once per pattern, with the
/// pattern in its environment on top of this process's own:
///
/// | variable                | value                                                        |
/// |-------------------------|--------------------------------------------------------------|
/// | `SFX_VIBRATE_MS`        | the length of one pass through the pattern, in ms (`500`)     |
/// | `SFX_VIBRATE_PATTERN`   | the segment lengths in ms, alternating on/off (`200,100,200`) |
/// | `SFX_VIBRATE_AMPLITUDE` | each segment's amplitude 0…1 (`1,0,1`)                        |
/// | `SFX_VIBRATE_REPEAT`    | the segment to repeat from, or −1 for once                    |
///
/// The program starts with no signal blocked and every signal at its default, in a process group
/// of its own. When the vibration is cancelled or replaced, the group gets SIGTERM (so a script's
/// `trap … TERM` runs at once and can switch the actuator off), and SIGKILL a second later if the
/// program is still running. If this process dies first — even by SIGKILL — a watchdog ends the
/// group the same way. A non-zero exit status is reported as an error. `ChildProgram` has the
/// details.
public final class CommandBackend: HapticBackend, @unchecked Sendable {
    public let kind = HapticBackendKind.command
    /// The program and its arguments.
    public let arguments: [String]
    private let environment: [String: String]

    static let killDelayMilliseconds = 1000

    public init(arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.arguments = arguments
        self.environment = environment
    }

    public func availability() -> HapticAvailability {
        switch executable() {
        case .success(let path): .available(path)
        case .failure(let error): .unavailable(reason: error.description)
        }
    }

    public func open() throws(HapticError) {
        _ = try executable().get()
    }

    public func play(_ pattern: VibrationPattern, until stop: HapticStopSignal) throws(HapticError) {
        let path = try executable().get()
        let variables = environment.merging([
            "SFX_VIBRATE_MS": String(pattern.totalMilliseconds),
            "SFX_VIBRATE_PATTERN": pattern.timingsText,
            "SFX_VIBRATE_AMPLITUDE": pattern.amplitudesText,
            "SFX_VIBRATE_REPEAT": String(pattern.repeatIndex),
        ]) { _, new in new }
        let program = try ChildProgram.start(path, arguments: arguments, environment: variables.map { "\($0.key)=\($0.value)" },
                                             graceMilliseconds: Self.killDelayMilliseconds)
        guard let status = program.waitForExit(until: stop) else {
            program.end(graceMilliseconds: Self.killDelayMilliseconds)
            return
        }
        let exitedNormally = status & 0x7f == 0
        let exitCode = (status >> 8) & 0xff
        guard exitedNormally, exitCode == 0 else {
            let outcome = exitedNormally ? "status \(exitCode)" : "signal \(status & 0x7f)"
            throw HapticError("vibration command \(path) failed (\(outcome)) — run it by hand with SFX_VIBRATE_MS=400 to see why")
        }
    }

    public func close() {}

    /// The program's full path: as given when it contains a slash, else searched on PATH.
    private func executable() -> Result<String, HapticError> {
        guard let name = arguments.first, !name.isEmpty else {
            return .failure(HapticError("no vibration command is configured — give one, e.g. --command /usr/local/bin/buzz"))
        }
        let files = FileManager.default
        let candidates = name.contains("/")
            ? [name]
            : (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").map { "\($0)/\(name)" }
        if let found = candidates.first(where: { files.isExecutableFile(atPath: $0) }) {
            return .success(found)
        }
        return .failure(HapticError("vibration command '\(name)' was not found or is not executable — give a full path or put it on PATH"))
    }
}
