import FoundationEssentials
import Glibc
import CSFXSystem

/// Whether a file found beside the running program can be trusted to load: no one but the user
/// or root could have put it there. The virtual card's plugin and the bundled sounds are both
/// looked for this way.
public enum TrustedPath {
    /// The first place that fails, and why.
    public struct Problem: Sendable, CustomStringConvertible {
        public let path: String
        /// "belongs to uid 1001, neither you nor root", "is writable by every user (mode 777)", …
        public let reason: String
        public var description: String { "\(path) \(reason)" }
    }

    /// Why `path` is not to be trusted, or nil when it and every directory between it and
    /// `anchor` (`anchor` itself excluded: it is the program's own place) belong to the user or
    /// root and are not writable by others.
    public static func problem(_ path: URL, below anchor: URL) -> Problem? {
        let anchorPath = anchor.standardizedFileURL.path
        var current = path.standardizedFileURL
        while current.path != anchorPath && current.path != "/" {
            var info = stat()
            guard stat(current.path, &info) == 0 else {
                let code = errno
                let name = sfx_errno_name(code).map { "\(String(cString: $0)): " } ?? ""
                return Problem(path: current.path, reason: "cannot be examined (\(name)\(String(cString: strerror(code))))")
            }
            if info.st_uid != geteuid() && info.st_uid != 0 {
                return Problem(path: current.path, reason: "belongs to uid \(info.st_uid), neither you nor root")
            }
            if info.st_mode & S_IWOTH != 0 {
                return Problem(path: current.path, reason: "is writable by every user (mode \(String(info.st_mode & 0o7777, radix: 8)))")
            }
            current = current.deletingLastPathComponent()
        }
        return nil
    }
}
