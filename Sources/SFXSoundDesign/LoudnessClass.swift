/// How loud a bundled sound is meant to be, by what it is for: every sound of a class sits at the
/// class's target loudness (EBU R128, in LUFS), so one event is never much louder than the next.
///
/// The targets were chosen against the installed freedesktop theme, which sfx's theme inherits
/// from (`FreedesktopLevels` holds its measured levels), so that a sound sfx does not bundle
/// plays at about the level of the sfx sounds around it. Phone UI sounds are the model: quiet,
/// consistent within their class, and louder only where they must be heard across a room.
///
/// Loudness is measured as `SFXMedia.Loudness` does, with libebur128: integrated loudness for
/// sounds of 400 ms or more, the loudest 400 ms window (momentary max) for shorter ones.
public enum LoudnessClass: String, Sendable, CaseIterable {
    /// Taps, keys, latches, shutters: the answer to something the user just did.
    case inputFeedback = "input-feedback"
    /// Something happened: a message, a device, power, a session, a finished task.
    case notification
    /// Something wants an answer or attention, in front of the user.
    case dialog
    /// Something must be heard from across the room: alarms, failures, a low battery.
    case alarm

    /// The target loudness in LUFS.
    public var target: Double {
        switch self {
        case .inputFeedback: return -30
        case .notification: return -26
        case .dialog: return -24
        case .alarm: return -14
        }
    }

    /// Why the class sits where it does, for the theme's README (which lists the freedesktop
    /// levels it was set against beside it).
    public var reason: String {
        switch self {
        case .inputFeedback:
            return "Heard on every touch and key, right at the device, and only confirms: the quietest class, "
                + "in the middle of the range of freedesktop's own clicks and shutters"
        case .notification:
            return "Tells of something that happened while the user may be looking elsewhere: 4 LU over input "
                + "feedback, in the middle of the wide range of freedesktop's event sounds"
        case .dialog:
            return "Comes with something on screen that wants an answer: 2 LU over notifications, "
                + "between freedesktop's bell and its dialog and window sounds"
        case .alarm:
            return "Must be heard across a room and over speech: 10 LU over dialogs, yet under freedesktop's "
                + "ringing and alarm sounds, the loudest of either theme"
        }
    }

    /// How the class is written in the README and `sfx list`.
    public var title: String { rawValue }
}
