import FoundationEssentials
import Glibc

/// Rumble through the Linux force-feedback interface of an evdev device: game pads, and phones or
/// tablets whose vibrator is an input device (ff-memless drivers).
///
/// It scans `<inputDirectory>/event*` in numeric order (or uses `device` alone) and takes the first
/// node whose EVIOCGBIT(EV_FF) reports FF_RUMBLE. Per on segment it uploads an FF_RUMBLE effect
/// with EVIOCSFF (id −1 the first time, so the kernel assigns one; that id afterwards, so the
/// effect is updated in place) whose replay length is the segment's length and whose strong and
/// weak magnitudes are the amplitude scaled to 0…0xFFFF, then plays it by writing an EV_FF
/// `input_event` (code = effect id, value = 1). Off writes value 0; `close()` stops it, erases the
/// effect with EVIOCRMFF and closes the node. If the device reports FF_GAIN, `open()` sets the
/// gain to full. Every call goes through `HapticSyscalls`.
///
/// The user needs read-write access to the node: membership of the `input` group or a udev rule.
public final class EvdevRumbleBackend: SwitchedHapticBackend, @unchecked Sendable {
    public let kind = HapticBackendKind.evdev
    private let inputDirectory: String
    private let device: String?
    private let syscalls: any HapticSyscalls
    // Touched only from open/play/close, which the Vibrator serialises.
    private var opened: (fd: Int32, path: String)?
    private var effectID: Int16 = -1

    /// - Parameters:
    ///   - inputDirectory: where the event nodes live (a temporary directory in tests).
    ///   - device: one node to use instead of scanning.
    public init(inputDirectory: String = "/dev/input", device: String? = nil, syscalls: any HapticSyscalls = LiveHapticSyscalls()) {
        self.inputDirectory = inputDirectory
        self.device = device
        self.syscalls = syscalls
    }

    public func availability() -> HapticAvailability {
        switch findRumbleDevice() {
        case .success(let found):
            _ = syscalls.close(found.fd)
            return .available(found.path)
        case .failure(let error):
            return .unavailable(reason: error.description)
        }
    }

    public func open() throws(HapticError) {
        close()
        let found = try findRumbleDevice().get()
        opened = (found.fd, found.path)
        effectID = -1
        if found.hasGain {
            try writeEvent(code: InputLayout.gain, value: 0xFFFF)
        }
    }

    public func switchOn(amplitude: Double, milliseconds: Int) throws(HapticError) {
        guard let (fd, path) = opened else { throw notOpen }
        let magnitude = UInt16((min(max(amplitude, 0), 1) * 0xFFFF).rounded())
        var effect = InputLayout.rumbleEffect(
            id: effectID, milliseconds: UInt16(clamping: milliseconds),
            strongMagnitude: magnitude, weakMagnitude: magnitude)
        let result = effect.withUnsafeMutableBytes { syscalls.ioctl(fd, InputLayout.uploadEffect, .buffer($0)) }
        guard result >= 0 else { throw HapticError.system(-result, device: path, operation: "upload a rumble effect", kind: .inputDevice) }
        effectID = InputLayout.effectID(in: effect)
        try writeEvent(code: UInt16(bitPattern: effectID), value: 1)
    }

    public func switchOff() throws(HapticError) {
        guard opened != nil, effectID >= 0 else { return }
        try writeEvent(code: UInt16(bitPattern: effectID), value: 0)
    }

    public func close() {
        guard let (fd, _) = opened else { return }
        try? switchOff()
        if effectID >= 0 {
            _ = syscalls.ioctl(fd, InputLayout.removeEffect, .integer(Int(effectID)))
        }
        _ = syscalls.close(fd)
        opened = nil
        effectID = -1
    }

    private var notOpen: HapticError {
        HapticError("the evdev rumble device is not open — open the backend first")
    }

    private func writeEvent(code: UInt16, value: Int32) throws(HapticError) {
        guard let (fd, path) = opened else { throw notOpen }
        let event = InputLayout.event(type: InputLayout.eventTypeForceFeedback, code: code, value: value)
        try syscalls.writeAll(fd, event, device: path, kind: .inputDevice)
    }

    /// The first node that reports FF_RUMBLE, opened read-write; else the first failure to open
    /// one (so a permission problem is named), else "none reports FF_RUMBLE".
    private func findRumbleDevice() -> Result<(fd: Int32, path: String, hasGain: Bool), HapticError> {
        var firstFailure: HapticError?
        for path in device.map({ [$0] }) ?? eventNodes() {
            let fd = syscalls.open(path, O_RDWR | O_NONBLOCK)
            guard fd >= 0 else {
                firstFailure = firstFailure ?? HapticError.system(-fd, device: path, operation: "open", kind: .inputDevice)
                continue
            }
            let length = InputLayout.bitArrayLength(InputLayout.forceFeedbackCodeCount)
            var bits = [UInt8](repeating: 0, count: length)
            let request = InputLayout.eventBitsRequest(type: InputLayout.eventTypeForceFeedback, length: length)
            let result = bits.withUnsafeMutableBytes { syscalls.ioctl(fd, request, .buffer($0)) }
            if result >= 0, InputLayout.isSet(Int(InputLayout.rumble), in: bits) {
                return .success((fd, path, InputLayout.isSet(Int(InputLayout.gain), in: bits)))
            }
            _ = syscalls.close(fd)
        }
        if let firstFailure { return .failure(firstFailure) }
        if let device {
            return .failure(HapticError("\(device) does not report FF_RUMBLE — pick a device with rumble, or leave the device out to scan \(inputDirectory)"))
        }
        return .failure(HapticError("no \(inputDirectory)/event* reports FF_RUMBLE — connect a game pad or vibrator with force feedback, or pick another backend"))
    }

    /// `event0`, `event1`, … `event10` in numeric order.
    private func eventNodes() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: inputDirectory)) ?? []
        return names
            .compactMap { name in name.hasPrefix("event") ? Int(name.dropFirst(5)) : nil }
            .sorted()
            .map { "\(inputDirectory)/event\($0)" }
    }
}
