import CSFXProtocol
import Dispatch
import Glibc
import SFX
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
/// truncated, oversized, empty or unknown frame gets an error reply and the connection goes on.
/// Quick requests (a play of a loaded sound, a stop) are answered on this thread; requests that
/// pass a file (load, a play or alert of a file) are read and decoded in order on the loader,
/// the others (mute and status, which may ask a sound server, alert, vibrate) in order on the
/// worker, so a slow file never holds a status; their replies come back here.
///
/// Nothing a client does is kept without bound (`DaemonLimits`): a connection has at most
/// `queuedRequestsPerClient` requests on the worker and loader and 64 replies or
/// `outgoingBytesPerClient` / 2 bytes waiting before the daemon stops reading it (what it sends
/// meanwhile waits in the kernel, descriptors too); one that reads none of its replies for
/// `unreadTimeoutSeconds`, or does nothing for `idleTimeoutSeconds`, is closed; at the limits
/// of connections the longest-idle one makes room, and a newcomer is told `busy:` when none is idle.
///
/// A connection that sends `notices` is a subscriber: every alert notice of the service's engine
/// (from any client) is pushed to it as a `notice` frame, through its outbox like a reply. The
/// notices come on the engine's delivery thread and reach this thread as the worker's replies
/// do (a list and the wake descriptor). A subscriber is never closed for being idle or for
/// notices it leaves unread, nor to make room: while its outbox is at the bound at which the
/// daemon stops reading a client, its notices are dropped and counted (`noticesDropped`).
public final class DaemonServer: @unchecked Sendable {
    public let socket: ListeningSocket
    public let service: DaemonService
    public let policy: PeerPolicy
    public let limits: DaemonLimits
    static let outboxLimit = 64
    /// A connection idle for less than this is never closed to make room for another.
    static let evictableAfterSeconds = 1.0
    /// SO_SNDBUF of a client's connection (the kernel doubles it): about 28 status replies.
    static let socketBuffer: Int32 = 32 << 10

    /// Frames received, replies sent, and of them errors (for tests and `status`).
    public let framesReceived = Atomic<Int>(0)
    public let repliesSent = Atomic<Int>(0)
    public let errorsSent = Atomic<Int>(0)
    public let refusedPeers = Atomic<Int>(0)
    public let clientCount = Atomic<Int>(0)
    /// Connections accepted since the start, refused ones included.
    public let clientsServed = Atomic<Int>(0)
    /// Connections closed by the daemon: idle, not reading, or to make room.
    public let clientsClosed = Atomic<Int>(0)
    /// Connections subscribed to alert notices now; notices queued for them, and dropped (a
    /// subscriber's outbox at its bound, or more than `noticeBacklog` waiting for this thread).
    public let subscriberCount = Atomic<Int>(0)
    public let noticesSent = Atomic<Int>(0)
    public let noticesDropped = Atomic<Int>(0)
    /// Notices made and not yet taken by the loop thread, at most (each a payload).
    static let noticeBacklog = 256

    private let wake: Int32
    private let stopping = Atomic<Bool>(false)
    private let work = DispatchQueue(label: "sfx-daemon-work")
    private let loader = DispatchQueue(label: "sfx-daemon-load")
    private let finished = Mutex<[(client: UInt64, frame: [UInt8], file: Bool)]>([])
    /// Alert notices' payloads from the engine's delivery thread, for the subscribers.
    private let notices = Mutex<[[UInt8]]>([])
    /// Requests with a file on the loader, from every client (the loop thread's).
    private var filesInHand = 0

    private final class Client {
        let fd: Int32
        let serial: UInt64
        let uid: uid_t
        var outbox: [[UInt8]] = []
        var outboxBytes = 0
        /// Requests on the worker or the loader.
        var pending = 0
        /// When a frame last came or a reply last went (CLOCK_MONOTONIC seconds).
        var lastActivity: Double
        /// Since when replies have waited with none taken by the client, or nil when none wait.
        var unreadSince: Double?
        /// A refused peer: told why, and kept only until it hangs up (at most a second), its
        /// requests read and dropped (closing on unread requests would reset the connection,
        /// and the peer could lose the reply that says why).
        var refused = false
        /// The id of its `notices` request: it gets every alert notice, with this id.
        var noticesID: UInt32?
        init(fd: Int32, serial: UInt64, uid: uid_t, now: Double) {
            self.fd = fd
            self.serial = serial
            self.uid = uid
            lastActivity = now
        }

