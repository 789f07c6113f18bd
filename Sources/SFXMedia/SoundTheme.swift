import FoundationEssentials
import Glibc

/// A sound file found for a sound name by `SoundThemeResolver`.
public struct ThemedSound: Sendable, Hashable, Codable {
    /// The name asked for ("message-new-instant").
    public var requestedName: String
    /// The name that matched after shortening at `-` ("message-new").
    public var matchedName: String
    /// The file (for a disabled sound, the `.disabled` marker file).
    public var path: String
    /// The theme the file belongs to; nil for an unthemed file directly in a sounds directory.
    public var theme: String?
}

/// The outcome of looking up a sound name.
public enum SoundLookup: Sendable, Hashable {
    /// Play this file.
    case found(ThemedSound)
    /// The theme turns this sound off with a `.disabled` file: play nothing, and say so.
    case disabled(ThemedSound)
    /// No theme in the chain, and no unthemed file, provides the name.
    case notFound

    /// The sound for `.found` and `.disabled`.
    public var sound: ThemedSound? {
        switch self {
        case .found(let sound), .disabled(let sound): return sound
        case .notFound: return nil
        }
    }
}

/// Finds sound files by name the way the freedesktop Sound Theme Specification describes and
/// libcanberra implements it, so `sfx play bell` plays what a desktop would.
///
/// ```swift
/// let themes = SoundThemeResolver(theme: "sfx", environment: ProcessInfo.processInfo.environment,
///                                 locale: "de_DE.UTF-8", extraBaseDirectories: [bundledSounds])
/// switch themes.lookup("message-new-instant") {
/// case .found(let sound): play(sound.path)
/// case .disabled: break                         // the theme says: silence
/// case .notFound: print("no such sound")
/// }
/// ```
///
/// **Base directories** (`baseDirectories`), in order: `$XDG_DATA_HOME/sounds` (default
/// `$HOME/.local/share/sounds`), each `$XDG_DATA_DIRS` entry + `/sounds` (default
/// `/usr/local/share:/usr/share`; relative entries are ignored), then the caller's extra
/// directories (the engine appends sfx's bundled Sounds/ last), then the in-memory directory
/// when given (sfx's bundled theme, synthesised, when no Sounds/ directory was found: see
/// `InMemorySoundDirectory`).
///
/// **Theme chain**: a theme's `index.theme` is read from the first base directory that has
/// `<theme>/index.theme`. Its `[Sound Theme]` `Directories` are added in order, each with the
/// `OutputProfile` of its own group; then each `Inherits` theme is loaded the same way,
/// depth-first; `freedesktop` is appended last if the chain did not reach it. A theme that does
/// not exist is skipped (libcanberra drops the whole chain then; skipping keeps the rest
/// usable), a theme already in the chain is not loaded twice, and if the requested theme does
/// not exist at all the chain starts at `freedesktop`.
///
/// **Lookup order**, loops from outermost to innermost, exactly as libcanberra nests them:
///
/// 1. place: every chain directory whose `OutputProfile` is the requested profile (a directory
///    with no `OutputProfile` matches any profile); then, if the request was not `stereo`, every
///    directory whose profile is `stereo`; then the requested theme's own top directory; then
///    the base directories themselves (unthemed files);
/// 2. base directory, in the order above;
/// 3. name: the full name, then the name cut at its last `-`, again and again
///    (`message-new-instant`, `message-new`, `message`);
/// 4. locale subdirectory: the locale as given (`de_DE.UTF-8@euro`), cut at `@`, cut at `_`,
///    `C`, then no locale subdirectory;
/// 5. extension: `.disabled`, `.oga`, `.ogg`, `.wav`.
///
/// The first file that exists wins, so a `.disabled` marker hides sounds further down.
public struct SoundThemeResolver: Sendable {
    /// One directory of a theme, as `index.theme` lists it.
    public struct ThemeDirectory: Sendable, Hashable {
        public var theme: String
        public var directory: String
        /// nil when the directory's group gives none: it then matches every profile.
        public var outputProfile: String?
    }

    /// The theme asked for.
    public let theme: String
    public let outputProfile: String
    public let locale: String
    /// The `sounds` directories searched, in order.
    public let baseDirectories: [String]
    /// The themes found, in chain order: the requested theme (unless it does not exist), its
    /// parents, then `freedesktop`.
    public let themes: [String]
    /// The directories of all themes in the chain, in chain order.
    public let directories: [ThemeDirectory]
    /// The base directory served from memory, searched last; nil when there is none.
    public let inMemory: InMemorySoundDirectory?
    /// What the chain's index.theme files get wrong, one line each naming the file and line:
    /// keys given twice in `[Sound Theme]` (`Inherits`: the last holds, as libcanberra reads
    /// it; `Directories`: every one counts, in order, since each names directories the theme
    /// describes).
    public let warnings: [String]

