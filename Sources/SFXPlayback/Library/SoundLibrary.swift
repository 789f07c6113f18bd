import FoundationEssentials
import Glibc
import Synchronization
import SFXCore
import SFXMedia
import SFXSoundDesign

/// The registry of loaded sounds: system sounds by name and id, custom sounds by the `SoundID`
/// their load returned. What a `SoundEngine` plays; usable on its own for offline rendering.
///
/// System sounds come from the configured sound theme (sfx's bundled `sfx` theme by default,
/// which inherits `freedesktop`), looked up as the freedesktop Sound Theme Specification says
/// and decoded on first use; they are never disposed. Custom sounds are decoded from a file or
/// converted from a PCM buffer at load, get a new `SoundID`, and can be disposed.
///
/// Every sound is held as a `Cue` at the library's `format`: decoded and resampled once, here,
/// so nothing of the kind happens when it plays. All methods are safe to call from any thread.
public final class SoundLibrary: Sendable {
    public struct Configuration: Sendable {
        /// The format every cue is converted to: the mix's sample rate and channels.
        public var format: AudioFormat = .standard
        /// The sound theme system sounds come from.
        public var theme: String = "sfx"
        /// The freedesktop output profile to prefer ("stereo", "5.1", …).
        public var outputProfile: String = "stereo"
        /// How long a cue may be: cues are short sounds held whole in memory.
        public var limits: CueLimits = .standard
        /// The environment the theme lookup reads (XDG_DATA_HOME, XDG_DATA_DIRS, LC_MESSAGES, LANG).
        public var environment: [String: String] = ProcessInfo.processInfo.environment
        /// sfx's bundled sounds directory; nil finds it next to the program (see `SoundBundle`)
        /// and, when there is none, synthesises the bundled theme in memory, one sound at a time.
        public var bundledSounds: String?

        public init() {}
    }

    /// A system sound the theme chain provides.
    public struct SystemSound: Sendable, Equatable {
        public let id: SoundID?
        public let name: String
        /// The theme whose file was found (e.g. "sfx" or "freedesktop").
        public let theme: String
        public let file: String
        /// One line from the bundled theme's index; nil for sounds of other themes.
        public let description: String?
    }

    public let configuration: Configuration
    let resolver: SoundThemeResolver
    let decoder: AudioDecoder
    /// Names and ids of the bundled sounds, from the bundled theme's `[X-SFX Sounds]` group.
    let bundled: BundledCatalog
    /// The bundled theme in memory, when no bundled sounds directory was found.
    let builtIn: BuiltInTheme?
    private let state = Mutex(State())

    private struct Entry {
        let cue: Cue
        let isSystem: Bool
    }

    private struct State {
        var entries: [SoundID: Entry] = [:]
        var nextCustom = SoundID.firstCustom
        var uncatalogued: [String: SoundID] = [:]
        /// System sounds' cues by file: two names the themes give the same file
        /// (`alarm-clock-elapsed` and `alarm`) share one cue.
        var systemFiles: [String: Cue] = [:]
    }

    public convenience init(configuration: Configuration = Configuration()) throws(SoundError) {
        try self.init(configuration: configuration, themes: Themes(configuration: configuration))
    }

    /// `themes`: found for this configuration (`Themes(configuration:)`), whatever its format.
    init(configuration: Configuration, themes: Themes) {
        self.configuration = configuration
        resolver = themes.resolver
        bundled = themes.bundled
        builtIn = themes.builtIn
        decoder = AudioDecoder(format: configuration.format, limits: configuration.limits)
    }

    /// What a library knows of the sound themes, which does not depend on its format: where the
    /// bundled sounds are (or the bundled theme in memory), their catalog and the theme chain.
    /// Finding it reads the themes' index files (about a millisecond), so an engine finds it
    /// while its device opens.
    struct Themes: Sendable {
        let resolver: SoundThemeResolver
        let bundled: BundledCatalog
        let builtIn: BuiltInTheme?
    }

    /// The themes this library found, for another library of the same configuration at another format.
    var themes: Themes { Themes(resolver: resolver, bundled: bundled, builtIn: builtIn) }

    // MARK: System sounds

