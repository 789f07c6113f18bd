import FoundationEssentials
import Glibc
import SFXSystem
import CSFXMedia

/// Finds the Sounds/ directory that ships with sfx (the `sfx` theme and its sounds) at run time.
///
/// ```swift
/// let sounds = try SoundBundle.locate()      // e.g. /usr/local/share/sfx/sounds
/// let themes = SoundThemeResolver(theme: "sfx", environment: env, extraBaseDirectories: [sounds])
/// ```
///
/// The first of these that is a directory wins — all relative to the running program, never to
/// where sfx was built (a copied or installed program must not read sounds from its build tree,
/// where someone else might put some):
/// 1. `$SFX_SOUNDS_DIR`, when set (an error if it is set but not a directory, since the user
///    asked for it);
/// 2. `../share/sfx/sounds` next to the executable's directory (an installed `<prefix>/bin/sfx`;
///    the executable is found through /proc/self/exe), or next to the shared library's
///    directory when sfx is one (`<prefix>/lib/libsfx.so.0`, or Debian's multiarch
///    `<prefix>/lib/x86_64-linux-gnu/libsfx.so.0`, loaded by a C program: see `currentImage()`);
/// 3. the `Sounds/` of the SwiftPM package the executable was built in, when the executable
///    lives in that package's build directory: `<package>/.build/<configuration>/sfx` or
///    `<package>/.build/<triple>/<configuration>/sfx` with a `Package.swift` in `<package>`
///    (so `.build/debug/sfx`, and tests run from `.build`, find the checkout's sounds);
/// 4. only when a caller passes `sourcePath`: a `Sounds/` beside a `Package.swift`, walking up
///    from that file's directory.
///
/// A directory found by 2 or 3 is used only when it and every directory between it and the
/// prefix or package belong to the user or root and are not writable by every user.
///
/// When none is found, `find` gives nil and the engine synthesises the `sfx` theme in memory
/// (see `InMemorySoundDirectory`): a game binary copied anywhere still has every bundled sound.
public enum SoundBundle {
    /// The environment variable that overrides the search.
    public static let environmentKey = "SFX_SOUNDS_DIR"

    /// Locates the bundled sounds directory. `executablePath` defaults to this process's
    /// executable; tests pass their own.
    public static func locate(environment: [String: String] = ProcessInfo.processInfo.environment,
                              executablePath: String? = currentExecutable(),
                              sourcePath: String? = nil) throws -> String {
        if let override = environment[environmentKey], !override.isEmpty {
            guard isDirectory(override) else {
                throw MediaError(.failed(detail: "\(environmentKey) names no directory; point it at the directory holding sfx's sounds or unset it"),
                                 subject: override)
            }
            return override
        }
        var searched: [String] = []
        if let executablePath {
            let executableDirectory = URL(filePath: executablePath).deletingLastPathComponent().standardizedFileURL
            let prefix = installPrefix(of: executableDirectory)
            let installed = prefix.appending(path: "share/sfx/sounds").standardizedFileURL.path
            searched.append(installed)
            if isDirectory(installed) { return try trusted(installed, below: prefix.path) }
            if let package = buildPackage(of: executableDirectory) {
                let sounds = package.appending(path: "Sounds").path
                searched.append(sounds)
                if isDirectory(sounds) { return try trusted(sounds, below: package.path) }
            }
        }
        if let sourcePath,
           let found = repositorySounds(above: URL(filePath: sourcePath).deletingLastPathComponent(), searched: &searched) {
            return found
        }
        throw MediaError(.soundsDirectoryNotFound(searched: searched), subject: "sfx")
    }

    /// `locate`, but nil instead of an error when no directory is found. A directory that is
    /// found but not trusted, or an `SFX_SOUNDS_DIR` that names no directory, is still an error:
    /// something is there, and the user should hear about it.
    public static func find(environment: [String: String] = ProcessInfo.processInfo.environment,
                            executablePath: String? = currentExecutable()) throws -> String? {
        do {
            return try locate(environment: environment, executablePath: executablePath)
        } catch let error as MediaError {
            if case .soundsDirectoryNotFound = error.reason { return nil }
            throw error
        }
    }

