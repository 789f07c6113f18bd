import CSFXProtocol
import Glibc

/// A connection to the daemon, as the `sfx` command uses it: one request, one reply, in order.
///
///     guard let client = DaemonClient.connect() else { /* no daemon: play in-process */ }
///     let reply = try client.request(.play, ["name": "tock"])
///
/// It can also follow every alert the daemon makes, from any client (`sfx alert --follow`):
///
///     try client.subscribeToNotices()
///     while true { print("caption: \(try client.nextNotice().line)") }
public final class DaemonClient {
    /// An alert the daemon made, as a subscriber gets it (a `notice` frame; docs/PROTOCOL.md).
    public struct Notice: Sendable, Equatable {
        /// The alert's words (its caption, else the theme's description of the sound).
        public var caption: String
        /// The sound's name.
        public var sound: String
        /// How it reached the person: "heard", "felt", "flashed" comma-joined, or "none".
        public var reached: String
        /// The do-not-disturb window held it to its caption.
        public var quiet: Bool
        /// All of it in one line: "The generic alert [bell: heard]".
        public var line: String
        /// The id of the `notices` request the stream answers.
        public var id: UInt32

        public init(fields: Fields, id: UInt32) {
            caption = fields["caption"] ?? ""
            sound = fields["sound"] ?? ""
            reached = fields["reached"] ?? "none"
            quiet = fields["quiet"] == "true"
            line = fields["notice"] ?? "\(caption) [\(sound): \(reached)]"
            self.id = id
        }
    }

    /// The answer to one request.
    public struct Reply: Sendable {
        public var kind: ReplyKind
        public var id: UInt32
        public var payload: [UInt8]
        public var text: String { String(decoding: payload, as: UTF8.self) }
        public var fields: Fields { Fields(payload: payload) ?? Fields() }
    }

    /// What went wrong talking to the daemon.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// No socket path ($XDG_RUNTIME_DIR unset and no --socket): no daemon for this user.
        case noSocketPath
        /// Nothing listens there (connect failed with this errno), or the daemon is another user's.
        case unreachable(path: String, errno: Int32)
        /// The daemon went away, or did not answer in time, before it replied.
        case noReply(errno: Int32)
        /// The daemon is at one of its limits (its `busy:` line): run in-process.
        case busy(String)