    /// The id of the system sound `name`, loading it on first use.
    public func systemSound(named name: String) throws(SoundError) -> SoundID {
        let match = try resolve(name)
        let id = systemID(named: name) ?? systemID(named: match.matchedName) ?? uncataloguedID(name)
        let known = state.withLock { state -> Bool in
            if state.entries[id] != nil { return true }
            guard let cue = state.systemFiles[match.path] else { return false }
            state.entries[id] = Entry(cue: cue, isSystem: true)
            return true
        }
        if known { return id }
        let cue = if let made = try synthesised(match.path, name: name) { made } else { try decode(URL(filePath: match.path), name: name) }
        return state.withLock { state in
            if state.entries[id] == nil { state.entries[id] = Entry(cue: state.systemFiles[match.path] ?? cue, isSystem: true) }
            if state.systemFiles[match.path] == nil { state.systemFiles[match.path] = cue }
            return id
        }
    }

    /// The system sound with the numeric id `id` (see `SoundID`), loading it on first use.
    public func systemSound(id: SoundID) throws(SoundError) -> SoundID {
        guard id.isSystem, let name = name(ofSystemID: id) else { throw .unknownID(id) }
        return try systemSound(named: name)
    }

    /// Every system sound the theme chain provides, bundled ones first, each name once.
    public func systemSounds() -> [SystemSound] {
        resolver.allSounds().compactMap { lookup -> SystemSound? in
            guard case .found(let sound) = lookup else { return nil }
            return SystemSound(id: systemID(named: sound.requestedName), name: sound.requestedName,
                               theme: sound.theme ?? "", file: sound.path,
                               description: bundledDescription(of: sound))
        }
        .sorted { ($0.id?.rawValue ?? .max, $0.name) < ($1.id?.rawValue ?? .max, $1.name) }
    }

    // MARK: Custom sounds

    /// Decodes a file (anything libsndfile reads) into a new custom sound; with `normalize`,
    /// brought to its target loudness first (true peak kept at or under its ceiling; silence
    /// cannot be normalised). Off by default: the file plays at its own level. Only regular files
    /// are read: a FIFO or a device is refused at once instead of blocking.
    public func load(contentsOf url: URL, normalize: LoudnessNormalization? = nil) throws(SoundError) -> SoundID {
        let cue = try decode(url, name: url.lastPathComponent)
        guard let normalize else { return register(cue) }
        return register(try SoundError.unwrap(Result { try normalize.apply(to: cue, subject: url.path) }))
    }

    /// `load(contentsOf:)` for a path given as raw bytes: names that are not valid UTF-8, which
    /// a `URL` cannot carry, load too.
    public func load(file: RawFilePath, normalize: LoudnessNormalization? = nil) throws(SoundError) -> SoundID {
        let cue = try SoundError.unwrap(Result { try decoder.decode(file: file) })
        guard let normalize else { return register(cue) }
        return register(try SoundError.unwrap(Result { try normalize.apply(to: cue, subject: file.description) }))
    }

    /// Converts interleaved float PCM (any rate, any channel count) into a new custom sound.
    public func load(buffer: [Float], sampleRate: Int, channels: Int, name: String = "buffer") throws(SoundError) -> SoundID {
        let converted = Result { try decoder.cue(interleaved: buffer, sampleRate: sampleRate, channels: channels, name: name) }
        return register(try SoundError.unwrap(converted))
    }

    /// Forgets a custom sound and returns its cue. The caller (the engine) keeps the cue alive
    /// until no voice reads it. Disposing a system sound is an error: they live as long as the library.
    @discardableResult
    public func dispose(_ id: SoundID) throws(SoundError) -> Cue {
        let removed: Result<Cue, SoundError> = state.withLock { state in
            guard let entry = state.entries[id] else { return .failure(.unknownID(id)) }
            guard !entry.isSystem else { return .failure(.systemSoundNotDisposable(id)) }
            state.entries[id] = nil
            return .success(entry.cue)
        }
        return try removed.get()
    }

    /// The cue a loaded id names, or nil when it was never loaded or has been disposed.
    public func cue(for id: SoundID) -> Cue? {
        state.withLock { $0.entries[id]?.cue }
    }

    // MARK: Helpers

