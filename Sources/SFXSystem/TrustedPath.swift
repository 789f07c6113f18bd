import Foundation
import Glibc

/// Whether a file found beside the running program can be trusted to load: no one but the user
/// or root could have put it there.
enum TrustedPath {
    /// Why `path` is not to be trusted, or nil when it and every directory between it and
    /// `anchor` (`anchor` itself excluded: it is the program's own place) belong to the user or
    /// root and are not writable by others.
    static func problem(_ path: URL, below anchor: URL) -> String? {
        let anchorPath = anchor.standardizedFileURL.path
        var current = path.standardizedFileURL
        while current.path != anchorPath && current.path != "/" {
            var info = stat()
            guard stat(current.path, &info) == 0 else {
                return "\(current.path) cannot be examined (\(errnoName()))"
            }
            if info.st_uid != geteuid() && info.st_uid != 0 {
                return "\(current.path) belongs to uid \(info.st_uid), neither you nor root"
            }
            if info.st_mode & S_IWOTH != 0 {
                return "\(current.path) is writable by every user (mode \(String(info.st_mode & 0o7777, radix: 8)))"
            }
            current = current.deletingLastPathComponent()
        }
        return nil
    }
}