    /// - Parameters:
    ///   - theme: the theme to start from (the engine uses `sfx`, which inherits `freedesktop`).
    ///   - environment: where `HOME`, `XDG_DATA_HOME` and `XDG_DATA_DIRS` are read from.
    ///   - outputProfile: the profile to prefer, normally `stereo`.
    ///   - locale: the `LC_MESSAGES` locale (see `messagesLocale(environment:)`).
    ///   - extraBaseDirectories: `sounds` directories searched after the XDG ones.
    ///   - inMemory: a `sounds` directory held in memory, searched after all the others.
    public init(theme: String = "freedesktop", environment: [String: String], outputProfile: String = "stereo",
                locale: String = "C", extraBaseDirectories: [String] = [], inMemory: InMemorySoundDirectory? = nil) {
        self.theme = theme
        self.outputProfile = outputProfile
        self.locale = locale
        self.inMemory = inMemory
        self.baseDirectories = SoundThemeResolver.xdgSoundDirectories(environment: environment) + extraBaseDirectories
            + (inMemory.map { [$0.path] } ?? [])
        var loader = ChainLoader(baseDirectories: baseDirectories, inMemory: inMemory)
        loader.load(theme)
        loader.load(SoundThemeResolver.fallbackTheme)
        self.themes = loader.themes
        self.directories = loader.directories
        self.warnings = loader.warnings
    }

    /// The theme every chain ends with.
    public static let fallbackTheme = "freedesktop"

    /// The `LC_MESSAGES` locale the program gets, as `setlocale(LC_MESSAGES, "")` would give it
    /// and libcanberra uses: the first of `LC_ALL`, `LC_MESSAGES`, `LANG` that is set, when that
    /// locale is installed; else `C` (a locale that is not installed is not the program's, even
    /// though `LANG` names it).
    public static func messagesLocale(environment: [String: String],
                                      isInstalled: (String) -> Bool = SoundThemeResolver.isInstalledLocale) -> String {
        for key in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            if let value = environment[key], !value.isEmpty { return isInstalled(value) ? value : "C" }
        }
        return "C"
    }

    /// Whether the C library can load `locale` for messages (newlocale(3)).
    public static func isInstalledLocale(_ locale: String) -> Bool {
        // The C library's own locales, always there (C.UTF-8 is built into glibc since 2.35):
        // asking newlocale would read the locale archive for nothing.
        if ["C", "POSIX", "C.UTF-8", "C.utf8"].contains(locale) { return true }
        guard let loaded = newlocale(LC_MESSAGES_MASK, locale, nil) else { return false }
        freelocale(loaded)
        return true
    }

    /// `$XDG_DATA_HOME/sounds` then each `$XDG_DATA_DIRS/sounds`, with the specification's defaults.
    public static func xdgSoundDirectories(environment: [String: String]) -> [String] {
        var directories: [String] = []
        if let home = environment["XDG_DATA_HOME"], home.hasPrefix("/") {
            directories.append(home + "/sounds")
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            directories.append(home + "/.local/share/sounds")
        }
        let dataDirs = environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share"
        directories += dataDirs.split(separator: ":").filter { $0.hasPrefix("/") }.map { $0 + "/sounds" }
        return directories
    }

    /// Finds the file for `name`.
    public func lookup(_ name: String) -> SoundLookup {
        guard !name.isEmpty, !name.contains("/") else { return .notFound }
        for place in places {
            for base in baseDirectories {
                for candidate in SoundThemeResolver.shortenings(of: name) {
                    for localeDirectory in localeDirectories {
                        for suffix in SoundThemeResolver.suffixes {
                            let path = [base, place.subpath, localeDirectory, candidate + suffix]
                                .compactMap { $0 }.joined(separator: "/")
                            guard isFile(path) else { continue }
                            let sound = ThemedSound(requestedName: name, matchedName: candidate, path: path, theme: place.theme)
                            return suffix == ".disabled" ? .disabled(sound) : .found(sound)
                        }
                    }
                }
            }
        }
        return .notFound
    }

    /// Every sound name the chain provides, each with what `lookup` gives for it, sorted by name.
    /// Names are collected from the files in every place and locale directory searched.
    public func allSounds() -> [SoundLookup] {
        var names = Set<String>()
        for place in places {
            for base in baseDirectories {
                for localeDirectory in localeDirectories {
                    let directory = [base, place.subpath, localeDirectory].compactMap { $0 }.joined(separator: "/")
                    let files = inMemory?.contentsOfDirectory(directory)
                        ?? (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
                    for file in files {
                        guard let suffix = SoundThemeResolver.suffixes.first(where: { file.hasSuffix($0) }),
                              isFile(directory + "/" + file) else { continue }
                        names.insert(String(file.dropLast(suffix.count)))
                    }
                }
            }
        }
        return names.sorted().map(lookup).filter { $0 != .notFound }
    }

    // MARK: - The loops

    static let suffixes = [".disabled", ".oga", ".ogg", ".wav"]

    /// A place to look inside each base directory: a theme directory, a theme's top, or the base itself.
    private struct Place {
        var theme: String?
        var subpath: String?
    }

    private var places: [Place] {
        var profiles = [outputProfile]
        if outputProfile != "stereo" { profiles.append("stereo") }
        var places: [Place] = []
        for profile in profiles {
            for entry in directories where entry.outputProfile == nil || entry.outputProfile == profile {
                places.append(Place(theme: entry.theme, subpath: entry.theme + "/" + entry.directory))
            }
        }
        let top = themes.first ?? theme
        places.append(Place(theme: top, subpath: top))
        places.append(Place(theme: nil, subpath: nil))
        return places
    }

    /// The locale subdirectories, most specific first; nil is "no locale subdirectory".
    private var localeDirectories: [String?] {
        var result: [String?] = [locale]
        if let at = locale.firstIndex(of: "@") { result.append(String(locale[..<at])) }
        if let underscore = locale.firstIndex(of: "_") { result.append(String(locale[..<underscore])) }
        if locale != "C" { result.append("C") }
        result.append(nil)
        return result
    }

    /// `a-b-c`, `a-b`, `a`.
    static func shortenings(of name: String) -> [String] {
        var result = [name]
        var current = Substring(name)
        while let dash = current.lastIndex(of: "-"), dash > current.startIndex {
            current = current[..<dash]
            result.append(String(current))
        }
        return result
    }

    /// Whether `path` is a file: in memory for paths under the in-memory directory, else on disk.
    private func isFile(_ path: String) -> Bool {
        if let inMemory, let held = inMemory.holds(path) { return held }
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT != S_IFDIR)
    }
}

