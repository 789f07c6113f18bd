import CSFXProtocol
import Dispatch
import Glibc
import Synchronization

/// Who may talk to the daemon, by SO_PEERCRED: the daemon's own user, root, and in system mode
/// the members of the configured group.
public struct PeerPolicy: Sendable {
    public var group: gid_t?
    public init(group: gid_t? = nil) { self.group = group }

    /// Why the peer on `socket` (with user `uid`) is refused, or nil when it is allowed.
    public func refusal(socket: Int32, uid: uid_t) -> String? {
        if uid == geteuid() || uid == 0 { return nil }
        if let group, sfx_peer_in_group(socket, group) != 0 { return nil }
        let who = group.map { "neither uid \(geteuid()), root nor in group \($0)" } ?? "neither uid \(geteuid()) nor root"
        return "refused: uid \(uid) is \(who); run sfx as the daemon's user, or start a system daemon with --group"
    }
}

/// The daemon's serving loop: one thread polls the listening socket and every client, so a slow
/// or vanished client never blocks the others.
///
/// Each message is one frame (SOCK_SEQPACKET); each gets exactly one reply. A malformed,
/// truncated, oversized or unknown frame gets an error reply and the connection goes on. Quick
/// requests (a play of a loaded sound, a stop) are answered on this thread; the others (decoding
/// a passed file, mute and status, which may ask a sound server) run in order on a worker, and
/// their replies come back here. Replies a client does not read wait in its outbox; while 64
/// wait, the daemon stops reading that client's requests (the others go on).
public final class DaemonServer: @unchecked Sendable {
    public let socket: ListeningSocket
    public let service: DaemonService
    public let policy: PeerPolicy
    /// Connections at once; more wait in the listen backlog.
    public static let maximumClients = 1024
    static let outboxLimit = 64

    /// Frames received, replies sent, and of them errors (for tests and `status`).
    public let framesReceived = Atomic<Int>(0)
    public let repliesSent = Atomic<Int>(0)
    public let errorsSent = Atomic<Int>(0)
    public let refusedPeers = Atomic<Int>(0)
    public let clientCount = Atomic<Int>(0)

    private let wake: Int32
    private let stopping = Atomic<Bool>(false)
    private let work = DispatchQueue(label: "sfx-daemon-work")
    private let finished = Mutex<[(client: UInt64, frame: [UInt8])]>([])

    private final class Client {
        let fd: Int32
        let serial: UInt64
        var outbox: [[UInt8]] = []
        /// A refused peer: told why, and kept only until it hangs up, its requests read and
        /// dropped (closing on unread requests would reset the connection, and the peer could
        /// lose the reply that says why).
        var refused = false
        init(fd: Int32, serial: UInt64) {
            self.fd = fd
            self.serial = serial
        }
    }

