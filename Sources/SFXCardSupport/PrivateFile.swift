import FoundationEssentials
import Glibc

/// The card's own files in its (private) directory: created 0600, never opened through a
/// symbolic link.
enum PrivateFile {
    /// Replaces `url` with `data`: written to a new 0600 file beside it (O_EXCL), then renamed
    /// into place, so readers see the old file or the new one, and a symbolic link at `url` is
    /// replaced, never followed.
    static func replace(_ url: URL, with data: Data) throws {
        let temporary = try createUnique(beside: url) { fd in try write(data, to: fd, path: url.path) }
        guard rename(temporary.path, url.path) == 0 else {
            let error = CardError("cannot write \(url.path) (\(errnoName())); choose a writable directory")
            unlink(temporary.path)
            throw error
        }
    }

    /// Creates `url` holding `data` unless it exists (then leaves it alone): written to a new 0600
    /// file beside it and linked into place, so no reader sees it half-written.
    static func createIfMissing(_ url: URL, with data: Data) throws {
        let temporary = try createUnique(beside: url) { fd in try write(data, to: fd, path: url.path) }
        defer { unlink(temporary.path) }
        guard link(temporary.path, url.path) == 0 || errno == EEXIST else {
            throw CardError("cannot create \(url.path) (\(errnoName())); choose a writable directory")
        }
    }

    /// Appends `text` to `url`, created 0600 if missing; nothing is written through a symbolic link.
    @discardableResult
    static func append(_ text: String, to url: URL) -> Bool {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, CardDirectory.problem(with: info, type: S_IFREG) == nil else { return false }
        return (try? write(Data(text.utf8), to: fd, path: url.path)) != nil
    }

    /// The contents of `url`, or nil when it does not exist; a symbolic link is refused.
    static func read(_ url: URL) throws -> Data? {
        let fd = open(url.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw CardError("cannot read \(url.path) (\(errnoName())); delete it if it is not the card's")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw CardError("\(url.path) is not a regular file; delete it")
        }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                throw CardError("cannot read \(url.path) (\(errnoName())); check the card directory")
            }
            if count == 0 { return data }
            data.append(contentsOf: buffer[0..<count])
        }
    }

    // MARK: Private

    /// Creates a new 0600 file named like `url` with a random suffix (mkstemp: O_EXCL), lets `body`
    /// fill it, and returns its path; on failure nothing is left behind.
    private static func createUnique(beside url: URL, _ body: (Int32) throws -> Void) throws -> URL {
        var template = Array((url.path + ".XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }   // 0600, O_EXCL
        guard fd >= 0 else {
            throw CardError("cannot create a file in \(url.deletingLastPathComponent().path) (\(errnoName())); choose a writable directory")
        }
        let path = URL(filePath: String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        do {
            defer { close(fd) }
            try body(fd)
        } catch {
            unlink(path.path)
            throw error
        }
        return path
    }

    private static func write(_ data: Data, to fd: Int32, path: String) throws {
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else {
                    throw CardError("cannot write \(path) (\(errnoName())); choose a writable directory")
                }
                offset += written
            }
        }
    }
}
