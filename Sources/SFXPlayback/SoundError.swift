import SFXMedia

/// Why a sound could not be found, loaded or disposed. Its description is one line that names
/// the sound and, where there is one, the fix.
public enum SoundError: Error, CustomStringConvertible, Sendable {
    /// A file could not be decoded; the media error says which and why.
    case media(MediaError)
    case unknownSystemSound(name: String, theme: String)
    /// The theme has `NAME.disabled`: the sound exists and deliberately plays nothing. `theme`
    /// is "" for an unthemed marker directly in a sounds directory; `file` is the marker's path.
    case disabled(name: String, theme: String, file: String)
    case unknownID(SoundID)
    case systemSoundNotDisposable(SoundID)
    case bundleMissing(String)
    /// An offline mix's play starts outside the mix (`OfflineMix.maximumSeconds`), or not at a finite time.
    case startOutsideMix(at: Double, maximumSeconds: Int)

    /// The value of `result`, or its error as a `SoundError` (media errors wrapped).
    static func unwrap<T>(_ result: Result<T, any Error>) throws(SoundError) -> T {
        switch result {
        case .success(let value): return value
        case .failure(let error as MediaError): throw .media(error)
        case .failure(let error as SoundError): throw error
        case .failure(let error): throw .media(MediaError(.failed(detail: String(describing: error)), subject: "sound"))
        }
    }

    public var description: String {
        switch self {
        case .media(let error):
            return error.description
        case .unknownSystemSound(let name, let theme):
            return "no system sound named '\(name)' in theme '\(theme)' or the themes it inherits; `sfx list` shows the names there are"
        case .disabled(let name, let theme, let file):
            let marker = file.split(separator: "/").last.map(String.init) ?? "\(name).disabled"
            let by = theme.isEmpty ? "by the unthemed file \(file)" : "by theme '\(theme)' (it has \(marker))"
            return "system sound '\(name)' is disabled \(by): it plays nothing"
        case .unknownID(let id):
            return "no sound has id \(id): it was never loaded, or it was disposed"
        case .systemSoundNotDisposable(let id):
            return "sound \(id) is a system sound: system sounds are never disposed"
        case .bundleMissing(let reason):
            return reason
        case .startOutsideMix(let at, let maximum):
            return "a sound starting at \(at) s is outside the mix; start it between 0 and \(maximum) s"
        }
    }
}