    // The loop thread's own state.
    private var clients: [Int32: Client] = [:]
    private var bySerial: [UInt64: Int32] = [:]
    private var nextSerial: UInt64 = 1
    /// Set when accept ran out of descriptors: the listener is left alone until a client goes
    /// (else poll would report it ready again at once, and the loop would spin).
    private var acceptPaused = false
    private let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: Frame.maximumSize)

    public init(socket: ListeningSocket, service: DaemonService, policy: PeerPolicy = PeerPolicy()) {
        self.socket = socket
        self.service = service
        self.policy = policy
        wake = sfx_wake_descriptor()
    }

    deinit {
        buffer.deallocate()
        close(wake)
    }

    /// Asks `run` to return (from any thread or a signal handler's queue).
    public func stop() {
        stopping.store(true, ordering: .releasing)
        var one: UInt64 = 1
        _ = write(wake, &one, 8)
    }

    /// Serves until `stop`; then waits for the worker's requests, closes every client and the socket.
    public func run() {
        var fds: [pollfd] = []
        var order: [Int32] = []
        while !stopping.load(ordering: .acquiring) {
            fds.removeAll(keepingCapacity: true)
            order.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: wake, events: Int16(POLLIN), revents: 0))
            let listening = clients.count < Self.maximumClients && !acceptPaused
            fds.append(pollfd(fd: socket.descriptor, events: listening ? Int16(POLLIN) : 0, revents: 0))
            for (fd, client) in clients {
                var events: Int16 = 0
                if client.outbox.count < Self.outboxLimit { events |= Int16(POLLIN) }
                if !client.outbox.isEmpty { events |= Int16(POLLOUT) }
                fds.append(pollfd(fd: fd, events: events, revents: 0))
                order.append(fd)
            }
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 { if errno == EINTR { continue }; break }
            if fds[0].revents != 0 { takeFinished() }
            if fds[1].revents & Int16(POLLIN) != 0 { acceptAll() }
            for (index, fd) in order.enumerated() {
                let revents = fds[index + 2].revents
                guard revents != 0, let client = clients[fd] else { continue }
                if revents & Int16(POLLOUT) != 0 { flush(client) }
                if revents & Int16(POLLIN) != 0 { readRequests(client) }
                else if revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { drop(client) }
            }
        }
        work.sync {}
        takeFinished()
        for client in Array(clients.values) {
            flush(client)
            drop(client)
        }
        socket.close()
    }

    // MARK: Connections

    private func acceptAll() {
        while clients.count < Self.maximumClients {
            let fd = sfx_accept(socket.descriptor)
            if fd == -EMFILE || fd == -ENFILE || fd == -ENOBUFS || fd == -ENOMEM { acceptPaused = true }
            if fd < 0 { return }
            var uid: uid_t = 0, gid: gid_t = 0
            let refusal = sfx_peer_credentials(fd, nil, &uid, &gid) == 0
                ? policy.refusal(socket: fd, uid: uid) : "refused: the peer's credentials cannot be read"
            let client = Client(fd: fd, serial: nextSerial)
            if let refusal {
                refusedPeers.wrappingAdd(1, ordering: .relaxed)
                if let frame = Frame.encode(type: ReplyKind.error.rawValue, id: 0, payload: Array(refusal.utf8)) {
                    _ = frame.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
                }
                shutdown(fd, Int32(SHUT_WR))
                client.refused = true
            }
            nextSerial += 1
            clients[fd] = client
            bySerial[client.serial] = fd
            clientCount.store(clients.count, ordering: .relaxed)
        }
    }

    private func drop(_ client: Client) {
        acceptPaused = false
        close(client.fd)
        clients[client.fd] = nil
        bySerial[client.serial] = nil
        clientCount.store(clients.count, ordering: .relaxed)
    }

    // MARK: Requests

    /// Reads up to 32 messages (so one busy client cannot hold the loop), answering each.
    private func readRequests(_ client: Client) {
        for _ in 0..<32 where client.outbox.count < Self.outboxLimit {
            var passed = [Int32](repeating: -1, count: 4)
            var count: Int32 = 0
            var truncated: Int32 = 0
            let got = sfx_receive_message(client.fd, buffer, Frame.maximumSize, &passed, 4, &count, &truncated)
            if got == -Int(EAGAIN) { return }
            if got <= 0 {
                drop(client)
                return
            }
            let descriptors = Array(passed.prefix(Int(count)))
            if client.refused {
                for fd in descriptors { close(fd) }
                continue
            }
            framesReceived.wrappingAdd(1, ordering: .relaxed)
            handle(client, size: got, truncated: truncated != 0, descriptors: descriptors)
            if clients[client.fd] !== client { return }
        }
    }

    private func handle(_ client: Client, size: Int, truncated: Bool, descriptors: [Int32]) {
        var header = sfx_frame_header()
        let problem = sfx_frame_decode(buffer, size, &header)
        // At most one descriptor is used, and only by a frame that says file=1.
        func closeAll() { for fd in descriptors { close(fd) } }
        if truncated {
            closeAll()
            return reply(client, id: header.id, .error, "the frame is larger than \(Frame.maximumSize) bytes; send shorter requests")
        }
        guard problem == SFX_FRAME_VALID.rawValue else {
            closeAll()
            return reply(client, id: header.id, .error, String(cString: sfx_frame_problem_text(problem)))
        }
        guard let kind = RequestKind(rawValue: header.type) else {
            closeAll()
            return reply(client, id: header.id, .error, "unknown request type \(header.type); this daemon speaks protocol 1 (types 1–7, docs/PROTOCOL.md)")
        }
        let payload = Array(UnsafeBufferPointer(start: buffer + Frame.headerSize, count: Int(header.length)))
        guard let fields = Fields(payload: payload) else {
            closeAll()
            return reply(client, id: header.id, .error, "the \(kind.name) request's payload is not UTF-8 key=value lines; see docs/PROTOCOL.md")
        }
        let file: Int32?
        if fields["file"] == "1" {
            guard descriptors.count == 1 else {
                closeAll()
                return reply(client, id: header.id, .error, "file=1 needs exactly one descriptor with the frame (SCM_RIGHTS); \(descriptors.count) came")
            }
            file = descriptors[0]
        } else {
            closeAll()
            file = nil
        }
        let id = header.id
        if service.isQuick(kind, fields, hasFile: file != nil) {
            let (replyKind, payload) = service.handle(kind, fields, file: file)
            return reply(client, id: id, replyKind, payload)
        }
        let serial = client.serial
        let clients = clientCount.load(ordering: .relaxed)
        let path = socket.path
        work.async { [self] in
            let (replyKind, payload) = service.handle(kind, fields, file: file, clients: clients, socket: path)
            let frame = Frame.encode(type: replyKind.rawValue, id: id, payload: payload)
                ?? Frame.encode(type: ReplyKind.error.rawValue, id: id, payload: Array("the reply is too long for a frame".utf8))!
            if replyKind == .error { errorsSent.wrappingAdd(1, ordering: .relaxed) }
            finished.withLock { $0.append((serial, frame)) }
            var one: UInt64 = 1
            _ = write(wake, &one, 8)
        }
    }

    private func takeFinished() {
        var value: UInt64 = 0
        _ = read(wake, &value, 8)
        let done = finished.withLock { list -> [(client: UInt64, frame: [UInt8])] in
            defer { list.removeAll() }
            return list
        }
        for (serial, frame) in done {
            guard let fd = bySerial[serial], let client = clients[fd] else { continue }   // gone meanwhile
            enqueue(client, frame)
        }
    }

    private func reply(_ client: Client, id: UInt32, _ kind: ReplyKind, _ text: String) {
        reply(client, id: id, kind, Array(text.utf8))
    }

    private func reply(_ client: Client, id: UInt32, _ kind: ReplyKind, _ payload: [UInt8]) {
        if kind == .error { errorsSent.wrappingAdd(1, ordering: .relaxed) }
        let frame = Frame.encode(type: kind.rawValue, id: id, payload: payload)
            ?? Frame.encode(type: ReplyKind.error.rawValue, id: id, payload: Array("the reply is too long for a frame".utf8))!
        enqueue(client, frame)
    }

    private func enqueue(_ client: Client, _ frame: [UInt8]) {
        client.outbox.append(frame)
        flush(client)
    }

    /// Sends what the client's socket takes now; the rest waits for POLLOUT.
    private func flush(_ client: Client) {
        while let frame = client.outbox.first {
            let sent = frame.withUnsafeBytes { send(client.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EAGAIN || errno == EINTR { return }
                client.outbox.removeAll()
                return   // the connection is gone; POLLHUP or the next read drops it
            }
            client.outbox.removeFirst()
            repliesSent.wrappingAdd(1, ordering: .relaxed)
        }
    }
}