        public var description: String {
            switch self {
            case .noSocketPath:
                return "no daemon socket: XDG_RUNTIME_DIR is not set; start `sfx serve` in a session that sets it, or give --socket PATH"
            case .unreachable(let path, let code) where code == EPERM:
                return "the socket \(path) belongs to a daemon of another user; start your own with `sfx serve`"
            case .unreachable(let path, let code) where code == EAGAIN || code == ETIMEDOUT:
                return "the daemon at \(path) did not take the connection in \(sfx_client_timeout_ms()) ms (its backlog is full: flooded or stuck); see `sfx status`, or add --no-daemon"
            case .unreachable(let path, let code):
                return "no daemon answers at \(path) (\(String(cString: strerror(code)))); start it with `sfx serve` (or `systemctl --user start sfx`)"
            case .noReply(let code) where code == ETIMEDOUT || code == EAGAIN:
                return "the daemon did not answer in time (\(String(cString: strerror(code)))); it is stuck or flooded: see `sfx status`, or add --no-daemon"
            case .noReply(let code):
                return "the daemon did not reply (\(String(cString: strerror(code)))); see `sfx status`, or add --no-daemon"
            case .busy(let line):
                return "the daemon is at a limit (\(line)); add --no-daemon, or try again"
            }
        }
    }

    public let path: String
    private let socket: Int32
    private var nextID: UInt32 = 1
    /// How long to wait for the reply to a request done on the daemon's worker or loader
    /// (status, mute, load, alert, vibrate, a passed file), in milliseconds.
    public var timeoutMilliseconds: Int32 = 10_000
    /// How long to wait for the reply to a quick request (play by name, stop): the client's
    /// budget (`SFX_CLIENT_TIMEOUT_MS`, or $SFX_DAEMON_TIMEOUT), after which it plays in-process.
    public var quickTimeoutMilliseconds: Int32 = sfx_client_timeout_ms()
    /// Notices that came while a reply was awaited, for `nextNotice` (at most `keptNotices`; the
    /// oldest go first).
    private var heldNotices: [Notice] = []
    static let keptNotices = 64

    private init(path: String, socket: Int32) {
        self.path = path
        self.socket = socket
    }

    deinit { close(socket) }

    /// The socket path: `explicit` when given, else $SFX_SOCKET, else
    /// $XDG_RUNTIME_DIR/sfx/sfx.sock; `named` is true for the first two.
    public static func socketPath(explicit: String? = nil) -> (path: String, named: Bool)? {
        if let explicit { return (explicit, true) }
        var buffer = [CChar](repeating: 0, count: 4096)
        let named = sfx_socket_path(&buffer, buffer.count)
        guard named >= 0 else { return nil }
        return (String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), named == 1)
    }

    /// Connects. At the user's own socket the daemon must be this user's or root's; a socket
    /// named on purpose (--socket, $SFX_SOCKET) may be a system daemon's of its own user.
    public static func connect(path explicit: String? = nil) throws(Failure) -> DaemonClient {
        guard let (path, named) = socketPath(explicit: explicit) else { throw .noSocketPath }
        let fd = sfx_client_connect(path, named ? 1 : 0)
        guard fd >= 0 else { throw .unreachable(path: path, errno: -fd) }
        return DaemonClient(path: path, socket: fd)
    }

    /// Sends one request (with `file` attached as a descriptor when given) and waits for its reply.
    /// A notice that comes meanwhile (after `subscribeToNotices`) is kept for `nextNotice`.
    public func request(_ kind: RequestKind, _ fields: Fields = Fields(), file: Int32? = nil) throws(Failure) -> Reply {
        let id = nextID
        nextID &+= 1
        let payload = fields.payload
        let sent = payload.withUnsafeBytes { sfx_send_frame(socket, kind.rawValue, id, $0.baseAddress, payload.count, file ?? -1) }
        // A daemon that refused this peer closed the connection after saying why: read that.
        let quick = kind.isQuick(hasFile: file != nil)
        let wait = sent != 0 ? 100 : quick ? quickTimeoutMilliseconds : timeoutMilliseconds
        let deadline = Self.milliseconds() + Int64(wait)
        while true {
            let frame: Reply
            do throws(Failure) {
                frame = try receive(timeoutMilliseconds: Int32(clamping: max(0, deadline - Self.milliseconds())))
            } catch {
                if sent != 0, case .noReply = error { throw .noReply(errno: -sent) }
                throw error
            }
            if frame.kind == .notice {
                heldNotices.append(Notice(fields: frame.fields, id: frame.id))
                if heldNotices.count > Self.keptNotices { heldNotices.removeFirst() }
                continue
            }
            guard sent == 0 || frame.kind == .error else { throw .noReply(errno: -sent) }
            return frame
        }
    }

    /// Asks the daemon for every alert notice from now on (request 10, `notices`), from any
    /// client; then `nextNotice` reads them. Asking again changes nothing. Returns the reply: ok,
    /// or an error whose line says why not (a peer the daemon refuses).
    @discardableResult
    public func subscribeToNotices() throws(Failure) -> Reply {
        try request(.notices)
    }

    /// The next alert notice (after `subscribeToNotices`), waiting up to `timeoutMilliseconds`
    /// (-1: until one comes). Throws `.noReply(ETIMEDOUT)` when none came in time, and
    /// `.noReply` with the reason when the daemon went away. Replies of other requests that come
    /// meanwhile are skipped.
    public func nextNotice(timeoutMilliseconds: Int32 = -1) throws(Failure) -> Notice {
        if !heldNotices.isEmpty { return heldNotices.removeFirst() }
        let deadline = timeoutMilliseconds < 0 ? Int64.max : Self.milliseconds() + Int64(timeoutMilliseconds)
        while true {
            let wait = timeoutMilliseconds < 0 ? -1 : Int32(clamping: max(0, deadline - Self.milliseconds()))
            let frame = try receive(timeoutMilliseconds: wait)
            if frame.kind == .notice { return Notice(fields: frame.fields, id: frame.id) }
        }
    }

    /// One frame from the daemon: a reply, or a notice.
    private func receive(timeoutMilliseconds: Int32) throws(Failure) -> Reply {
        var header = sfx_frame_header()
        var buffer = [CChar](repeating: 0, count: Frame.maximumSize)
        let received = sfx_receive_reply(socket, timeoutMilliseconds, &header, &buffer, buffer.count)
        guard received == 0 else { throw .noReply(errno: -received) }
        let bytes = buffer.prefix(Int(min(header.length, UInt32(buffer.count - 1)))).map { UInt8(bitPattern: $0) }
        if sfx_reply_is_busy(&header, buffer) != 0 { throw .busy(String(decoding: bytes, as: UTF8.self)) }
        guard let kind = ReplyKind(rawValue: header.type) else { throw .noReply(errno: EPROTO) }
        return Reply(kind: kind, id: header.id, payload: bytes)
    }

    /// CLOCK_MONOTONIC in milliseconds.
    private static func milliseconds() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Int64(t.tv_sec) * 1000 + Int64(t.tv_nsec) / 1_000_000
    }
}
