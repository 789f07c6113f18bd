import FoundationEssentials
import SFXSystem
import Dispatch
import Glibc

/// An alert's visual channel: something that flashes for people who cannot hear the sound — a
/// keyboard or status LED through sysfs, a command, or a callback. `Flasher` runs one on its own
/// queue, so the caller never waits for the flash.
public protocol FlashBackend: AnyObject, Sendable {
    /// Whether it can flash here and on what, or the reason it cannot with the fix.
    func availability() -> HapticAvailability
    /// Flashes `pattern` with `caption` (the alert's text) and returns when it has ended. Called
    /// from one thread at a time (the Flasher's queue).
    func flash(_ pattern: FlashPattern, caption: String) throws(HapticError)
}

/// A flash: `count` times on for `onMilliseconds`, then off for `offMilliseconds`.
public struct FlashPattern: Sendable, Equatable {
    public var count: Int
    public var onMilliseconds: Int
    public var offMilliseconds: Int

    public init(count: Int = 3, onMilliseconds: Int = 150, offMilliseconds: Int = 150) {
        self.count = max(1, min(count, 100))
        self.onMilliseconds = max(1, min(onMilliseconds, 10_000))
        self.offMilliseconds = max(1, min(offMilliseconds, 10_000))
    }

    public static let `default` = FlashPattern()
}

/// The flash backends.
public enum FlashBackendKind: String, Sendable, CaseIterable {
    case led, command, callback
}

/// An LED under `/sys/class/leds/<name>/`, as Documentation/ABI/testing/sysfs-class-led describes
/// it: `brightness` takes a decimal value from 0 (off) to the value in `max_brightness`. A flash
/// writes the LED's maximum then `0` (each with a newline, as `echo` writes it) `count` times, and
/// finally restores the brightness read before the flash (so a Caps Lock LED that was lit stays lit).
/// Writing needs root or a udev rule granting the user the `brightness` file.
public final class LEDFlashBackend: FlashBackend, @unchecked Sendable {
    public let directory: String
    private let syscalls: any HapticSyscalls

    /// - Parameters:
    ///   - name: the LED class device, e.g. `input3::capslock` or `platform::micmute`.
    ///   - sysRoot: the sysfs mount point (a temporary directory laid out like /sys in tests).
    public init(name: String, sysRoot: String = "/sys", syscalls: any HapticSyscalls = LiveHapticSyscalls()) {
        directory = "\(sysRoot)/class/leds/\(name)"
        self.syscalls = syscalls
    }

    public func availability() -> HapticAvailability {
        switch maxBrightness() {
        case .success: .available(directory)
        case .failure(let error): .unavailable(reason: error.description)
        }
    }

    /// The LED's `max_brightness`, or why it cannot be read.
    public func maxBrightness() -> Result<Int, HapticError> {
        let file = "\(directory)/max_brightness"
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            return .failure(HapticError("\(file) is missing or unreadable — name an LED listed under \(directory.directoryPart)"))
        }
        guard let value = Int(text.trimmed), value > 0 else {
            return .failure(HapticError("\(file) holds '\(text.trimmed)', not a positive number — this is not an LED class device"))
        }
        return .success(value)
    }

    public func flash(_ pattern: FlashPattern, caption: String) throws(HapticError) {
        let maximum = try maxBrightness().get()
        let file = "\(directory)/brightness"
        let before = (try? String(contentsOfFile: file, encoding: .utf8)).flatMap { Int($0.trimmed) } ?? 0
        let stop = HapticStopSignal()
        do {
            for _ in 0..<pattern.count {
                try syscalls.writeText("\(maximum)\n", to: file)
                _ = stop.wait(milliseconds: pattern.onMilliseconds)
                try syscalls.writeText("0\n", to: file)
                _ = stop.wait(milliseconds: pattern.offMilliseconds)
            }
        } catch {
            try? syscalls.writeText("\(min(before, maximum))\n", to: file)
            throw error
        }
        if before > 0 { try syscalls.writeText("\(min(before, maximum))\n", to: file) }
    }
}

