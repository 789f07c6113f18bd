
import FoundationEssentials
import SFXSystem
import Glibc

/// sfx's own mute switch, kept in a file per user so the `sfx` command, the library and the
/// daemon agree: `$XDG_STATE_HOME/sfx/muted` (default `~/.local/state/sfx/muted`). The file
/// holding `1` means muted; no file, or `0`, means not.
///
/// Changes are made under an exclusive `flock` on `muted.lock` beside the flag, so that
/// `toggle()` — read, then write the opposite — is atomic across threads and processes (50
/// parallel `sfx mute toggle` leave the flag as it was). The flag is replaced by renaming a fully
/// written file over it, so readers never see a partial one and take no lock.
///
/// The directory is made 0700 and the files 0600; none of them is followed if it is a symbolic
/// link, and a directory owned by another user is refused.
public struct MuteFlag: Sendable, Equatable {
    public let url: URL

    public init(url: URL) { self.url = url }

    /// The flag of the user whose environment this is.
    public static func user(environment: [String: String] = ProcessInfo.processInfo.environment) -> MuteFlag {
        MuteFlag(url: xdgDirectory("XDG_STATE_HOME", default: ".local/state", environment: environment)
            .appending(path: "sfx/muted"))
    }

    public var isMuted: Bool {
        let fd = open(url.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return Self.readFlag(fd)
    }

    /// Sets the flag, creating its directory; one clear line when the file cannot be written.
    public func set(_ muted: Bool) throws {
        try withLock { directory in try write(muted, in: directory) }
    }

    /// Turns the flag over atomically (no other change can come between the read and the
    /// write) and returns the new state.
    @discardableResult
    public func toggle() throws -> Bool {
        try withLock { directory in
            let fd = openat(directory, url.lastPathComponent, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            let muted = fd >= 0 && Self.readFlag(fd)
            if fd >= 0 { close(fd) }
            try write(!muted, in: directory)
            return !muted
        }
    }

    private static func readFlag(_ fd: Int32) -> Bool {
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = read(fd, &bytes, bytes.count)
        guard count > 0 else { return false }
        return String(decoding: bytes[..<count], as: UTF8.self).trimmed == "1"
    }

    private var directoryURL: URL { url.deletingLastPathComponent() }

    private func failure(_ what: String) -> SettingsFileError {
        SettingsFileError("cannot write the mute flag \(url.path) (\(what)); check that \(directoryURL.path) is a directory of yours, writable, not a symbolic link — or set XDG_STATE_HOME")
    }

    private func systemFailure(_ operation: String, _ path: String) -> SettingsFileError {
        failure("\(operation) \(path): \(String(cString: strerror(errno)))")
    }

    /// Runs `body` with the flag's directory open and `muted.lock` held exclusively.
    private func withLock<T>(_ body: (_ directory: Int32) throws -> T) throws -> T {
        let directory = try openDirectory()
        defer { close(directory) }
        let lockName = url.lastPathComponent + ".lock"
        let lock = openat(directory, lockName, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw systemFailure("open", directoryURL.appending(path: lockName).path) }
        defer { close(lock) }  // closing releases the lock
        while flock(lock, LOCK_EX) != 0 {
            guard errno == EINTR else { throw systemFailure("lock", directoryURL.appending(path: lockName).path) }
        }
        return try body(directory)
    }

    /// Creates the directory (0700, with its parents) and opens it without following a link.
    private func openDirectory() throws -> Int32 {
        let path = directoryURL.path
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw failure("cannot create the directory: \(errorText(error))")
        }
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            throw errno == ELOOP || errno == ENOTDIR ? failure("\(path) is a symbolic link or not a directory") : systemFailure("open", path)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            close(fd)
            throw systemFailure("stat", path)
        }
        guard info.st_uid == geteuid() else {
            close(fd)
            throw failure("\(path) belongs to another user")
        }
        // A directory made by an older sfx (0755) becomes private.
        if info.st_mode & 0o077 != 0 { fchmod(fd, 0o700) }
        return fd
    }

    /// Writes the flag to a temporary file (0600) and renames it over the flag; the lock is held.
    private func write(_ muted: Bool, in directory: Int32) throws {
        let name = url.lastPathComponent
        let temporary = name + ".new"
        let fd = openat(directory, temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw systemFailure("create", directoryURL.appending(path: temporary).path) }
        let text = Array((muted ? "1\n" : "0\n").utf8)
        let written = text.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == text.count, synced else {
            unlinkat(directory, temporary, 0)
            throw systemFailure("write", directoryURL.appending(path: temporary).path)
        }
        guard renameat(directory, temporary, directory, name) == 0 else {
            unlinkat(directory, temporary, 0)
            throw systemFailure("rename into", url.path)
        }
    }
}
