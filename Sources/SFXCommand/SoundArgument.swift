import FoundationEssentials
import CSFXSystem
import Glibc
import SFX
import SFXMedia

/// A sound on the command line, and the one rule that says what it is:
///
/// - `-` is audio read from standard input (as aplay and sox read it);
/// - text with a `/`, or ending in a known audio extension (`.wav`, `.ogg`, `.oga`, `.flac`,
///   `.opus`, `.mp3`, `.aiff`, …), is a file, whether or not it exists (a missing one says "no
///   such file");
/// - anything else is a system sound name, even when a file of that name is in the current
///   directory (`./bell` plays that file).
///
/// `-i NAME`/`--id NAME` and `-f FILE`/`--file FILE` force either, as canberra-gtk-play's do.
/// Paths keep the exact bytes given on the command line, so names that are not UTF-8 open too.
enum SoundArgument: Equatable {
    case file(RawFilePath)
    case standardInput
    case system(String)

    /// The system sound's name, or nil for a file.
    var systemName: String? {
        if case .system(let name) = self { name } else { nil }
    }

    /// Extensions that make a word a file name: what libsndfile and sfx's decoders read.
    static let audioExtensions: Set<String> = [
        "wav", "wave", "w64", "rf64", "oga", "ogg", "opus", "spx", "flac", "mp3", "mp2", "mpga",
        "aif", "aiff", "aifc", "caf", "au", "snd", "voc",
        "m4a", "m4b", "mp4", "aac", "alac", "wma", "mka", "webm",   // through FFmpeg
        "raw", "pcm",   // headerless: with --format
    ]

    /// The options that force the kind, shared by every subcommand that takes sounds.
    static let idOption = OptionSpec.option("id", short: "i", value: "NAME", repeatable: true,
                                            help: "A system sound name, even if it looks like a file.")
    static let fileOption = OptionSpec.option("file", short: "f", value: "FILE", repeatable: true,
                                              help: "A sound file (- for standard input), even if it has no / or extension.")

    init(_ text: String) {
        if text == "-" {
            self = .standardInput
        } else if Self.looksLikeFile(text) {
            self = .file(Self.rawBytes(of: text))
        } else {
            self = .system(text)
        }
    }

    /// Whether `text` is a file by the rule above.
    static func looksLikeFile(_ text: String) -> Bool {
        if text.contains("/") { return true }
        guard let dot = text.lastIndex(of: "."), dot > text.startIndex else { return false }
        return audioExtensions.contains(text[text.index(after: dot)...].lowercased())
    }

    /// The sounds of a command, in the order typed: positionals by the rule, `--id` and `--file` forced.
    static func all(in arguments: ParsedArguments) throws(UsageError) -> [SoundArgument] {
        let sounds: [SoundArgument] = arguments.ordered.compactMap { entry in
            switch entry.option {
            case nil: return SoundArgument(entry.value)
            case "id"?: return .system(entry.value)
            case "file"?: return entry.value == "-" ? .standardInput : .file(rawBytes(of: entry.value))
            default: return nil
            }
        }
        if sounds.isEmpty {
            throw UsageError(message: "missing expected argument 'NAME|FILE' (or --id NAME, --file FILE)", command: arguments.spec)
        }
        if sounds.filter({ $0 == .standardInput }).count > 1 {
            throw UsageError(message: "standard input (-) can be read only once", command: arguments.spec)
        }
        return sounds
    }

    /// Fails on the first file that cannot be found or examined, before a device is opened (so
    /// "no such file" is the only line printed); what it holds is checked when it is loaded.
    static func checkFilesExist(_ sounds: [SoundArgument]) throws {
        for case .file(let path) in sounds {
            var info = stat()
            if path.withCString({ stat($0, &info) }) != 0 { _ = try AudioFileInfo(file: path) }
        }
    }

