import CSFXSystem
import FoundationEssentials
import Glibc
import SFXSystem

/// Where a virtual card lives: a directory that only its user can write.
///
/// A card's directory holds the ALSA configuration that names the plugin library every client
/// loads, the state file every client maps, the event log and the recordings. Anyone else who
/// could write there could make the user's programs load a library of theirs, shorten the state
/// file under them (SIGBUS), or turn the log into a symbolic link to one of the user's files. So
/// a card directory must be *private*: a directory, not a symbolic link, owned by this process's
/// (effective) user, with no group or other write permission. The plugin checks the same when it
/// opens the card, and opens nothing in it through a symbolic link.
///
///     let dir = try CardDirectory.forUser()          // $XDG_RUNTIME_DIR/sfx/card, or a fresh mkdtemp one
///     let card = try VirtualCard(directory: dir)
public enum CardDirectory {
    /// The card `sfx play` uses on a machine without a sound card.
    ///
    /// With `XDG_RUNTIME_DIR` set (an absolute path; the directory must be private itself) it is
    /// `$XDG_RUNTIME_DIR/sfx/card`; else, with a home directory, `$XDG_STATE_HOME/sfx/card`
    /// (default `~/.local/state/sfx/card`). Either is created 0700 and kept from run to run, so
    /// a user finds the last recording in the same place and runs do not pile up directories.
    /// Only with neither, a fresh directory made by mkdtemp (0700): `$TMPDIR/sfx-card-XXXXXX`
    /// (`/tmp` when TMPDIR is unset), held (locked) while its descriptor is open; earlier runs'
    /// that no process holds any more are removed first (`removeAbandonedTemporaries`). An existing directory that is not private is refused,
    /// never used or changed; so is every directory on the way (from `$HOME`,
    /// `$XDG_STATE_HOME` or `$XDG_RUNTIME_DIR` down) that belongs to another user, as when
    /// root runs with another user's HOME (see `openForUser`).
    public static func forUser(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> URL {
        try openForUser(environment: environment).url
    }

    /// The card directory of `forUser`, opened component by component from its base down and
    /// checked on each descriptor (`OwnedDirectory`), and held open: give the card its
    /// `descriptorPath` (`VirtualCard(opened:…)`), and no rename of a directory above it, by
    /// anyone, can change which directory the card's configuration is read from.
    /// `name` other than "card" is a card directory of its own beside the user's (the daemon's).
    public static func openForUser(name: String = "card",
                                   environment: [String: String] = ProcessInfo.processInfo.environment) throws -> OwnedDirectory {
        do {
            if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/"),
               let opened = try OwnedDirectory.open(base: URL(filePath: runtime, directoryHint: .isDirectory), components: ["sfx", name],
                                                    create: true, privateCount: 3, role: "XDG_RUNTIME_DIR",
                                                    modeFix: "fix its owner and mode (chmod 700) or unset XDG_RUNTIME_DIR") {
                return opened
            }
            if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/"),
               let opened = try OwnedDirectory.open(base: URL(filePath: state, directoryHint: .isDirectory), components: ["sfx", name],
                                                    create: true, createBase: true, privateCount: 2, role: "XDG_STATE_HOME",
                                                    modeFix: modeFix) {
                return opened
            }
            if let home = environment["HOME"], home.hasPrefix("/"), home != "/",
               let opened = try OwnedDirectory.open(base: URL(filePath: home, directoryHint: .isDirectory),
                                                    components: [".local", "state", "sfx", name],
                                                    create: true, privateCount: 2, role: "HOME", modeFix: modeFix) {
                return opened
            }
        } catch {
            throw CardError("the card directory cannot be used: \(errorText(error))")
        }
        removeAbandonedTemporaries(environment: environment)
        let url = try makeTemporary(prefix: temporaryPrefix, environment: environment)
        do {
            guard let opened = try OwnedDirectory.open(base: url, components: [], create: false, privateCount: 1,
                                                       modeFix: "set TMPDIR to a directory of your own") else {
                throw CardError("the card directory \(url.path) vanished as it was made; set TMPDIR to a directory of your own")
            }
            // Held for as long as the directory is: a later run removes it only once this lock is free.
            _ = flock(opened.descriptor, LOCK_SH)
            return opened
        } catch let error as OwnedDirectory.Refusal {
            throw CardError("the card directory cannot be used: \(errorText(error))")
        }
    }

    private static let modeFix = "give a directory of your own that only you can write (chmod 700), or remove it"

    /// Creates `url` (0700; missing parents with the default mode) unless it exists, then checks
    /// that it is private: throws, naming the directory and the fix, when it is not.
    public static func prepare(_ url: URL) throws {
        let parent = url.deletingLastPathComponent()
        if !FileManager.default.fileExists(atPath: parent.path) {
            do {
                try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
            } catch {
                throw CardError("cannot create the card directory's parent \(parent.path) (\(errorText(error))); choose a writable place")
            }
        }
        try make(url)
    }

    /// The name a card directory made in TMPDIR starts with (with neither XDG_RUNTIME_DIR nor HOME).
    static let temporaryPrefix = "sfx-card-"

    /// Removes this user's card directories left in TMPDIR by earlier runs (with neither
    /// XDG_RUNTIME_DIR nor HOME each run makes one), so that they do not pile up: the last run's
    /// recording stays until the next run. Only a directory that is this user's (checked on its
    /// descriptor, never through a symbolic link), private, and not in use (no process holds
    /// its lock, which each run takes on its own) is emptied of its files and removed; any other
    /// is left alone. Best effort: nothing here throws.
    static func removeAbandonedTemporaries(environment: [String: String]) {
        let base = environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        let parent = Glibc.open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard parent >= 0 else { return }
        defer { close(parent) }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: base) else { return }
        for name in names where name.hasPrefix(temporaryPrefix) && name.count == temporaryPrefix.count + 6 {
            let fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_uid == geteuid(), info.st_mode & 0o077 == 0,
                  flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd/\(fd)")) ?? [] {
                _ = unlinkat(fd, entry, 0)
            }
            _ = unlinkat(parent, name, AT_REMOVEDIR)
        }
    }

    /// A new private directory `<TMPDIR or /tmp>/<prefix>XXXXXX`, made by mkdtemp (mode 0700).
    public static func makeTemporary(prefix: String = "sfxcard-",
                                     environment: [String: String] = ProcessInfo.processInfo.environment) throws -> URL {
        let base = environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        var template = Array((base.hasSuffix("/") ? base : base + "/").utf8CString.dropLast())
        template += Array("\(prefix)XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        guard made else {
            throw CardError("cannot make a card directory in \(base) (\(errnoName())); set TMPDIR to a writable directory")
        }
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let url = URL(filePath: path, directoryHint: .isDirectory)
        try verify(url, role: "the card directory", fix: "set TMPDIR to a directory of your own")
        return url
    }

    /// Throws unless `url` is private: a directory (lstat: not a symbolic link), owned by this
    /// process's user, not writable by group or others.
    public static func verify(_ url: URL) throws {
        try verify(url, role: "the card directory",
                   fix: "give a directory of your own that only you can write (chmod 700), or remove it")
    }

    // MARK: Private

    /// mkdir 0700, accepting one that exists, then `verify`.
    private static func make(_ url: URL) throws {
        if mkdir(url.path, 0o700) != 0 && errno != EEXIST {
            throw CardError("cannot create the card directory \(url.path) (\(errnoName())); choose a writable place")
        }
        try verify(url)
    }

    private static func verify(_ url: URL, role: String, fix: String) throws {
        var info = stat()
        guard lstat(url.path, &info) == 0 else {
            throw CardError("\(role) \(url.path) cannot be examined (\(errnoName())); \(fix)")
        }
        if let problem = problem(with: info, type: S_IFDIR) {
            throw CardError("\(role) \(url.path) \(problem); \(fix)")
        }
    }

    /// Why `info` is not the user's own private file of `type`, or nil when it is.
    static func problem(with info: stat, type: mode_t) -> String? {
        switch info.st_mode & S_IFMT {
        case type: break
        case S_IFLNK: return "is a symbolic link"
        default: return type == S_IFDIR ? "is not a directory" : "is not a regular file"
        }
        if info.st_uid != geteuid() {
            return "belongs to uid \(info.st_uid), not to you (uid \(geteuid()))"
        }
        if info.st_mode & (S_IWGRP | S_IWOTH) != 0 {
            return "is writable by other users (mode \(String(info.st_mode & 0o7777, radix: 8)))"
        }
        return nil
    }
}

/// The name and text of the current errno, e.g. "ELOOP: Too many levels of symbolic links".
func errnoName(_ code: Int32 = errno) -> String {
    let text = String(cString: strerror(code))
    return sfx_errno_name(code).map { "\(String(cString: $0)): \(text)" } ?? text
}
