import SFXMedia

/// The file format `sfx render` writes: from `--format`, else from the output's extension,
/// else WAV.
enum OutputFormat: String, CaseIterable {
    case wav, flac, ogg, opus, mp3, aiff, caf, m4a

    /// What each format is written as. WAV is 32-bit integer PCM, which keeps the mix to 2^-31
    /// of full scale (the limiter holds it within full scale) and which sox reads without a warning; FLAC
    /// is 24-bit, AIFF 16-bit, CAF 32-bit float. M4A (AAC) is written through FFmpeg, as
    /// `sfx record` writes it, and has no libsndfile encoding (nil).
    var encoding: AudioFileEncoding? {
        switch self {
        case .m4a: nil
        case .wav: .wavPCM32
        case .flac: .flac24
        case .ogg: .oggVorbis
        case .opus: .oggOpus
        case .mp3: .mp3
        case .aiff: .aiffPCM16
        case .caf: .cafFloat32
        }
    }

    /// The format a file name's extension names, or nil.
    init?(fileName: String) {
        guard let name = Self.fileExtension(of: fileName) else { return nil }
        switch name {
        case "wav", "wave": self = .wav
        case "flac": self = .flac
        case "ogg", "oga": self = .ogg
        case "opus": self = .opus
        case "mp3": self = .mp3
        case "aif", "aiff", "aifc": self = .aiff
        case "caf": self = .caf
        case "m4a", "mp4", "aac": self = .m4a
        default: return nil
        }
    }

    static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// `--format`'s value, any case; "aac" and "vorbis" as users also call M4A and Ogg.
    init?(formatName: String) {
        switch formatName.lowercased() {
        case "aac": self = .m4a
        case "vorbis", "oga": self = .ogg
        case let name: self.init(rawValue: name)
        }
    }

    /// The extension of `fileName` when it names an audio format sfx reads but render does not
    /// write (.m4a, .wma, …), lowercased; nil otherwise (a writable one, or none).
    static func unwritableExtension(of fileName: String) -> String? {
        guard let name = fileExtension(of: fileName), OutputFormat(fileName: fileName) == nil else { return nil }
        return SoundArgument.audioExtensions.contains(name) ? name : nil
    }

    /// The extension of the last path component, lowercased, or nil.
    private static func fileExtension(of fileName: String) -> String? {
        guard let dot = fileName.lastIndex(of: "."), !fileName[dot...].contains("/") else { return nil }
        return fileName[fileName.index(after: dot)...].lowercased()
    }
}
