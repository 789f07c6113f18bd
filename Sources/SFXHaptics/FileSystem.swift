import FoundationEssentials
import Glibc

extension HapticSyscalls {
    /// Opens `path`, runs `body` with the descriptor and closes it; failures become one line
    /// naming `path`.
    func withFile<Result>(_ path: String, flags: Int32, kind: HapticError.DeviceKind, _ body: (Int32) throws(HapticError) -> Result) throws(HapticError) -> Result {
        let fd = open(path, flags)
        guard fd >= 0 else { throw HapticError.system(-fd, device: path, operation: "open", kind: kind) }
        defer { _ = close(fd) }
        return try body(fd)
    }

    /// Writes all of `bytes` to `fd` in one call, as device files and sysfs attributes expect.
    func writeAll(_ fd: Int32, _ bytes: [UInt8], device: String, kind: HapticError.DeviceKind) throws(HapticError) {
        let written = bytes.withUnsafeBytes { write(fd, $0) }
        guard written >= 0 else { throw HapticError.system(Int32(-written), device: device, operation: "write", kind: kind) }
        guard written == bytes.count else {
            throw HapticError("\(device): short write (\(written) of \(bytes.count) bytes) — the device refused part of the data", errno: nil)
        }
    }

    /// Replaces the text of a sysfs attribute (or any small file that already exists).
    func writeText(_ text: String, to path: String) throws(HapticError) {
        try withFile(path, flags: O_WRONLY | O_TRUNC, kind: .sysfsFile) { fd throws(HapticError) in
            try writeAll(fd, Array(text.utf8), device: path, kind: .sysfsFile)
        }
    }
}
