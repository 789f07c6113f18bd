import CSFXProtocol
import Glibc

/// The daemon's listening socket (SOCK_SEQPACKET), made safely:
///
/// - user mode: `$XDG_RUNTIME_DIR/sfx/sfx.sock`; the directory is made 0700 and must be a real
///   directory owned by this user with no group or other access, the socket is 0600;
/// - system mode (kiosks): any path, its directory owned by this user or root and not writable
///   by others, the socket 0660 owned by `group` (or 0600 without one);
/// - socket activation: the descriptor systemd passes (LISTEN_FDS), used as it is.
///
/// A socket file already there is replaced only when no daemon answers on it and it is a socket
/// owned by this user; anything else there is refused, never removed.
public final class ListeningSocket {
    public let path: String
    public let descriptor: Int32
    /// Whether this process made the file (and so removes it at exit).
    let owned: Bool

    private init(path: String, descriptor: Int32, owned: Bool) {
        self.path = path
        self.descriptor = descriptor
        self.owned = owned
    }

    /// `$XDG_RUNTIME_DIR/sfx/sfx.sock` in the user's private directory.
    public static func user(environment: [String: String]) throws(DaemonError) -> ListeningSocket {
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else {
            throw DaemonError("XDG_RUNTIME_DIR is not set, so there is no place for the user's daemon socket; run `sfx serve` in a login session (or systemd --user), or give --socket PATH")
        }
        let base = runtime.hasSuffix("/") ? String(runtime.dropLast()) : runtime
        // The runtime directory itself must be the user's and private, as the card's code
        // requires: whoever owns it could replace sfx/ and the socket under the daemon.
        try checkPrivate(base, role: "XDG_RUNTIME_DIR", closed: S_IWGRP | S_IWOTH, fix: "fix its owner and mode (chmod 700) or set XDG_RUNTIME_DIR to your own (/run/user/\(geteuid()))")
        let directory = base + "/sfx"
        if mkdir(directory, 0o700) != 0, errno != EEXIST {
            throw DaemonError("cannot create the socket directory \(directory) (\(errnoText())); check that XDG_RUNTIME_DIR is writable")
        }
        try checkPrivate(directory)
        return try bind(directory + "/sfx.sock", mode: 0o600, group: nil)
    }

    /// A socket at `path` for system mode: 0660 and owned by `group` when given, else 0600.
    public static func system(path: String, group: gid_t?) throws(DaemonError) -> ListeningSocket {
        guard path.hasPrefix("/") else {
            throw DaemonError("--socket \(path) is not an absolute path; give one such as /run/sfx/sfx.sock")
        }
        let directory = String(path[..<path.lastIndex(of: "/")!])
        var info = stat()
        guard lstat(directory.isEmpty ? "/" : directory, &info) == 0 else {
            throw DaemonError("the socket directory \(directory) cannot be examined (\(errnoText())); create it (RuntimeDirectory=sfx in the unit)")
        }
        guard info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid() || info.st_uid == 0,
              info.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
            throw DaemonError("the socket directory \(directory) is not a directory owned by you or root that only its owner can write; use one such as /run/sfx")
        }
        return try bind(path, mode: group == nil ? 0o600 : 0o660, group: group)
    }

    /// The socket systemd passed (socket activation), or nil when none was passed to this process.
    public static func activated(environment: [String: String]) -> ListeningSocket? {
        guard let pid = environment["LISTEN_PID"].flatMap({ Int32($0) }), pid == getpid(),
              let count = environment["LISTEN_FDS"].flatMap({ Int($0) }), count >= 1 else { return nil }
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
        let fd: Int32 = 3
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return ListeningSocket(path: "(socket activation)", descriptor: fd, owned: false)
    }

    /// Removes the socket file when this process made it, and closes the socket.
    public func close() {
        if owned {
            var info = stat()
            if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK { unlink(path) }
        }
        Glibc.close(descriptor)
    }

    // MARK: Private

    /// Throws unless `directory` is a directory (not a link) of this user with none of the
    /// `closed` permission bits.
    private static func checkPrivate(_ directory: String, role: String = "the socket directory", closed: mode_t = 0o077,
                                     fix: String = "remove it or make it yours (chown, chmod 700)") throws(DaemonError) {
        var info = stat()
        guard lstat(directory, &info) == 0 else {
            throw DaemonError("\(role) \(directory) cannot be examined (\(errnoText())); remove it and start again")
        }
        if info.st_mode & S_IFMT != S_IFDIR {
            throw DaemonError("\(role) \(directory) is not a directory (a symbolic link or a file); \(fix)")
        }
        if info.st_uid != geteuid() {
            throw DaemonError("\(role) \(directory) belongs to uid \(info.st_uid), not to you (uid \(geteuid())); \(fix)")
        }
        if info.st_mode & closed != 0 {
            let what = closed == 0o077 ? "not 700" : "writable by other users"
            throw DaemonError("\(role) \(directory) has mode \(String(info.st_mode & 0o7777, radix: 8)), \(what); \(fix)")
        }
    }

    private static func bind(_ path: String, mode: mode_t, group: gid_t?) throws(DaemonError) -> ListeningSocket {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw DaemonError("the socket path \(path) is longer than a Unix socket allows (107 bytes); give a shorter --socket or XDG_RUNTIME_DIR")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        try replaceStale(path)
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw DaemonError("cannot make a socket (\(errnoText())); check the open-file limit") }
        // Created with no access for anyone else, then opened up to `mode`: never a moment of more.
        let previous = umask(0o177)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        let bindErrno = errno
        umask(previous)
        guard bound == 0 else {
            Glibc.close(fd)
            throw DaemonError("cannot listen at \(path) (\(errnoText(bindErrno))); give another --socket or stop what holds it")
        }
        if let group, chown(path, uid_t.max, group) != 0 {
            let code = errno
            unlink(path)
            Glibc.close(fd)
            throw DaemonError("cannot give the socket \(path) to group \(group) (\(errnoText(code))); run the daemon as root or as a member of the group")
        }
        if chmod(path, mode) != 0 || listen(fd, 256) != 0 {
            let code = errno
            unlink(path)
            Glibc.close(fd)
            throw DaemonError("cannot listen at \(path) (\(errnoText(code))); give another --socket")
        }
        return ListeningSocket(path: path, descriptor: fd, owned: true)
    }

    /// Removes a socket left by a daemon that is gone; refuses when one answers or the file is
    /// not this user's socket.
    private static func replaceStale(_ path: String) throws(DaemonError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK, info.st_uid == geteuid() else {
            throw DaemonError("\(path) exists and is not a socket of yours; remove it, or give another --socket")
        }
        let probe = sfx_client_connect(path, 1)
        // A full backlog (EAGAIN) is a daemon flooded or stuck, not gone: its socket stays.
        if probe >= 0 || probe == -EAGAIN || probe == -ETIMEDOUT {
            if probe >= 0 { Glibc.close(probe) }
            throw DaemonError("a daemon already answers at \(path); stop it first (`systemctl --user stop sfx`, or kill it) or give another --socket")
        }
        unlink(path)
    }
}

func errnoText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }
