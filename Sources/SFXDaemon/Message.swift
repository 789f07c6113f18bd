import CSFXProtocol

/// What a request asks for: the frame's type byte (docs/PROTOCOL.md).
public enum RequestKind: UInt8, Sendable, CaseIterable {
    case play = 1, alert = 2, vibrate = 3, stop = 4, mute = 5, load = 6, status = 7
    /// A group's filter (`group=`, `filter=`…; docs/PROTOCOL.md).
    case filter = 8
    /// An effect bus's reverb or echo (`bus=`, `effect=`…; docs/PROTOCOL.md).
    case effect = 9
    /// Every alert notice of the daemon's engine from now on, pushed to this connection as
    /// `notice` frames with this request's id (docs/PROTOCOL.md).
    case notices = 10

    public var name: String { String(describing: self) }

    /// Answered at once on the serving thread, never waiting on the worker: a play of a sound
    /// already loaded, a stop, a group's filter (the client gives these its short wait, then
    /// runs in-process). A `notices` request is answered at once too, by the serving loop
    /// itself, but has nothing to fall back to: the client gives it the long wait.
    public func isQuick(hasFile: Bool) -> Bool {
        switch self {
        case .play: !hasFile
        case .stop, .filter: true
        default: false
        }
    }
}

/// How the daemon answers: every request gets exactly one reply with the request's id; a
/// connection that asked for notices also gets a `notice` for every alert.
public enum ReplyKind: UInt8, Sendable {
    /// Done; the payload may carry the result (`key=value` lines, or JSON for status and mute).
    case ok = 0x80
    /// Done, and here is the new thing's number (`id=N`: a voice for play, a sound for load).
    case id = 0x81
    /// Not done: the payload is one line naming what and the fix.
    case error = 0x82
    /// Unsolicited, after the ok to a `notices` request and with its id: an alert the daemon's
    /// engine made, from any client (`caption=`, `sound=`, `reached=`, `quiet=`, `notice=`…).
    case notice = 0x83
}

/// A frame's fields as `key=value` lines: the payload of requests and of most replies.
public struct Fields: Sendable, Equatable {
    public var values: [String: String] = [:]

    public init(_ values: [String: String] = [:]) { self.values = values }

    /// Parses a payload; nil when it is not UTF-8 or a line has no `=`.
    public init?(payload: [UInt8]) {
        guard let text = String(validating: payload, as: UTF8.self) else { return nil }
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            guard let equals = line.firstIndex(of: "=") else { return nil }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
    }

    public subscript(key: String) -> String? {
        get { values[key] }
        set { values[key] = newValue }
    }

    /// The payload: one line per field, sorted by key; a value's newlines become spaces.
    public var payload: [UInt8] {
        Array(values.sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value.replacing("\n", with: " "))\n" }.joined().utf8)
    }
}

/// Frame encoding, through the C implementation the front uses too.
public enum Frame {
    public static let headerSize = Int(SFX_FRAME_HEADER)
    public static let maximumSize = Int(SFX_FRAME_MAX)
    public static let maximumPayload = Int(SFX_FRAME_MAX_PAYLOAD)
    public static let version = UInt8(SFX_PROTOCOL_VERSION)

    /// A whole frame; nil when the payload exceeds `maximumPayload`.
    public static func encode(type: UInt8, id: UInt32, payload: [UInt8]) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: headerSize + payload.count)
        let size = out.withUnsafeMutableBufferPointer { buffer in
            payload.withUnsafeBytes { sfx_frame_encode(buffer.baseAddress, buffer.count, type, id, $0.baseAddress, payload.count) }
        }
        return size == 0 ? nil : out
    }
}
