import Foundation

/// Finds the Sounds/ directory that ships with sfx (the `sfx` theme and its sounds) at run time.
///
/// ```swift
/// let sounds = try SoundBundle.locate()      // e.g. /usr/local/share/sfx/sounds
/// let themes = SoundThemeResolver(theme: "sfx", environment: env, extraBaseDirectories: [sounds])
/// ```
///
/// The first of these that is a directory wins:
/// 1. `$SFX_SOUNDS_DIR`, when set (an error if it is set but not a directory, since the user
///    asked for it);
/// 2. `../share/sfx/sounds` next to the executable's directory (an installed `sfx`; the
///    executable is found through /proc/self/exe);
/// 3. a `Sounds/` beside a `Package.swift`, walking up from the executable's directory (so
///    `.build/debug/sfx` in a checkout finds the repository's Sounds/);
/// 4. the same walk up from this source file's location (tests and tools run from elsewhere).
public enum SoundBundle {
    /// The environment variable that overrides the search.
    public static let environmentKey = "SFX_SOUNDS_DIR"

    /// Locates the bundled sounds directory. `executablePath` and `sourcePath` default to this
    /// process's executable and this source file; tests pass their own.
    public static func locate(environment: [String: String] = ProcessInfo.processInfo.environment,
                              executablePath: String? = currentExecutable(),
                              sourcePath: String = thisFile) throws -> String {
        if let override = environment[environmentKey], !override.isEmpty {
            guard isDirectory(override) else {
                throw MediaError(.failed(detail: "\(environmentKey) names no directory; point it at the directory holding sfx's sounds or unset it"),
                                 subject: override)
            }
            return override
        }
        var searched: [String] = []
        if let executablePath {
            let executableDirectory = URL(filePath: executablePath).deletingLastPathComponent()
            let installed = executableDirectory.appending(path: "../share/sfx/sounds").standardizedFileURL.path
            searched.append(installed)
            if isDirectory(installed) { return installed }
            if let found = repositorySounds(above: executableDirectory, searched: &searched) { return found }
        }
        if let found = repositorySounds(above: URL(filePath: sourcePath).deletingLastPathComponent(), searched: &searched) {
            return found
        }
        throw MediaError(.soundsDirectoryNotFound(searched: searched), subject: "sfx")
    }

    /// The running executable, from /proc/self/exe.
    public static func currentExecutable() -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    }

    /// This file's path when it was compiled.
    public static let thisFile: String = #filePath

    /// Walks from `start` up to `/`, returning the first `Sounds/` that sits beside a `Package.swift`.
    private static func repositorySounds(above start: URL, searched: inout [String]) -> String? {
        var directory = start.standardizedFileURL
        while true {
            let sounds = directory.appending(path: "Sounds").path
            if FileManager.default.fileExists(atPath: directory.appending(path: "Package.swift").path), isDirectory(sounds) {
                return sounds
            }
            let parent = directory.deletingLastPathComponent()
            if parent.path == directory.path { break }
            directory = parent
        }
        searched.append("Sounds/ beside a Package.swift above \(start.path)")
        return nil
    }

    private static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}
