import SFXMedia

/// The file format `sfx render` writes: from `--format`, else from the output's extension,
/// else WAV.
enum OutputFormat: String, CaseIterable {
    case wav, flac, ogg, opus, mp3, aiff, caf

    /// What each format is written as. WAV is 32-bit integer PCM, which keeps the mix to 2^-31
    /// of full scale (the limiter holds it within full scale) and which sox reads without a warning; FLAC
    /// is 24-bit, AIFF 16-bit, CAF 32-bit float.
    var encoding: AudioFileEncoding {
        switch self {
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
        default: return nil
        }
    }

    static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

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
