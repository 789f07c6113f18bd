import CSFXALSA
import CSFXPulse
import FoundationEssentials
import Glibc

/// A sound server that ALSA's `default` may lead to: PipeWire (through the `pipewire` ALSA
/// plugin, or the `pulse` one served by pipewire-pulse) or PulseAudio (the `pulse` plugin).
public enum SoundServerKind: String, Sendable, Codable, CaseIterable {
    case pipewire = "PipeWire"
    case pulseaudio = "PulseAudio"

    /// The ALSA PCM (from pipewire-alsa or libasound2-plugins) that plays to this server.
    public var pcmName: String {
        switch self {
        case .pipewire: "pipewire"
        case .pulseaudio: "pulse"
        }
    }
}

/// Finding a running sound server, and reading what it says about sfx's sound.
public enum SoundServer {
    /// The servers whose sockets accept a connection now, PipeWire first: `$PIPEWIRE_RUNTIME_DIR`
    /// (else `$XDG_RUNTIME_DIR`)/`$PIPEWIRE_REMOTE` (else `pipewire-0`), and the PulseAudio
    /// protocol's `$PULSE_SERVER` (`unix:` only), else `$PULSE_RUNTIME_PATH/native`, else
    /// `$XDG_RUNTIME_DIR/pulse/native` (pipewire-pulse answers there too).
    public static func reachable(environment: [String: String] = ProcessInfo.processInfo.environment) -> [SoundServerKind] {
        socketPaths(environment: environment).filter { accepts($0.path) }.map(\.kind)
    }

    /// True when a process accepts connections on the Unix socket at `path`.
    static func accepts(_ path: String) -> Bool {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }   // the rest stays 0
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } == 0
    }

    static func socketPaths(environment: [String: String]) -> [(kind: SoundServerKind, path: String)] {
        var paths: [(SoundServerKind, String)] = []
        let runtime = environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? $0 : nil }
        if let directory = environment["PIPEWIRE_RUNTIME_DIR"] ?? runtime {
            let remote = environment["PIPEWIRE_REMOTE"] ?? "pipewire-0"
            paths.append((.pipewire, remote.hasPrefix("/") ? remote : directory + "/" + remote))
        }
        if let server = environment["PULSE_SERVER"], server.hasPrefix("unix:") {
            paths.append((.pulseaudio, String(server.dropFirst(5))))
        } else if let directory = environment["PULSE_RUNTIME_PATH"] {
            paths.append((.pulseaudio, directory + "/native"))
        } else if let runtime {
            paths.append((.pulseaudio, runtime + "/pulse/native"))
        }
        return paths
    }

    /// The ALSA PCM to play through when there is no sound card but a server runs: the first
    /// reachable server whose plugin alsa-lib's configuration defines, or nil.
    public static func preferredPCM(environment: [String: String] = ProcessInfo.processInfo.environment) -> (server: SoundServerKind, pcm: String)? {
        for kind in reachable(environment: environment) where pcmType(kind.pcmName) != nil {
            return (kind, kind.pcmName)
        }
        return nil
    }

    /// The `type` of an ALSA PCM in alsa-lib's configuration ("pipewire", "pulse", "hw", …), or
    /// nil when the name is not a defined PCM.
    public static func pcmType(_ name: String) -> String? {
        ALSALibrary.ready
        var buffer = [CChar](repeating: 0, count: 64)
        guard sfx_pcm_config_type(name, &buffer, buffer.count) == 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The server an ALSA PCM plays to, from its configured type, or nil for other devices.
    public static func server(behind device: String) -> SoundServerKind? {
        switch pcmType(device) {
        case "pipewire": .pipewire
        case "pulse": .pulseaudio
        default: nil
        }
    }

    /// What the server says about the sink and sfx's stream, through libpulse's introspection
    /// (PulseAudio, or pipewire-pulse), or nil when no server answers within `timeout`. Call it
    /// from an ordinary thread: it connects, asks and disconnects.
    public static func state(timeout: Duration = .milliseconds(500),
                             program: String = ProcessInfo.processInfo.processName,
                             pid: Int32 = getpid()) -> SoundServerState? {
        var raw = sfx_pulse_state()
        let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard sfx_pulse_query(program, pid, milliseconds, &raw) == 0 else { return nil }
        return SoundServerState(raw)
    }
}

