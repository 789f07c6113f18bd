import FoundationEssentials
import Glibc
import CSFXSystem

/// A directory of the user's own (settings, state, the virtual card), opened one component at
/// a time from a base directory down and checked on each descriptor, never by path.
///
/// Root running with another user's HOME (as `sudo -E` leaves it) would otherwise read her
/// `sfx.conf` (whose `[haptics] command` it runs) and load the ALSA configuration she writes in
/// the card's directory, and a check made by path can be raced: she renames a parent between
/// the check and the read. Here the base is opened (O_DIRECTORY), each component below it with
/// `openat(…, O_NOFOLLOW | O_DIRECTORY)` from the descriptor above, and every descriptor is
/// `fstat`ed: each must be a directory owned by the effective user (or by root, above the ones
/// sfx writes in), and the `privateCount` deepest (the ones sfx makes) owned by the effective
/// user and writable by no one else. What is read or written afterwards goes
/// through the descriptor (`openat`, or `descriptorPath`, `/proc/self/fd/N/.`, for a library such
/// as alsa-lib that takes a path), so renaming anything above it changes nothing.
///
///     let card = try OwnedDirectory.open(base: home, components: [".local", "state", "sfx", "card"],
///                                        create: true, privateCount: 2)
///     setenv("ALSA_CONFIG_PATH", card.descriptorPath + "/asound.conf", 1)
public final class OwnedDirectory: @unchecked Sendable {
    /// The directory as it was named (for messages).
    public let path: String
    /// The same, as a file URL.
    public var url: URL { URL(filePath: path, directoryHint: .isDirectory) }

    /// The path of `name` in this directory (for messages).
    public func path(of name: String) -> String { Self.joined(path, name) }

    private static func joined(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// The opened directory (O_CLOEXEC), closed with this object.
    public let descriptor: Int32

    init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// A path that reaches the opened directory itself whatever is renamed above it:
    /// `/proc/self/fd/N/.` (the trailing `.` lets an `O_NOFOLLOW` open of it succeed). Valid in
    /// this process while this object lives.
    public var descriptorPath: String { "/proc/self/fd/\(descriptor)/." }

    /// Why a directory was refused, in one line naming it and the fix.
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        public let path: String
        /// "belongs to uid 1001, not to you (uid 0)", "is a symbolic link", …
        public let reason: String
        public let fix: String
        /// True when the directory belongs to someone else (the fix is then to use one's own).
        public let foreign: Bool
        public var description: String { "\(path) \(reason); \(fix)" }
    }

    /// What to say when a directory belongs to another user.
    public static let foreignFix = "sfx uses only its own user's settings and state: run it with your own HOME "
        + "(sudo -H, not sudo -E) or as the directory's owner"

    /// Opens `base` and then `components` below it, each checked as described above; the last
    /// `privateCount` components must also be unwritable by group and others (`base` too when
    /// `privateCount` exceeds the components). With `create`, a missing component is made (mode
    /// 0700) and checked like the rest; without it, a missing one gives nil, as a missing base
    /// does unless `createBase`.
    /// `role` names the base in messages ("HOME", "XDG_RUNTIME_DIR"); `modeFix` is the fix for a
    /// directory others can write.
    public static func open(base: URL, components: [String], create: Bool, createBase: Bool = false, privateCount: Int,
                            role: String? = nil, modeFix: String = "make it yours alone (chmod 700)") throws(Refusal) -> OwnedDirectory? {
        try open(basePath: base.path, components: components, create: create, createBase: createBase,
                 privateCount: privateCount, role: role, modeFix: modeFix)
    }

