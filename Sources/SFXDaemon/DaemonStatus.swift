import FoundationEssentials
import SFXSystem
import Glibc
import SFX

/// What `sfx status` shows, from the daemon or from an engine opened in-process.
public struct DaemonStatus: Codable, Sendable, Equatable {
    /// Whether a daemon answered (false: the command opened an engine of its own to look).
    public var daemon: Bool
    public var pid: Int32?
    public var socket: String?
    public var device: String
    public var format: String
    public var sampleRate: Int
    public var channels: Int
    public var periodFrames: Int
    public var bufferFrames: Int
    public var latencyMilliseconds: Double
    public var xruns: Int
    public var activeVoices: Int
    /// System sounds and custom sounds loaded now.
    public var systemSoundsLoaded: Int
    public var customSoundsLoaded: Int
    public var customSounds: [String]
    public var muted: Bool
    /// Why muted ("sfx's mute flag is on", "the output's Master switch is off"…); empty when not.
    public var muteSources: [String]
    public var muteFlag: Bool
    /// The configured haptic backend ("auto" when sfx picks the first available).
    public var hapticBackend: String
    /// Whether the output thread runs under SCHED_FIFO; nil before it first tried.
    public var schedFIFO: Bool?
    /// Seconds since the daemon started; nil in-process.
    public var uptimeSeconds: Double?
    public var clients: Int?
    /// Since the daemon started: plays and alerts done, sounds loaded, connections accepted;
    /// nil in-process (and from a daemon of an older version).
    public var playsServed: Int?
    public var loadsServed: Int?
    public var clientsServed: Int?
    /// Decoded bytes of the sounds clients loaded or are playing from a file.
    public var customSoundBytes: Int?
    /// Connections subscribed to alert notices (`notices`, `sfx alert --follow`) now, and since
    /// the start the notices handed to them and those dropped for a subscriber that did not
    /// read (its replies past the bound); nil in-process and from an older daemon.
    public var subscribers: Int?
    public var noticesSent: Int?
    public var noticesDropped: Int?
    /// What renders positional plays: "off" (panned), or the HRTF set (`metrics.hrtf`). Absent
    /// from a daemon older than positional plays.
    public var hrtf: String?
    /// What a frame written now waits before it is heard: sfx's queue plus what the device or the
    /// sound server holds after it (`metrics.outputLatency`), in ms; nil while no device plays.
    public var outputLatencyMilliseconds: Double?
    /// Why no device plays, with the fix (`metrics.deviceProblem`); nil while one does.
    public var deviceProblem: String?

    public init(engine: SoundEngine, daemon: Bool, systemSoundsLoaded: Int, customSounds: [String],
                hapticBackend: String, started: Double? = nil, socket: String? = nil, clients: Int? = nil) {
        let metrics = engine.metrics
        let p = metrics.parameters
        let mute = engine.muteState()
        self.daemon = daemon
        pid = daemon ? getpid() : nil
        self.socket = socket
        device = p.device
        format = p.format.rawValue
        sampleRate = p.sampleRate
        channels = p.channels
        periodFrames = p.periodFrames
        bufferFrames = p.bufferFrames
        latencyMilliseconds = (metrics.latencyEstimate.seconds * 1000 * 100).rounded() / 100
        xruns = metrics.xruns
        activeVoices = metrics.activeVoices
        self.systemSoundsLoaded = systemSoundsLoaded
        customSoundsLoaded = customSounds.count
        self.customSounds = customSounds.sorted()
        muted = mute.isMuted
        muteSources = mute.reasons.map(\.description)
        muteFlag = engine.configuration.muteFlag.isMuted
        self.hapticBackend = hapticBackend
        schedFIFO = metrics.realtimeGranted
        uptimeSeconds = started.map { ((DaemonStatus.now() - $0) * 10).rounded() / 10 }
        self.clients = clients
        hrtf = metrics.hrtf
        outputLatencyMilliseconds = metrics.outputLatency.map { ($0.seconds * 1000 * 100).rounded() / 100 }
        deviceProblem = metrics.deviceProblem
    }