    /// The running executable, from /proc/self/exe.
    public static func currentExecutable() -> String? {
        // readlink(2) itself: FileManager's first use costs a command's start-up about 0.1 ms.
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The file that holds sfx's code in this process: the shared library when a program loaded
    /// one (libsfx.so, for a C program: `<prefix>/lib/libsfx.so.0` → `<prefix>/share/sfx/sounds`),
    /// found with dladdr; the executable when sfx is linked into it.
    public static func currentImage() -> String? {
        guard let library = sfx_media_library_path() else { return currentExecutable() }
        defer { free(library) }
        return String(cString: library)
    }

    /// The prefix a program or library in `directory` was installed under: `<prefix>/bin`,
    /// `<prefix>/lib`, or a multiarch library directory `<prefix>/lib/<triplet>` (Debian's
    /// `/usr/lib/x86_64-linux-gnu/libsfx.so.0` → `/usr`).
    static func installPrefix(of directory: URL) -> URL {
        let parent = directory.deletingLastPathComponent()
        if parent.lastPathComponent == "lib", isMultiarchTriplet(directory.lastPathComponent) {
            return parent.deletingLastPathComponent()
        }
        return parent
    }

    /// A GNU multiarch triplet as Debian names its library directories: `x86_64-linux-gnu`,
    /// `aarch64-linux-gnu`, `arm-linux-gnueabihf`.
    static func isMultiarchTriplet(_ name: String) -> Bool {
        let parts = name.split(separator: "-", omittingEmptySubsequences: false)
        return parts.count == 3 && parts[1] == "linux" && parts.allSatisfy { part in
            !part.isEmpty && part.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_") }
        }
    }

    /// The package whose SwiftPM build directory holds `directory`: `<package>/.build/<x>` or
    /// `<package>/.build/<x>/<y>`, with a Package.swift in `<package>`.
    private static func buildPackage(of directory: URL) -> URL? {
        let up1 = directory.deletingLastPathComponent(), up2 = up1.deletingLastPathComponent()
        for build in [up1, up2] where build.lastPathComponent == ".build" {
            let package = build.deletingLastPathComponent()
            if FileManager.default.fileExists(atPath: package.appending(path: "Package.swift").path) {
                return package
            }
        }
        return nil
    }

    /// `path` when it and each directory between it and `anchor` belong to the user or root and
    /// are not writable by every user; an error naming the first that fails otherwise.
    private static func trusted(_ path: String, below anchor: String) throws -> String {
        if let problem = TrustedPath.problem(URL(filePath: path), below: URL(filePath: anchor)) {
            throw MediaError(.failed(detail: "\(problem.reason), so sfx does not take its sounds from there; remove it, or set \(environmentKey) to a sounds directory of your own"),
                             subject: problem.path)
        }
        return path
    }

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
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT == S_IFDIR)
    }
}

/// A `sounds` base directory held in memory for `SoundThemeResolver`: each theme's
/// `index.theme` text and the paths of its files, whose contents the owner makes when one is
/// played (the engine synthesises sfx's bundled theme this way when no Sounds/ directory exists).
///
/// ```swift
/// let memory = InMemorySoundDirectory(indexes: ["sfx": indexText], files: ["sfx/stereo/tock.wav"])
/// let themes = SoundThemeResolver(theme: "sfx", environment: env, inMemory: memory)
/// themes.lookup("tock")        // .found: "/dev/null/built-in/sfx/stereo/tock.wav"
/// ```
///
/// Its `path` stands for the directory in the paths the resolver returns, and nothing under it
/// is looked up on disk. The default is a path no file can have (/dev/null is not a directory),
/// so a program that opens such a path anyway fails instead of reading a file someone planted
/// (as it could under a relative path).
public struct InMemorySoundDirectory: Sendable {
    /// What the directory is called in paths: `/dev/null/built-in` by default.
    public let path: String
    /// `index.theme` text by theme name.
    public let indexes: [String: String]
    /// Every file, relative to the directory (`sfx/stereo/tock.wav`).
    public let files: Set<String>

    public init(path: String = "/dev/null/built-in", indexes: [String: String], files: Set<String>) {
        self.path = path
        self.indexes = indexes
        self.files = files
    }

    /// `path` relative to this directory, or nil when it is not under it.
    public func relativePath(_ path: String) -> String? {
        guard path.hasPrefix(self.path + "/") else { return nil }
        return String(path.dropFirst(self.path.count + 1))
    }

    /// Whether this directory holds the file `path`; nil when `path` is not under it.
    func holds(_ path: String) -> Bool? {
        relativePath(path).map { files.contains($0) }
    }

    /// The names in `directory` (files and subdirectories); nil when `directory` is not under it.
    func contentsOfDirectory(_ directory: String) -> [String]? {
        guard let relative = directory == path ? "" : relativePath(directory) else { return nil }
        let prefix = relative.isEmpty ? "" : relative + "/"
        return Array(Set(files.compactMap { file -> String? in
            guard file.hasPrefix(prefix) else { return nil }
            return file.dropFirst(prefix.count).split(separator: "/").first.map(String.init)
        }))
    }

    /// The parsed index of `theme`, or nil when this directory has none.
    func index(of theme: String) -> IniFile? {
        indexes[theme].map(IniFile.init(parsing:))
    }
}
