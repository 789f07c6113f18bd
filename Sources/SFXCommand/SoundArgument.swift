import Foundation
import SFX
import SFXMedia

/// `NAME|FILE`: a path when it names an existing file or looks like one, else a system sound.
/// Paths keep the exact bytes given on the command line, so names that are not UTF-8 open too.
enum SoundArgument {
    case file(RawFilePath)
    case system(String)

    init(_ text: String) {
        let path = SoundArgument.rawBytes(of: text)
        var st = stat()
        if text.contains("/") || path.withCString({ stat($0, &st) }) == 0 {
            self = .file(path)
        } else {
            self = .system(text)
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

    /// The file behind the argument.
    func file(in library: SoundLibrary) throws -> RawFilePath {
        switch self {
        case .file(let path): return path
        case .system(let name): return RawFilePath(try library.systemSoundFile(named: name).file)
        }
    }

    /// Loads the sound into `library`; a file is brought to `normalize`'s loudness when given
    /// (system sounds are already at their class's loudness).
    func load(into library: SoundLibrary, normalize: LoudnessNormalization? = nil) throws -> SoundID {
        switch self {
        case .file(let path): return try library.load(file: path, normalize: normalize)
        case .system(let name): return try library.systemSound(named: name)
        }
    }
}