    private func register(_ cue: Cue) -> SoundID {
        state.withLock { state in
            let id = SoundID(rawValue: state.nextCustom)
            state.nextCustom += 1
            state.entries[id] = Entry(cue: cue, isSystem: false)
            return id
        }
    }

    private func decode(_ url: URL, name: String) throws(SoundError) -> Cue {
        try SoundError.unwrap(Result { try decoder.decode(contentsOf: url, name: name) })
    }

    /// The cue of a bundled sound held in memory (nil for a file on disk), synthesised now.
    private func synthesised(_ path: String, name: String) throws(SoundError) -> Cue? {
        guard let builtIn else { return nil }
        return try SoundError.unwrap(Result { try builtIn.cue(at: path, name: name, decoder: decoder) })
    }

    private func resolve(_ name: String) throws(SoundError) -> ThemedSound {
        switch resolver.lookup(name) {
        case .found(let sound): return sound
        case .disabled(let sound): throw .disabled(name: name, theme: sound.theme ?? "", file: sound.path)
        case .notFound: throw .unknownSystemSound(name: name, theme: configuration.theme)
        }
    }

    /// A name that no table gives an id (a file of some installed theme outside the naming
    /// specification): it gets one from 10000 on, for this library's life.
    private func uncataloguedID(_ name: String) -> SoundID {
        state.withLock { state in
            if let id = state.uncatalogued[name] { return id }
            let id = SoundID(rawValue: SoundID.firstUncatalogued + UInt32(state.uncatalogued.count))
            state.uncatalogued[name] = id
            return id
        }
    }

    private func systemID(named name: String) -> SoundID? {
        if let id = bundled.entries[name]?.id { return SoundID(rawValue: id) }
        return SoundNamingSpec.idByName[name].map(SoundID.init(rawValue:))
    }

    func name(ofSystemID id: SoundID) -> String? {
        bundled.entries.first { $0.value.id == id.rawValue }?.key
            ?? SoundNamingSpec.idByName.first { $0.value == id.rawValue }?.key
            ?? state.withLock { $0.uncatalogued.first { $0.value == id }?.key }
    }
}

extension SoundLibrary {
    /// Where the system sound `name` comes from, without loading it.
    public func systemSoundFile(named name: String) throws(SoundError) -> SystemSound {
        let match = try resolve(name)
        return SystemSound(id: systemID(named: name) ?? systemID(named: match.matchedName), name: name,
                           theme: match.theme ?? "", file: match.path,
                           description: bundledDescription(of: match))
    }
}

extension SoundLibrary {
    /// sfx's description of a sound its own theme provides; nil for another theme's file (a
    /// freedesktop `bell.oga` is not sfx's "warm struck bell").
    func bundledDescription(of sound: ThemedSound) -> String? {
        sound.theme == SystemSoundTheme.name ? bundled.entries[sound.matchedName]?.description : nil
    }

    /// The loudness class of the system sound `name` ("input-feedback", "notification", "dialog",
    /// "alarm"), from the bundled theme's index; nil for a name it does not class.
    public func loudnessClass(ofSystemSound name: String) -> String? {
        bundled.loudnessClasses[name]
    }
}

extension SoundLibrary.Themes {
    /// Finds the themes for `configuration`. `executablePath`: the program whose bundled sounds
    /// are looked for (tests pass their own).
    init(configuration: SoundLibrary.Configuration, executablePath: String? = SoundBundle.currentImage()) throws(SoundError) {
        let bundle: String?
        do {
            bundle = try configuration.bundledSounds
                ?? SoundBundle.find(environment: configuration.environment, executablePath: executablePath)
        } catch {
            throw .bundleMissing(String(describing: error))
        }
        if let bundle {
            builtIn = nil
            bundled = BundledCatalog(directory: bundle)
        } else {
            let theme = BuiltInTheme()
            builtIn = theme
            bundled = BundledCatalog(builtIn: theme)
        }
        resolver = SoundThemeResolver(
            theme: configuration.theme, environment: configuration.environment,
            outputProfile: configuration.outputProfile,
            locale: SoundThemeResolver.messagesLocale(environment: configuration.environment),
            extraBaseDirectories: bundle.map { [$0] } ?? [], inMemory: builtIn?.directory)
    }
}
