import SFXDevice

/// Where the output goes, for choosing the period defaults.
///
/// A card gets 128-frame periods × 3 (2.7 ms each, 8 ms of buffer): sfx's real-time thread
/// refills it at the card's pace, and that is the latency sfx exists for. A sound server mixes
/// every client into its own buffer (PipeWire's graph quantum, by default 1024 frames;
/// PulseAudio's sink fragments), so the server's latency comes on top of sfx's buffer whatever
/// sfx asks, while small periods make the whole server run at a small quantum: more wake-ups and
/// socket round trips for every client, and a stream that runs dry while the server settles
/// (128 × 2 through PulseAudio was granted as 128 × 3 and had up to 15 xruns in its first
/// 100 ms). Through a server sfx asks for 512 × 3 (10.7 ms periods, 32 ms buffered): it started
/// clean through both plugins, and with a looping sound sfx and PipeWire together used 24 CPU
/// ticks in 5 s against 44 at 128 × 3 (`sfx play bell --loops -1`, /proc/PID/stat).
enum OutputKind: CustomStringConvertible {
    case card
    case server(SoundServerKind)

    init(device: String) {
        self = SoundServer.server(behind: device).map { .server($0) } ?? .card
    }

    /// The period size this kind asks for when none is given; nil: the library's default.
    var periodFrames: Int? {
        switch self {
        case .card: nil
        case .server: 512
        }
    }

    /// The period count this kind asks for when none is given; nil: the library's default.
    var periodCount: Int? {
        switch self {
        case .card: nil
        case .server: 3
        }
    }

    var description: String {
        switch self {
        case .card: "a card or plain ALSA device"
        case .server(let kind): "a \(kind.rawValue) sound server"
        }
    }
}
