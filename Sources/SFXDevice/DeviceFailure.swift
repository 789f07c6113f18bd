import CALSA
import CSFXALSA
import FoundationEssentials
import Glibc

/// Why a device did not open (or stopped), sorted by what fixes it, with its one line.
///
/// The errno alone does not say it: alsa-lib's `pipewire` plugin answers EHOSTDOWN when no
/// PipeWire runs for the user, its `pulse` plugin ECONNREFUSED for both a server that is not
/// there and one that turns the client away, and ENOENT means an unknown PCM name as well as a
/// card that is not there. So the error is read together with where the device leads in
/// alsa-lib's configuration (`PCMRoute`) and, for a server's plugin, whether the server's socket
/// answers (`SoundServer.reachable`):
///
/// | kind               | errno                                  | transient | fix in the line |
/// |--------------------|----------------------------------------|-----------|-----------------|
/// | `serverNotRunning` | EHOSTDOWN, ECONNREFUSED, ENOENT, ENODEV on the pipewire/pulse plugin, no socket answering | yes | start the server, or choose a card |
/// | `serverRefused`    | EHOSTDOWN, ECONNREFUSED there with the server's socket answering | no | run as the server's user / its cookie, or choose a card |
/// | `unknownName`      | ENOENT, the name is no PCM alsa-lib knows | no      | `sfx devices`, choose one |
/// | `noSuchDevice`     | ENOENT, ENXIO otherwise (no such card or device) | yes | plug it in, `sfx devices` |
/// | `unplugged`        | ENODEV (the card vanished)              | yes       | reopened when it comes back |
/// | `busy`             | EBUSY                                   | yes       | the holder named from /proc/asound when it says |
/// | `permissionDenied` | EACCES, EPERM                           | no        | the audio group |
/// | `unsupported`      | EINVAL                                  | no        | — (the operation says what was asked) |
/// | `other`            | the rest                                | EAGAIN, EINTR, ETIMEDOUT only | — |
public struct DeviceFailure: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case serverNotRunning(SoundServerKind)
        /// The server's socket (`socket`) answers, and the plugin still could not connect.
        case serverRefused(SoundServerKind, socket: String)
        case unknownName
        case noSuchDevice
        case unplugged
        /// `owner`: the program that holds the card's substream, when /proc/asound says.
        case busy(owner: Owner?)
        case permissionDenied
        case unsupported
        case other
    }

    /// A program holding a device: its pid and command (/proc/PID/comm) when readable.
    public struct Owner: Sendable, Equatable {
        public var pid: Int32
        public var command: String?

        public init(pid: Int32, command: String?) {
            self.pid = pid
            self.command = command
        }
    }

    public let error: ALSAError
    /// The plugins the device leads to ("plug pipewire"), empty when alsa-lib knows no such PCM.
    public let route: [String]
    public let kind: Kind

    /// Sorts `error` by the configuration and servers as they are now (see the table above).
    public init(_ error: ALSAError, environment: [String: String] = ProcessInfo.processInfo.environment,
                asoundRoot: String = "/proc/asound", procRoot: String = "/proc") {
        let route = PCMRoute.plugins(of: error.device)
        self.init(error, route: route, kind: DeviceFailure.kind(of: error, route: route, environment: environment,
                                                                asoundRoot: asoundRoot, procRoot: procRoot))
    }

    /// A failure sorted already (tests of the lines; callers that know better).
    public init(_ error: ALSAError, route: [String], kind: Kind) {
        self.error = error
        self.route = route
        self.kind = kind
    }

    static func kind(of error: ALSAError, route: [String], environment: [String: String],
                     asoundRoot: String, procRoot: String) -> Kind {
        let code = error.code
        let server = PCMRoute.server(on: route)
        // A server's plugin has no card to lose: ENODEV there (a stream whose server went away)
        // is the server not running too, when its socket no longer answers.
        if let server, [EHOSTDOWN, ECONNREFUSED, ENOENT, ENODEV].contains(code) {
            let socket = SoundServer.socketPaths(environment: environment).first { $0.kind == server }?.path
            guard let socket, SoundServer.accepts(socket) else { return .serverNotRunning(server) }
            if code == ECONNREFUSED || code == EHOSTDOWN { return .serverRefused(server, socket: socket) }
        }
        switch code {
        case ENOENT where route.isEmpty: return .unknownName
        case ENOENT, ENXIO: return .noSuchDevice
        case ENODEV: return .unplugged
        case EBUSY:
            return .busy(owner: CardName.playbackOwner(of: error.device, asoundRoot: asoundRoot, procRoot: procRoot)
                .map { Owner(pid: $0.pid, command: $0.command) })
        case EACCES, EPERM: return .permissionDenied
        case EINVAL: return .unsupported
        default: return .other
        }
    }

    /// Whether waiting may help (the server not up yet, the device absent, unplugged or busy, an
    /// interrupted call), as against a configuration error.
    public var isTransient: Bool {
        switch kind {
        case .serverNotRunning, .noSuchDevice, .unplugged, .busy: true
        case .serverRefused, .unknownName, .permissionDenied, .unsupported: false
        case .other: [EAGAIN, EINTR, ETIMEDOUT].contains(error.code)
        }
    }

    public var description: String { line }

    /// The one line: the device, what failed (the errno's name), the fix.
    public var line: String {
        let device = error.device
        let head = "audio device '\(device)'"
        let failed = "\(error.operation) failed"
        let errno = error.errnoName
        let choose = "choose a card with -D / output.device"
        switch kind {
        case .serverNotRunning(.pipewire):
            return "\(head): ALSA \"\(device)\" goes to PipeWire and no PipeWire server is running for this user: "
                + "start it (systemctl --user start pipewire pipewire-pulse wireplumber) or \(choose)"
        case .serverNotRunning(.pulseaudio):
            return "\(head): ALSA \"\(device)\" goes to PulseAudio and no PulseAudio server is running for this user: "
                + "start it (systemctl --user start pulseaudio, or pipewire-pulse where PipeWire serves PulseAudio's clients) or \(choose)"
        case .serverRefused(let server, let socket):
            let cookie = server == .pulseaudio ? ", give it the server's cookie (~/.config/pulse/cookie)" : ""
            return "\(head): ALSA \"\(device)\" goes to \(server.rawValue) and the server at \(socket) refused this client "
                + "(\(errno): access denied, as for a server of another user's): run sfx as the server's user\(cookie) "
                + "or start this user's own server, or \(choose)"
        case .unknownName:
            return "\(head): \(failed): ALSA knows no device of that name (\(errno)); "
                + "`sfx devices` lists the devices there are: choose one with -D / output.device"
        case .noSuchDevice:
            return "\(head): \(failed): no such card or device (\(errno)); plug the card in, or choose another "
                + "with -D / output.device (`sfx devices` lists the devices there are)"
        case .unplugged:
            return "\(head): \(failed): the card is gone (\(errno): unplugged or switched off); it is reopened when it "
                + "comes back: plug it in again, or choose another with -D / output.device (`sfx devices` lists the devices there are)"
        case .busy(let owner):
            let holder = owner.map { owner in owner.command.map { "\($0) (pid \(owner.pid))" } ?? "the program with pid \(owner.pid)" }
            return "\(head): \(failed): the device is busy (\(errno)); \(holder ?? "another program") holds it: close "
                + "\(holder == nil ? "the other program" : "it"), or use a shared device such as 'default' or 'dmix'"
        case .permissionDenied:
            return "\(head): \(failed): permission denied (\(errno)); add the user to the 'audio' group "
                + "(sudo usermod -aG audio $USER) and log in again"
        case .unsupported, .other:
            return "\(head): \(failed): \(String(cString: snd_strerror(-error.code))) (\(errno))"
        }
    }
}

/// Where an ALSA PCM leads, read through alsa-lib's configuration API (snd_config_update_ref,
/// snd_config_search_definition): its plugin type and its slaves' (`slave.pcm`, asym's
/// `playback.pcm`), a few levels deep — never by reading configuration files by hand.
public enum PCMRoute {
    /// The plugin types from `name` down ("plug", "pipewire"), at most `depth` of them; empty
    /// when alsa-lib's configuration defines no PCM of that name.
    public static func plugins(of name: String, depth: Int = 6) -> [String] {
        ALSALibrary.ready
        var buffer = [CChar](repeating: 0, count: 256)
        guard sfx_pcm_config_chain(name, Int32(depth), &buffer, buffer.count) > 0 else { return [] }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.split(separator: " ").map(String.init)
    }

    /// The sound server a route ends at: the first `pipewire` or `pulse` plugin on it.
    public static func server(on route: [String]) -> SoundServerKind? {
        for plugin in route {
            if plugin == "pipewire" { return .pipewire }
            if plugin == "pulse" { return .pulseaudio }
        }
        return nil
    }
}
