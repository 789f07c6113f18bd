import Foundation

/// Where SwiftPM put what it built: the running test bundle, and beside it the `sfx` program,
/// `sfx-front`, `sfx-fuzz`, the card's plugin, the libraries and the modules.
public enum BuildProducts {
    /// The running test bundle's executable (`/proc/self/exe`), for tests that run a selection
    /// of their own tests in a child process; `CommandLine.arguments[0]` where /proc is missing.
    public static var testExecutable: URL {
        URL(filePath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
    }

    /// The directory of the test bundle: `.build/<configuration>`.
    public static var directory: URL { testExecutable.deletingLastPathComponent() }

    /// A product beside the test bundle, such as `sfx` or `libSFXC.so`.
    public static func product(_ name: String) -> URL { directory.appending(path: name) }
}
