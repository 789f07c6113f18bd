import FoundationEssentials
import SFXSystem
import Glibc

/// A file path as the bytes the kernel takes, so that any name a Linux file system holds opens,
/// including names that are not valid UTF-8 (a Swift `String` or a Foundation `URL` replaces
/// such bytes with U+FFFD, and the file can then no longer be found).
///
/// ```swift
/// let path = RawFilePath(bytes: Array("take-".utf8) + [0xFF] + Array(".wav".utf8))
/// path.description        // "take-\xFF.wav": invalid bytes shown as \x escapes in messages
/// let cue = try AudioDecoder().decode(file: path)
/// ```
public struct RawFilePath: Sendable, Hashable, CustomStringConvertible {
    /// The path's bytes, without a terminating NUL.
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) {
        self.bytes = Array(bytes.prefix { $0 != 0 })
    }

    public init(_ path: String) {
        self.init(bytes: Array(path.utf8))
    }

    /// The path of a file URL (Foundation has already turned any invalid bytes into U+FFFD).
    public init(_ url: URL) {
        self.init(url.path)
    }

    /// The path for messages: valid UTF-8 as it is, every other byte as `\xNN`.
    public var description: String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        var text = ""
        var index = 0
        while index < bytes.count {
            let length = RawFilePath.validSequenceLength(bytes, at: index)
            if length > 0 {
                text += String(decoding: bytes[index..<(index + length)], as: UTF8.self)
                index += length
            } else {
                text += String(cFormat: "\\x%02X", bytes[index])
                index += 1
            }
        }
        return text
    }

    /// The last path component (after the last `/`), as raw bytes.
    public var lastComponent: RawFilePath {
        RawFilePath(bytes: Array(bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).last ?? []))
    }

    /// Calls `body` with the path as a NUL-terminated C string.
    public func withCString<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        try (bytes + [0]).withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
        }
    }

    /// The length of the well-formed UTF-8 sequence starting at `index`, or 0 when there is none.
    private static func validSequenceLength(_ bytes: [UInt8], at index: Int) -> Int {
        let lead = bytes[index]
        let length: Int
        switch lead {
        case 0x00...0x7F: return 1
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return 0
        }
        guard index + length <= bytes.count else { return 0 }
        return String(validating: bytes[index..<(index + length)], as: UTF8.self) == nil ? 0 : length
    }
}

extension RawFilePath {
    /// Opens `file` for reading if it is a non-empty regular file: the path is checked with
    /// `stat` first (so no FIFO or device node is ever opened), opened non-blocking (a FIFO
    /// swapped in meanwhile cannot block), and checked again on the descriptor. The descriptor
    /// is the caller's to close; it is still O_NONBLOCK.
    static func openRegularFile(_ file: RawFilePath) throws -> (descriptor: Int32, size: Int64) {
        let path = file.description
        var st = stat()
        guard file.withCString({ stat($0, &st) }) == 0 else { throw MediaError.fromErrno(errno, path: path, writing: false) }
        if let error = MediaError.notRegular(mode: st.st_mode, path: path) { throw error }
        let fd = file.withCString { open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        guard fd >= 0 else { throw MediaError.fromErrno(errno, path: path, writing: false) }
        guard fstat(fd, &st) == 0 else {
            let code = errno
            close(fd)
            throw MediaError.fromErrno(code, path: path, writing: false)
        }
        if let error = MediaError.notRegular(mode: st.st_mode, path: path) {
            close(fd)
            throw error
        }
        if st.st_size == 0 {
            close(fd)
            throw MediaError(.emptyFile, subject: path)
        }
        return (fd, Int64(st.st_size))
    }
}