    /// The lines `sfx status` prints.
    public var text: String {
        var lines: [String] = []
        if daemon {
            lines.append("daemon: running (pid \(pid.map(String.init) ?? "?"), \(socket ?? "?"), up \(Self.duration(uptimeSeconds ?? 0)), \(clients ?? 0) clients)")
            if let playsServed, let loadsServed, let clientsServed {
                lines.append("served: \(playsServed) plays, \(loadsServed) loads, \(clientsServed) clients")
            }
            if let subscribers, let noticesSent, let noticesDropped, subscribers + noticesSent + noticesDropped > 0 {
                lines.append("alert notices: \(subscribers) \(subscribers == 1 ? "subscriber" : "subscribers"), \(noticesSent) sent, \(noticesDropped) dropped (unread)")
            }
        } else {
            lines.append("daemon: not running (this engine was opened in-process to look)")
        }
        let periods = periodFrames > 0 ? bufferFrames / periodFrames : 0
        lines.append("device: \(device)" + (deviceProblem.map { " — not open: \($0)" } ?? ""))
        lines.append("format: \(format) \(sampleRate) Hz \(channels) ch, period \(periodFrames) × \(periods) = buffer \(bufferFrames) frames")
        lines.append("latency: ≤ \(String(cFormat: "%.2f", latencyMilliseconds)) ms from a play to the DAC; output "
                     + (outputLatencyMilliseconds.map { String(cFormat: "%.2f ms", $0) + " (queued, and the device's or the server's own)" } ?? (deviceProblem == nil ? "not known while the device is closed (it opens for the next sound)" : "unknown: no device")))
        lines.append("xruns: \(xruns)")
        lines.append("voices active: \(activeVoices)")
        lines.append("sounds loaded: \(systemSoundsLoaded) system, \(customSoundsLoaded) custom\(customSounds.isEmpty ? "" : " (" + customSounds.joined(separator: ", ") + ")")"
                     + (customSoundBytes.map { $0 > 0 ? String(cFormat: ", clients' %.1f MB", Double($0) / 1_048_576) : "" } ?? ""))
        lines.append("mute: " + (muted ? "muted — " + muteSources.joined(separator: "; ") : "not muted") + " (sfx's flag \(muteFlag ? "on" : "off"))")
        lines.append("haptics: \(hapticBackend)")
        lines.append("SCHED_FIFO: " + (schedFIFO.map { $0 ? "granted" : "refused (normal priority)" } ?? "not tried yet"))
        if let hrtf { lines.append("HRTF: \(hrtf)") }
        return lines.joined(separator: "\n")
    }

    /// The device and its setup in one line: "DEVICE: FORMAT RATE Hz CH ch, period P × N =
    /// buffer B frames, latency ≤ L ms, SCHED_FIFO, X xruns, V voices".
    public var setupLine: String {
        let periods = periodFrames > 0 ? bufferFrames / periodFrames : 0
        let priority = schedFIFO.map { $0 ? "SCHED_FIFO" : "normal priority (SCHED_FIFO refused)" } ?? "SCHED_FIFO not tried yet"
        return "\(device): \(format) \(sampleRate) Hz \(channels) ch, period \(periodFrames) × \(periods) = buffer \(bufferFrames) frames, "
            + "latency ≤ \(String(cFormat: "%.2f", latencyMilliseconds)) ms, \(priority), \(xruns) xruns, \(activeVoices) voices playing"
    }

    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds)
        return s >= 3600 ? "\(s / 3600) h \(s % 3600 / 60) min" : s >= 60 ? "\(s / 60) min \(s % 60) s" : "\(s) s"
    }

    /// CLOCK_MONOTONIC in seconds.
    public static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
    }
}

extension Duration {
    var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) * 1e-18
    }
}
