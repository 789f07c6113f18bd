import FoundationEssentials
import SFXSystem
import Glibc

/// A vibrator exposed in sysfs, as phones and tablets running mainline or Android kernels have it.
///
/// Two interfaces, found under `sysRoot` (a temporary directory laid out like /sys in tests):
///
/// - **LED class with the transient trigger** (`/sys/class/leds/<name>/`, the first LED whose name
///   contains "vibrator", or the one named): `open()` writes `transient` to `trigger` (the kernel
///   then adds `activate`, `duration` and `state`) and `0` to `activate`; an on segment writes its
///   length to `duration`, `1` to `state` and `1` to `activate` — a one-shot kernel timer, so the
///   motor stops by itself even if this process dies; off writes `0` to `activate`. If the LED's
///   `trigger` does not list `transient`, the module is missing: `modprobe ledtrig-transient`.
/// - **Android's timed_output** (`/sys/class/timed_output/vibrator/enable`): on writes the length in
///   ms, off writes `0`.
///
/// Amplitude is not adjustable here: any amplitude above 0 is on. Writing needs root or a udev rule.
public final class SysfsVibratorBackend: SwitchedHapticBackend, @unchecked Sendable {
    public let kind = HapticBackendKind.sysfs

    /// The sysfs interface a vibrator was found behind.
    public enum Interface: Sendable, Equatable {
        /// An LED class directory whose trigger offers `transient`.
        case ledTransient(directory: String)
        /// The `enable` file of a timed_output vibrator.
        case timedOutput(enableFile: String)
    }

    private let sysRoot: String
    private let ledName: String?
    private let syscalls: any HapticSyscalls
    // Touched only from open/play/close, which the Vibrator serialises.
    private var interface: Interface?

    /// - Parameters:
    ///   - sysRoot: the sysfs mount point.
    ///   - ledName: the LED class device to use, instead of the first whose name contains "vibrator".
    public init(sysRoot: String = "/sys", ledName: String? = nil, syscalls: any HapticSyscalls = LiveHapticSyscalls()) {
        self.sysRoot = sysRoot
        self.ledName = ledName
        self.syscalls = syscalls
    }

    public func availability() -> HapticAvailability {
        switch find() {
        case .success(.ledTransient(let directory)): .available(directory)
        case .success(.timedOutput(let enableFile)): .available(enableFile)
        case .failure(let error): .unavailable(reason: error.description)
        }
    }

    public func open() throws(HapticError) {
        let found = try find().get()
        interface = found
        if case .ledTransient(let directory) = found {
            try syscalls.writeText("transient", to: "\(directory)/trigger")
        }
        try switchOff()
    }

    public func switchOn(amplitude: Double, milliseconds: Int) throws(HapticError) {
        switch interface {
        case .ledTransient(let directory):
            try syscalls.writeText(String(milliseconds), to: "\(directory)/duration")
            try syscalls.writeText("1", to: "\(directory)/state")
            try syscalls.writeText("1", to: "\(directory)/activate")
        case .timedOutput(let enableFile):
            try syscalls.writeText(String(milliseconds), to: enableFile)
        case nil:
            throw notOpen
        }
    }

    public func switchOff() throws(HapticError) {
        switch interface {
        case .ledTransient(let directory): try syscalls.writeText("0", to: "\(directory)/activate")
        case .timedOutput(let enableFile): try syscalls.writeText("0", to: enableFile)
        case nil: throw notOpen
        }
    }

    public func close() {
        guard interface != nil else { return }
        try? switchOff()
        interface = nil
    }

    private var notOpen: HapticError {
        HapticError("the sysfs vibrator is not open — open the backend first")
    }

    /// The LED vibrator if one offers the transient trigger, else timed_output, else the reason.
    private func find() -> Result<Interface, HapticError> {
        let files = FileManager.default
        let ledsDirectory = "\(sysRoot)/class/leds"
        let names = ledName.map { [$0] }
            ?? ((try? files.contentsOfDirectory(atPath: ledsDirectory)) ?? []).filter { $0.contains("vibrator") }.sorted()
        var ledProblem: HapticError?
        for name in names {
            let directory = "\(ledsDirectory)/\(name)"
            let trigger = "\(directory)/trigger"
            guard let triggers = try? String(contentsOfFile: trigger, encoding: .utf8) else {
                ledProblem = ledProblem ?? HapticError("\(trigger) is missing or unreadable — check the LED name under \(ledsDirectory)")
                continue
            }
            let offered = triggers.split(whereSeparator: \.isWhitespace).map { $0.trimmed(of: "[]") }
            guard offered.contains("transient") else {
                ledProblem = ledProblem ?? HapticError("\(trigger) does not offer 'transient' — load it with: modprobe ledtrig-transient")
                continue
            }
            guard files.isWritableFile(atPath: trigger) else {
                ledProblem = ledProblem ?? HapticError.system(EACCES, device: trigger, operation: "open", kind: .sysfsFile)
                continue
            }
            return .success(.ledTransient(directory: directory))
        }
        let enableFile = "\(sysRoot)/class/timed_output/vibrator/enable"
        if files.fileExists(atPath: enableFile) {
            guard files.isWritableFile(atPath: enableFile) else {
                return .failure(HapticError.system(EACCES, device: enableFile, operation: "open", kind: .sysfsFile))
            }
            return .success(.timedOutput(enableFile: enableFile))
        }
        return .failure(ledProblem ?? HapticError(
            "no vibrator under \(ledsDirectory) (*vibrator*) or \(sysRoot)/class/timed_output/vibrator — this machine has no sysfs vibrator; pick another backend"))
    }
}