/// A flash by running a program (no shell: the arguments are passed as given) once per alert,
/// with `SFX_ALERT_CAPTION` (the caption), `SFX_FLASH_COUNT`, `SFX_FLASH_ON_MS` and
/// `SFX_FLASH_OFF_MS` in its environment on top of this process's own. A non-zero exit status
/// is reported as an error.
public final class CommandFlashBackend: FlashBackend, @unchecked Sendable {
    public let arguments: [String]
    private let environment: [String: String]
    /// How long the command may run beyond the flash pattern's own length before it is stopped
    /// (SIGTERM, then SIGKILL to its process group) and the flash reported failed: a command that
    /// never exits must not hold up the flashes after it.
    public let allowance: Duration

    public init(arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                allowance: Duration = .seconds(5)) {
        self.arguments = arguments
        self.environment = environment
        self.allowance = allowance
    }

    public func availability() -> HapticAvailability {
        switch executable() {
        case .success(let path): .available(path)
        case .failure(let error): .unavailable(reason: error.description)
        }
    }

    public func flash(_ pattern: FlashPattern, caption: String) throws(HapticError) {
        let path = try executable().get()
        let variables = environment.merging([
            "SFX_ALERT_CAPTION": caption,
            "SFX_FLASH_COUNT": String(pattern.count),
            "SFX_FLASH_ON_MS": String(pattern.onMilliseconds),
            "SFX_FLASH_OFF_MS": String(pattern.offMilliseconds),
        ]) { _, new in new }
        let program = try ChildProgram.start(path, arguments: arguments, environment: variables.map { "\($0.key)=\($0.value)" },
                                             graceMilliseconds: CommandBackend.killDelayMilliseconds)
        let limit = Double(pattern.count * (pattern.onMilliseconds + pattern.offMilliseconds)) / 1000
            + Double(allowance.components.seconds) + Double(allowance.components.attoseconds) / 1e18
        let timeUp = HapticStopSignal()
        DispatchQueue.global().asyncAfter(deadline: .now() + limit) { timeUp.signal() }
        guard let status = program.waitForExit(until: timeUp) else {
            program.end(graceMilliseconds: CommandBackend.killDelayMilliseconds)
            throw HapticError("flash command \(path) was still running after \(String(cFormat: "%.1f", limit)) s and was stopped; make it exit once it has flashed")
        }
        let exitedNormally = status & 0x7f == 0
        let exitCode = (status >> 8) & 0xff
        guard exitedNormally, exitCode == 0 else {
            let outcome = exitedNormally ? "status \(exitCode)" : "signal \(status & 0x7f)"
            throw HapticError("flash command \(path) failed (\(outcome)) — run it by hand with SFX_ALERT_CAPTION=test to see why")
        }
    }

    private func executable() -> Result<String, HapticError> {
        guard let name = arguments.first, !name.isEmpty else {
            return .failure(HapticError("no flash command is configured — set flash-command in [alert] of sfx.conf"))
        }
        let candidates = name.contains("/")
            ? [name]
            : (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").map { "\($0)/\(name)" }
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
            return .success(found)
        }
        return .failure(HapticError("flash command '\(name)' was not found or is not executable — give a full path or put it on PATH"))
    }
}

/// A flash through a Swift closure (a program's own window, a test); it runs on the Flasher's
/// queue with the pattern and caption.
public final class CallbackFlashBackend: FlashBackend {
    private let handler: @Sendable (FlashPattern, String) -> Void

    public init(_ handler: @escaping @Sendable (FlashPattern, String) -> Void) {
        self.handler = handler
    }

    public func availability() -> HapticAvailability { .available("a Swift callback") }

    public func flash(_ pattern: FlashPattern, caption: String) {
        handler(pattern, caption)
    }
}

/// Runs a flash backend on a serial queue of its own: `flash` returns at once; a failure goes
/// to `onError`. Flashes asked for while one runs wait their turn.
public final class Flasher: @unchecked Sendable {
    public let backend: any FlashBackend
    private let queue = DispatchQueue(label: "sfx-flash")
    private let onError: (@Sendable (HapticError) -> Void)?

    public init(backend: any FlashBackend, onError: (@Sendable (HapticError) -> Void)? = nil) {
        self.backend = backend
        self.onError = onError
    }

    /// Starts a flash and returns at once.
    public func flash(_ pattern: FlashPattern = .default, caption: String) {
        queue.async { [backend, onError] in
            do throws(HapticError) { try backend.flash(pattern, caption: caption) } catch { onError?(error) }
        }
    }

    /// Waits until every flash asked for so far has ended.
    public func waitUntilIdle() {
        queue.sync {}
    }
}