/// The sound server's view of where sfx's sound goes, as `SoundServer.state` reads it.
public struct SoundServerState: Sendable, Equatable {
    public struct Stream: Sendable, Equatable {
        /// The application name the server knows the stream by ("ALSA plug-in [sfx]", "PipeWire ALSA [sfx]").
        public var application: String
        public var muted: Bool
        /// The loudest channel, 1 = 100 %; nil when the server keeps none.
        public var volume: Double?
    }

    /// "PulseAudio (on PipeWire 0.3.65)", "pulseaudio".
    public var serverName: String
    /// The sink sfx's stream plays to (or the default sink), and its switch and volume.
    public var sinkName: String?
    public var sinkDescription: String?
    public var sinkMuted: Bool?
    public var sinkVolume: Double?
    /// sfx's own stream, playing now (a sink-input of this process), once the session manager
    /// has set it up. The server lists a new stream before that: pipewire-pulse shows one of the
    /// pipewire plugin unmuted at volume 0 until it has read the stream's volume, and with no
    /// sink until it is routed — a few milliseconds, far longer on a busy or freshly started
    /// machine — so such a stream is read again every 5 ms until it is muted, or routed with a
    /// volume above 0, for at most three quarters of the timeout. One still routed at volume 0
    /// then counts as that; one still not routed is not read (`unsettledStreams`).
    public var stream: Stream?
    /// sfx's streams still not set up when the wait ended.
    public var unsettledStreams: Int
    /// How often sfx's streams were read again, waiting for the session manager.
    public var rereads: Int
    /// What the server will apply to sfx's next stream (its stream-restore entry).
    public var restored: Stream?

    init(_ raw: sfx_pulse_state) {
        var raw = raw
        func text<T>(_ field: inout T) -> String {
            withUnsafeBytes(of: &field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        serverName = text(&raw.server_name)
        let sink = text(&raw.sink_name)
        sinkName = sink.isEmpty ? nil : sink
        let description = text(&raw.sink_description)
        sinkDescription = description.isEmpty ? nil : description
        sinkMuted = raw.sink_mute < 0 ? nil : raw.sink_mute == 1
        sinkVolume = raw.sink_volume < 0 ? nil : raw.sink_volume
        stream = raw.stream_found == 1
            ? Stream(application: text(&raw.stream_name), muted: raw.stream_mute == 1,
                     volume: raw.stream_volume < 0 ? nil : raw.stream_volume)
            : nil
        unsettledStreams = Int(raw.streams_unsettled)
        rereads = Int(raw.stream_rereads)
        restored = raw.restore_found == 1
            ? Stream(application: text(&raw.restore_name), muted: raw.restore_mute == 1,
                     volume: raw.restore_volume < 0 ? nil : raw.restore_volume)
            : nil
    }

    /// Every reason the server keeps sfx's sound from being heard, each one line; empty when none.
    /// sfx's stream playing now decides; without one set up, the entry the server will apply does.
    public var silencingReasons: [String] {
        var reasons: [String] = []
        let sink = sinkDescription.map { "the sink \"\($0)\"" } ?? sinkName.map { "the sink \($0)" } ?? "the sink"
        if sinkMuted == true { reasons.append("\(sink) is muted") }
        if let sinkVolume, sinkVolume <= 0 { reasons.append("\(sink) is at zero volume") }
        if let own = stream ?? restored {
            let which = stream != nil ? "sfx's stream (\(own.application))" : "sfx's streams (\(own.application), as the server remembers them)"
            if own.muted { reasons.append("\(which) is muted") }
            if let volume = own.volume, volume <= 0 { reasons.append("\(which) is at zero volume") }
        }
        return reasons
    }
}