    /// The command-line argument `text` came from, byte for byte: Swift's `CommandLine.arguments`
    /// replaces bytes that are not UTF-8 with U+FFFD, so the raw `argv` entry that decodes to
    /// `text` is used (the first, should two differ only in such bytes).
    static func rawBytes(of text: String) -> RawFilePath {
        for index in 0..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            let bytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(argument).assumingMemoryBound(to: UInt8.self),
                                                  count: strlen(argument)))
            if String(decoding: bytes, as: UTF8.self) == text { return RawFilePath(bytes: bytes) }
        }
        return RawFilePath(text)
    }

    /// The file behind the argument (standard input is read into memory first).
    func file(in library: SoundLibrary) throws -> RawFilePath {
        switch self {
        case .file(let path): return path
        case .standardInput: return try StandardInputAudio.shared.path()
        case .system(let name): return RawFilePath(try library.systemSoundFile(named: name).file)
        }
    }

    /// Loads the sound into `library`; a file is brought to `normalize`'s loudness when given
    /// (system sounds are already at their class's loudness).
    /// With `raw`, a file or standard input is headerless PCM of that layout (`--format`).
    func load(into library: SoundLibrary, normalize: LoudnessNormalization? = nil, raw: RawPCMFormat? = nil) throws -> SoundID {
        if let raw {
            switch self {
            case .file(let path):
                return try RawInput.load(path, raw: raw, name: path.lastComponent.description, into: library, normalize: normalize)
            case .standardInput:
                return try RawInput.load(try StandardInputAudio.shared.path(), raw: raw, name: "standard input (-)", into: library, normalize: normalize)
            case .system: break
            }
        }
        switch self {
        case .file(let path): return try library.load(file: path, normalize: normalize)
        case .standardInput: return try library.load(file: try StandardInputAudio.shared.path(), normalize: normalize)
        case .system(let name): return try Self.systemSound(named: name, in: library)
        }
    }

    /// The system sound `name`; when there is none and a file or directory of that name is in
    /// the current directory, the error says how to name it (`./NAME`), since a word without a /
    /// or an audio extension is never read as a file.
    static func systemSound(named name: String, in library: SoundLibrary) throws -> SoundID {
        do {
            return try library.systemSound(named: name)
        } catch {
            var info = stat()
            guard case .unknownSystemSound = error, rawBytes(of: name).withCString({ stat($0, &info) }) == 0 else { throw error }
            let kind = (info.st_mode & S_IFMT) == S_IFDIR ? "a directory" : "a file"
            let what = (info.st_mode & S_IFMT) == S_IFDIR ? "name a sound file in it (./\(name)/…)" : "write ./\(name) (or -f \(name)) to play it"
            throw Failure("no system sound named '\(name)' (`sfx list` shows them); \(kind) named \(name) is here: \(what)")
        }
    }
}

/// Audio piped to sfx (`-`): standard input read to its end into an anonymous in-memory file
/// (memfd: nothing on disk, no name another user could plant), opened by decoders through
/// `/proc/self/fd/N`, which is seekable as libsndfile needs whatever standard input is.
final class StandardInputAudio: @unchecked Sendable {
    /// Read once, from the main thread.
    nonisolated(unsafe) static let shared = StandardInputAudio()
    /// The most that is read: 256 MB (a cue holds at most 30 s; a file is never this large).
    static let maximumBytes = 256 << 20
    private var descriptor: Int32?

    /// `text` with the in-memory file's path (`/proc/self/fd/N`) named as the user gave it.
    static func named(_ text: String) -> String {
        guard let descriptor = shared.descriptor else { return text }
        return text.replacing("/proc/self/fd/\(descriptor)", with: "standard input (-)")
    }

    func path() throws -> RawFilePath {
        if let descriptor { return RawFilePath("/proc/self/fd/\(descriptor)") }
        let fd = sfx_memfd("sfx-stdin")
        guard fd >= 0 else { throw Failure("standard input: cannot hold it in memory (\(String(cString: strerror(errno)))); give a file instead of -") }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var total = 0
        while true {
            let got = read(STDIN_FILENO, &buffer, buffer.count)
            if got < 0 {
                if errno == EINTR { continue }
                close(fd)
                throw Failure("standard input: cannot be read (\(String(cString: strerror(errno)))); pipe a sound file to sfx or give its path")
            }
            if got == 0 { break }
            total += got
            guard total <= Self.maximumBytes else {
                close(fd)
                throw Failure("standard input: more than \(Self.maximumBytes >> 20) MB, too large for a sound; give a shorter file")
            }
            var offset = 0
            while offset < got {
                let written = buffer.withUnsafeBytes { write(fd, $0.baseAddress! + offset, got - offset) }
                guard written > 0 else {
                    close(fd)
                    throw Failure("standard input: cannot be held in memory (\(String(cString: strerror(errno)))); give a file instead of -")
                }
                offset += written
            }
        }
        guard total > 0 else {
            close(fd)
            throw Failure("standard input: is empty; pipe a sound file to sfx (sfx play - < bell.wav)")
        }
        descriptor = fd
        return RawFilePath("/proc/self/fd/\(fd)")
    }
}