/// Loads a theme chain: each theme's directories, then its parents depth-first.
private struct ChainLoader {
    let baseDirectories: [String]
    let inMemory: InMemorySoundDirectory?
    var themes: [String] = []
    var directories: [SoundThemeResolver.ThemeDirectory] = []
    var warnings: [String] = []

    mutating func load(_ theme: String) {
        guard !themes.contains(theme), !theme.isEmpty, !theme.contains("/") else { return }
        // The first base directory that holds the theme (a plain loop: `lazy.compactMap(…).first`
        // ran the closure twice for the match, reading and parsing each index.theme twice).
        var found: (IniFile, String)?
        for base in baseDirectories {
            let path = "\(base)/\(theme)/index.theme"
            if let index = base == inMemory?.path ? inMemory?.index(of: theme) : try? IniFile(contentsOf: URL(filePath: path)) {
                found = (index, path)
                break
            }
        }
        guard let (index, path) = found else { return }
        themes.append(theme)
        let group = "Sound Theme"
        for duplicate in index.duplicates where duplicate.group == group && ["Inherits", "Directories"].contains(duplicate.key) {
            let lines = duplicate.lines.map(String.init).joined(separator: ",")
            let rule = duplicate.key == "Inherits" ? "the last one holds" : "every one counts, in order"
            warnings.append("\(path):\(lines): \(duplicate.key) is given \(duplicate.lines.count) times in [\(group)]; \(rule): join them into one line")
        }
        let listed = index.entries.filter { $0.group == group && $0.key == "Directories" }.flatMap { IniFile.list($0.value) }
        for directory in listed
        where !directories.contains(where: { $0.theme == theme && $0.directory == directory }) {
            directories.append(.init(theme: theme, directory: directory, outputProfile: index[directory, "OutputProfile"]))
        }
        for parent in index.list(group: "Sound Theme", key: "Inherits") {
            load(parent)
        }
    }
}
