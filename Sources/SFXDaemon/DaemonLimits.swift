/// What one client, and all of them together, may take of the daemon: connections, requests in
/// hand, replies waiting, sounds loaded. A request over a limit is refused with one line that
/// names the limit and how to raise it; nothing is ever kept without bound.
///
/// "A client" is a connection for what lives as long as it (requests queued, replies waiting)
/// and a user (uid) for what outlives it (connections open, sounds loaded): in system mode every
/// member of the group is someone else.
public struct DaemonLimits: Sendable, Equatable {
    /// Connections open at once, in all; at the limit the longest-idle connection is closed to
    /// make room (never a subscriber to notices, which waits on purpose but counts here), and a
    /// newcomer is told `busy:` only when none is idle.
    public var connections = DaemonLimits.defaultConnections
    /// Connections one uid may hold open (the same rule, among that uid's connections).
    public var connectionsPerUser = DaemonLimits.defaultConnectionsPerUser
    /// Requests of one connection on the worker or the loader at once; beyond, the daemon stops
    /// reading that connection until one is answered (its descriptors wait in the kernel, not
    /// in the daemon).
    public var queuedRequestsPerClient = DaemonLimits.defaultQueuedRequestsPerClient
    /// Requests with a passed file on the loader at once, from all clients together (each holds a
    /// descriptor); beyond, a file request is refused `busy:` and its descriptor closed at once.
    public var queuedFiles = DaemonLimits.defaultQueuedFiles
    /// Bytes of replies one connection may leave unread; at half, the daemon stops reading its
    /// requests; a connection that reads nothing for `unreadTimeoutSeconds` while its replies wait
    /// is closed.
    public var outgoingBytesPerClient = DaemonLimits.defaultOutgoingBytesPerClient
    /// A connection with nothing in hand and nothing sent for this long is closed (0: never);
    /// a subscriber to notices is not.
    public var idleTimeoutSeconds = DaemonLimits.defaultIdleTimeoutSeconds
    /// A connection whose replies wait unread for this long is closed; a subscriber to notices
    /// is not (past the bound its notices are dropped and counted instead).
    public var unreadTimeoutSeconds = DaemonLimits.defaultUnreadTimeoutSeconds
    /// Sounds loaded by clients (`load`), in all and per uid (the configured ones are not counted).
    public var sounds = DaemonLimits.defaultSounds
    public var soundsPerClient = DaemonLimits.defaultSoundsPerClient
    /// Decoded PCM of the sounds clients loaded or passed to play, in all and per uid, in bytes.
    public var soundBytes = DaemonLimits.defaultSoundBytes
    public var soundBytesPerClient = DaemonLimits.defaultSoundBytesPerClient
    /// The longest a passed file may take to be read, in seconds.
    public var readTimeoutSeconds = DaemonLimits.defaultReadTimeoutSeconds

    public static let defaultConnections = 1024
    public static let defaultConnectionsPerUser = 256
    public static let defaultQueuedRequestsPerClient = 8
    public static let defaultQueuedFiles = 64
    public static let defaultOutgoingBytesPerClient = 256 << 10
    public static let defaultIdleTimeoutSeconds = 30.0
    public static let defaultUnreadTimeoutSeconds = 10.0
    public static let defaultSounds = 256
    public static let defaultSoundsPerClient = 64
    public static let defaultSoundBytes = 1 << 30
    public static let defaultSoundBytesPerClient = 256 << 20
    public static let defaultReadTimeoutSeconds = 10.0

    public init() {}
}