        var idle: Bool { pending == 0 && outbox.isEmpty }
    }

    // The loop thread's own state.
    private var clients: [Int32: Client] = [:]
    private var bySerial: [UInt64: Int32] = [:]
    private var perUser: [uid_t: Int] = [:]
    /// The clients subscribed to notices, by descriptor.
    private var subscribers: [Int32: Client] = [:]
    private var nextSerial: UInt64 = 1
    /// Before this time no connection has been idle long enough to be closed for room (a client
    /// that joins or becomes idle later is younger still).
    private var noneEvictableUntil = 0.0
    /// Set when accept ran out of descriptors, or every connection is in use at the limit: the
    /// listener is left alone until a client goes (else poll would report it ready again at
    /// once, and the loop would spin); the clients wait in the listen backlog, and a client that
    /// finds it full falls back to playing in-process.
    private var acceptPaused = false
    private let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: Frame.maximumSize)

    public init(socket: ListeningSocket, service: DaemonService, policy: PeerPolicy = PeerPolicy(), limits: DaemonLimits = DaemonLimits()) {
        self.socket = socket
        self.service = service
        self.policy = policy
        self.limits = limits
        wake = sfx_wake_descriptor()
        service.onNotice { [weak self] notice in self?.post(notice) }
    }

    deinit {
        buffer.deallocate()
        close(wake)
    }

    /// Asks `run` to return (from any thread or a signal handler's queue).
    public func stop() {
        stopping.store(true, ordering: .releasing)
        wakeUp()
    }

    private func wakeUp() {
        var one: UInt64 = 1
        _ = write(wake, &one, 8)
    }

    /// An alert notice of the engine (on its delivery thread): handed to the loop thread for the
    /// subscribers, or dropped for each of them when the loop has not taken `noticeBacklog` yet.
    private func post(_ notice: AlertNotice) {
        let listening = subscriberCount.load(ordering: .relaxed)
        guard listening > 0 else { return }
        let payload = Fields(DaemonService.fields(of: notice)).payload
        let kept = notices.withLock { list in
            guard list.count < Self.noticeBacklog else { return false }
            list.append(payload)
            return true
        }
        if kept { wakeUp() } else { noticesDropped.wrappingAdd(listening, ordering: .relaxed) }
    }

    /// Serves until `stop`; then waits for the worker's and loader's requests, closes every
    /// client and the socket.
    public func run() {
        var fds: [pollfd] = []
        var order: [Int32] = []
        var lastSweep = DaemonStatus.now()
        while !stopping.load(ordering: .acquiring) {
            fds.removeAll(keepingCapacity: true)
            order.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: wake, events: Int16(POLLIN), revents: 0))
            fds.append(pollfd(fd: socket.descriptor, events: acceptPaused ? 0 : Int16(POLLIN), revents: 0))
            for (fd, client) in clients {
                // A peer that shut its side is noticed once nothing of its is in hand (asked for
                // earlier, poll would report it again and again while the worker answers).
                var events: Int16 = client.idle ? Int16(SFX_POLLRDHUP) : 0
                if wantsRequests(client) { events |= Int16(POLLIN) }
                if !client.outbox.isEmpty { events |= Int16(POLLOUT) }
                fds.append(pollfd(fd: fd, events: events, revents: 0))
                order.append(fd)
            }
            // With clients, wake at least once a second to close the idle and the unread.
            let ready = poll(&fds, nfds_t(fds.count), clients.isEmpty && !acceptPaused ? -1 : 1000)
            if ready < 0 { if errno == EINTR { continue }; break }
            if fds[0].revents != 0 { takeFinished() }
            if fds[1].revents & Int16(POLLIN) != 0 { acceptAll() }
            for (index, fd) in order.enumerated() {
                let revents = fds[index + 2].revents
                guard revents != 0, let client = clients[fd] else { continue }
                if revents & Int16(POLLOUT) != 0 { flush(client) }
                if revents & Int16(POLLIN) != 0 { readRequests(client) }
                else if revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { drop(client) }
                else if revents & Int16(SFX_POLLRDHUP) != 0, client.idle { drop(client) }
            }
            let now = DaemonStatus.now()
            if now - lastSweep >= 0.5 {
                lastSweep = now
                sweep(now)
            }
        }
        work.sync {}
        loader.sync {}
        takeFinished()
        for client in Array(clients.values) {
            flush(client)
            drop(client)
        }
        socket.close()
    }

    private func wantsRequests(_ client: Client) -> Bool {
        client.outbox.count < Self.outboxLimit && client.outboxBytes < limits.outgoingBytesPerClient / 2
            && client.pending < limits.queuedRequestsPerClient
    }

    // MARK: Connections

    private func acceptAll() {
        while true {
            if clients.count >= limits.connections, !evictIdlest(among: nil) {
                acceptPaused = true
                return
            }
            let fd = sfx_accept(socket.descriptor)
            if fd == -EMFILE || fd == -ENFILE || fd == -ENOBUFS || fd == -ENOMEM { acceptPaused = true }
            if fd < 0 { return }
            let now = DaemonStatus.now()
            // The kernel holds little for a client that does not read, so the daemon soon sees it.
            var room = Self.socketBuffer
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &room, socklen_t(MemoryLayout<Int32>.size))
            var uid: uid_t = 0, gid: gid_t = 0
            var refusal = sfx_peer_credentials(fd, nil, &uid, &gid) == 0
                ? policy.refusal(socket: fd, uid: uid) : "refused: the peer's credentials cannot be read"
            if refusal == nil, perUser[uid, default: 0] >= limits.connectionsPerUser, !evictIdlest(among: uid) {
                refusal = "busy: uid \(uid) has \(limits.connectionsPerUser) connections open, each with a request in hand or following alerts; close some, or raise sfx serve --max-connections-per-user"
            }
            let client = Client(fd: fd, serial: nextSerial, uid: uid, now: now)
            clientsServed.wrappingAdd(1, ordering: .relaxed)
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
            perUser[uid, default: 0] += 1
            clientCount.store(clients.count, ordering: .relaxed)
        }
    }

    /// Closes the connection (of `uid`, or of anyone) idle the longest, when one has been idle
    /// long enough; returns whether it did.
    private func evictIdlest(among uid: uid_t?) -> Bool {
        let now = DaemonStatus.now()
        // A flood asks here once per newcomer: skip the scan while no one can be old enough.
        if now < noneEvictableUntil { return false }
        var oldest: Client?
        var soonest = now + Self.evictableAfterSeconds
        for client in clients.values where client.idle && client.noticesID == nil {
            guard now - client.lastActivity >= Self.evictableAfterSeconds else {
                soonest = min(soonest, client.lastActivity + Self.evictableAfterSeconds)
                continue
            }
            if uid == nil || client.uid == uid, oldest == nil || client.lastActivity < oldest!.lastActivity { oldest = client }
        }
        guard let oldest else {
            if uid == nil { noneEvictableUntil = soonest }
            return false
        }
        clientsClosed.wrappingAdd(1, ordering: .relaxed)
        drop(oldest)
        return true
    }

    /// Closes connections idle past the idle timeout, refused peers that stay, and clients that
    /// leave their replies unread past the unread timeout; subscribers wait on purpose (their
    /// outbox is bounded: past it their notices are dropped), so neither timeout closes them.
    private func sweep(_ now: Double) {
        for client in Array(clients.values) {
            let idleFor = now - client.lastActivity
            let unread = client.unreadSince.map { now - $0 } ?? 0
            if client.refused ? idleFor >= 1
                : client.noticesID != nil ? false
                : client.idle ? limits.idleTimeoutSeconds > 0 && idleFor >= limits.idleTimeoutSeconds
                : unread >= limits.unreadTimeoutSeconds {
                clientsClosed.wrappingAdd(1, ordering: .relaxed)
                drop(client)
            }
        }
        if acceptPaused, clients.count < limits.connections { acceptPaused = false }
        else if acceptPaused, evictIdlest(among: nil) { acceptPaused = false }
    }

    private func drop(_ client: Client) {
        acceptPaused = false
        close(client.fd)
        clients[client.fd] = nil
        bySerial[client.serial] = nil
        if client.noticesID != nil, subscribers.removeValue(forKey: client.fd) != nil {
            subscriberCount.store(subscribers.count, ordering: .relaxed)
        }
        if let count = perUser[client.uid] { perUser[client.uid] = count > 1 ? count - 1 : nil }
        clientCount.store(clients.count, ordering: .relaxed)
    }

    // MARK: Requests

    /// Reads up to 32 messages (so one busy client cannot hold the loop), answering each.
    private func readRequests(_ client: Client) {
        for _ in 0..<32 where wantsRequests(client) {
            var passed = [Int32](repeating: -1, count: 4)
            var count: Int32 = 0
            var truncated: Int32 = 0
            let got = sfx_receive_message(client.fd, buffer, Frame.maximumSize, &passed, 4, &count, &truncated)
            if got == -Int(EAGAIN) { return }
            // 0 is the end of the connection, or an empty message: the peer's state tells.
            if got < 0 || got == 0 && count == 0 && peerHungUp(client.fd) {
                drop(client)
                return
            }
            let descriptors = Array(passed.prefix(Int(count)))
            if client.refused {
                for fd in descriptors { close(fd) }
                continue
            }
            client.lastActivity = DaemonStatus.now()
            framesReceived.wrappingAdd(1, ordering: .relaxed)
            handle(client, size: got, truncated: truncated != 0, descriptors: descriptors)
            if clients[client.fd] !== client { return }
        }
    }

    /// Whether the peer has shut its side (so a read of 0 bytes was the end, not an empty message).
    private func peerHungUp(_ fd: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN | SFX_POLLRDHUP), revents: 0)
        return poll(&p, 1, 0) < 0 || p.revents & Int16(SFX_POLLRDHUP | POLLHUP | POLLERR | POLLNVAL) != 0
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
            return reply(client, id: header.id, .error, "unknown request type \(header.type); this daemon speaks protocol 1 (types 1–\(RequestKind.allCases.count), docs/PROTOCOL.md)")
        }
        // A subscription is this loop's own: it keeps the connection, not the service.
        if kind == .notices {
            closeAll()
            if client.noticesID == nil {
                client.noticesID = header.id
                subscribers[client.fd] = client
                subscriberCount.store(subscribers.count, ordering: .relaxed)
            }
            return reply(client, id: header.id, .ok, [])
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
            let (replyKind, payload) = service.handle(kind, fields, file: file, context: RequestContext(uid: client.uid))
            return reply(client, id: id, replyKind, payload)
        }
        if file != nil, filesInHand >= limits.queuedFiles {
            closeAll()
            return reply(client, id: id, .error, "busy: the daemon is reading \(filesInHand) files for its clients, its limit; try again in a moment")
        }
        let serial = client.serial
        let context = RequestContext(uid: client.uid, clients: clientCount.load(ordering: .relaxed),
                                     clientsServed: clientsServed.load(ordering: .relaxed), socket: socket.path,
                                     subscribers: subscriberCount.load(ordering: .relaxed),
                                     noticesSent: noticesSent.load(ordering: .relaxed),
                                     noticesDropped: noticesDropped.load(ordering: .relaxed))
        client.pending += 1
        if file != nil { filesInHand += 1 }
        // A file is read and decoded on the loader, so that a slow one never holds a status.
        (file != nil ? loader : work).async { [self] in
            let (replyKind, payload) = service.handle(kind, fields, file: file, context: context)
            let frame = Frame.encode(type: replyKind.rawValue, id: id, payload: payload)
                ?? Frame.encode(type: ReplyKind.error.rawValue, id: id, payload: Array("the reply is too long for a frame".utf8))!
            if replyKind == .error { errorsSent.wrappingAdd(1, ordering: .relaxed) }
            finished.withLock { $0.append((serial, frame, file != nil)) }
            wakeUp()
        }
    }

    private func takeFinished() {
        var value: UInt64 = 0
        _ = read(wake, &value, 8)
        let done = finished.withLock { list -> [(client: UInt64, frame: [UInt8], file: Bool)] in
            defer { list.removeAll() }
            return list
        }
        for (serial, frame, file) in done {
            if file { filesInHand -= 1 }
            guard let fd = bySerial[serial], let client = clients[fd] else { continue }   // gone meanwhile
            client.pending -= 1
            enqueue(client, frame)
        }
        let made = notices.withLock { list -> [[UInt8]] in
            defer { list.removeAll() }
            return list
        }
        for payload in made {
            for client in Array(subscribers.values) { push(payload, to: client) }
        }
    }

    /// Queues a notice for a subscriber, or drops it (counted) while the subscriber's outbox is at
    /// the bound at which its requests are no longer read: a subscriber that does not read is
    /// never closed for it, and never holds more.
    private func push(_ payload: [UInt8], to client: Client) {
        guard let id = client.noticesID, clients[client.fd] === client else { return }
        guard client.outbox.count < Self.outboxLimit, client.outboxBytes < limits.outgoingBytesPerClient / 2,
              let frame = Frame.encode(type: ReplyKind.notice.rawValue, id: id, payload: payload) else {
            noticesDropped.wrappingAdd(1, ordering: .relaxed)
            return
        }
        noticesSent.wrappingAdd(1, ordering: .relaxed)
        queue(client, frame)
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
        queue(client, frame)
        // Replies still pile up past the limit (the worker's answers to what it took): a
        // client that will not read them is closed.
        if client.outboxBytes > limits.outgoingBytesPerClient, clients[client.fd] === client {
            clientsClosed.wrappingAdd(1, ordering: .relaxed)
            drop(client)
        }
    }

    /// Puts a frame in the client's outbox and sends what its socket takes now.
    private func queue(_ client: Client, _ frame: [UInt8]) {
        client.outbox.append(frame)
        client.outboxBytes += frame.count
        if client.unreadSince == nil { client.unreadSince = DaemonStatus.now() }
        flush(client)
    }

    /// Sends what the client's socket takes now; the rest waits for POLLOUT.
    private func flush(_ client: Client) {
        var progress = false
        while let frame = client.outbox.first {
            let sent = frame.withUnsafeBytes { send(client.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EAGAIN || errno == EINTR { break }
                client.outbox.removeAll()
                client.outboxBytes = 0
                client.unreadSince = nil
                return   // the connection is gone; POLLHUP or the next read drops it
            }
            client.outbox.removeFirst()
            client.outboxBytes -= frame.count
            progress = true
            repliesSent.wrappingAdd(1, ordering: .relaxed)
        }
        let now = DaemonStatus.now()
        if progress { client.lastActivity = now }
        client.unreadSince = client.outbox.isEmpty ? nil : progress ? now : client.unreadSince
    }
}

/// Who asked, and what the daemon's status tells about its connections.
public struct RequestContext: Sendable {
    public var uid: uid_t
    public var clients: Int
    public var clientsServed: Int
    public var socket: String?
    /// Connections subscribed to notices, and the notices sent to them and dropped.
    public var subscribers: Int?
    public var noticesSent: Int?
    public var noticesDropped: Int?
    public init(uid: uid_t = geteuid(), clients: Int = 0, clientsServed: Int = 0, socket: String? = nil,
                subscribers: Int? = nil, noticesSent: Int? = nil, noticesDropped: Int? = nil) {
        self.uid = uid
        self.clients = clients
        self.clientsServed = clientsServed
        self.socket = socket
        self.subscribers = subscribers
        self.noticesSent = noticesSent
        self.noticesDropped = noticesDropped
    }
}