    /// `open(base:…)` with the base as a path. The names below it are joined as text: Foundation's
    /// URL, its path taken for each message, cost every command a fifth of a millisecond.
    public static func open(basePath: String, components: [String], create: Bool, createBase: Bool = false, privateCount: Int,
                            role: String? = nil, modeFix: String = "make it yours alone (chmod 700)") throws(Refusal) -> OwnedDirectory? {
        var fd = Glibc.open(basePath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        let named = role.map { "\($0) \(basePath)" } ?? basePath
        if fd < 0 && errno == ENOENT && createBase {
            // Made as `mkdir -p` would, 0700; then opened and checked like any other.
            try? FileManager.default.createDirectory(atPath: basePath, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            fd = Glibc.open(basePath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }
        guard fd >= 0 else {
            if errno == ENOENT && !createBase { return nil }
            throw Refusal(path: named, reason: "cannot be opened (\(errnoText()))", fix: "give an existing directory of your own", foreign: false)
        }
        var path = basePath
        do throws(Refusal) {
            try check(fd, name: named, private: privateCount > components.count, modeFix: modeFix)
            for (index, component) in components.enumerated() {
                path = joined(path, component)
                let isPrivate = index >= components.count - privateCount
                var next = openat(fd, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                if next < 0 && errno == ENOENT {
                    guard create else { close(fd); return nil }
                    if mkdirat(fd, component, 0o700) != 0 && errno != EEXIST {
                        throw Refusal(path: path, reason: "cannot be created (\(errnoText()))",
                                      fix: "choose a writable place", foreign: false)
                    }
                    next = openat(fd, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                }
                guard next >= 0 else {
                    let code = errno
                    var info = stat()
                    if code == ELOOP || (code == ENOTDIR && fstatat(fd, component, &info, AT_SYMLINK_NOFOLLOW) == 0
                                         && info.st_mode & S_IFMT == S_IFLNK) {
                        throw Refusal(path: path, reason: "is a symbolic link", fix: "remove it (sfx makes a directory of its own there)", foreign: false)
                    }
                    if code == ENOTDIR {
                        throw Refusal(path: path, reason: "is not a directory", fix: "remove it or choose another place", foreign: false)
                    }
                    throw Refusal(path: path, reason: "cannot be opened (\(errnoText(code)))", fix: "check its owner and mode", foreign: false)
                }
                close(fd)
                fd = next
                try check(fd, name: path, private: isPrivate, modeFix: modeFix)
            }
        } catch {
            close(fd)
            throw error
        }
        return OwnedDirectory(path: path, descriptor: fd)
    }

    /// Throws unless the descriptor `fd` is a directory owned by the effective user (and, when
    /// `private`, not writable by group or others).
    private static func check(_ fd: Int32, name: String, private: Bool, modeFix: String) throws(Refusal) {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw Refusal(path: name, reason: "cannot be examined (\(errnoText()))", fix: "check it", foreign: false)
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw Refusal(path: name, reason: "is not a directory", fix: "choose another place", foreign: false)
        }
        // Root's directories above the user's own (HOME=/ in a container) are trusted: root can
        // do anything anyway. What sfx writes in must be the user's.
        if info.st_uid != geteuid() && (info.st_uid != 0 || `private`) {
            throw Refusal(path: name, reason: "belongs to uid \(info.st_uid), not to you (uid \(geteuid()))", fix: foreignFix, foreign: true)
        }
        if `private`, info.st_mode & (S_IWGRP | S_IWOTH) != 0 {
            throw Refusal(path: name, reason: "is writable by other users (mode \(String(info.st_mode & 0o7777, radix: 8)))",
                          fix: modeFix, foreign: false)
        }
    }

    /// Opens the file `name` in this directory for reading (O_NONBLOCK: no FIFO waited on; a
    /// symbolic link, say to a dotfiles folder, is followed and what it reaches is checked) and
    /// checks on the descriptor that it is a regular file owned by the effective user (or root)
    /// that no one else can write. `what` names it in messages ("a settings file"). Nil when it does not exist.
    public func openOwnedFile(_ name: String, what: String) throws(Refusal) -> Int32? {
        let path = self.path(of: name)
        let fd = openat(descriptor, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { return nil }
            throw Refusal(path: path, reason: "cannot be opened (\(errnoText(code)))", fix: "check its owner and mode", foreign: false)
        }
        var info = stat()
        let problem: Refusal?
        if fstat(fd, &info) != 0 {
            problem = Refusal(path: path, reason: "cannot be examined (\(errnoText()))", fix: "check it", foreign: false)
        } else if info.st_mode & S_IFMT != S_IFREG {
            let kind: String
            switch info.st_mode & S_IFMT {
            case S_IFDIR: kind = "a directory"
            case S_IFCHR: kind = "a character device"
            case S_IFBLK: kind = "a block device"
            case S_IFIFO: kind = "a FIFO"
            case S_IFSOCK: kind = "a socket"
            default: kind = "not a regular file"
            }
            problem = Refusal(path: path, reason: "is \(kind), not \(what)",
                              fix: "remove it or put \(what) (a text file) there", foreign: false)
        } else if info.st_uid != geteuid() && info.st_uid != 0 {
            problem = Refusal(path: path, reason: "belongs to uid \(info.st_uid), not to you (uid \(geteuid()))", fix: Self.foreignFix, foreign: true)
        } else if info.st_mode & (S_IWGRP | S_IWOTH) != 0 {
            problem = Refusal(path: path, reason: "is writable by other users (mode \(String(info.st_mode & 0o7777, radix: 8)))",
                              fix: "make it yours alone (chmod 600)", foreign: false)
        } else {
            problem = nil
        }
        if let problem {
            close(fd)
            throw problem
        }
        return fd
    }
}

/// "ENOENT: No such file or directory"
private func errnoText(_ code: Int32 = errno) -> String {
    let text = String(cString: strerror(code))
    return sfx_errno_name(code).map { "\(String(cString: $0)): \(text)" } ?? text
}
