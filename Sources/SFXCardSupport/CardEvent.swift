/// One line of the card's `events.log`: what happened and when, on CLOCK_MONOTONIC.
///
/// The plugin logs from inside the client's audio thread, so it buffers lines and writes them
/// out at stop, close, xrun and at least every 200 ms while a stream runs; read the events after
/// the stream stops (or closes) to see all of them. Lines from several processes and streams
/// interleave; each keeps its timestamp.
///
///     for event in try card.events() {
///         if case .onset(let frame, let dac, _) = event.kind { print(frame, dac) }
///     }
public struct CardEvent: Sendable, Equatable {
    /// CLOCK_MONOTONIC nanoseconds at which the plugin (or VirtualCard) logged the event.
    public var nanoseconds: UInt64
    public var kind: Kind

    /// The direction of the PCM stream that logged an event.
    public enum Stream: String, Sendable {
        case playback, capture
    }

    /// Why a stream went to SND_PCM_STATE_XRUN.
    public enum XrunReason: String, Sendable {
        /// The playback buffer ran dry.
        case underrun
        /// The capture reader fell more than a buffer behind.
        case overrun
        /// `VirtualCard.injectXrun()` asked for it.
        case injected
    }

    /// The configuration a stream negotiated, with ALSA's names for access and format.
    public struct HardwareParameters: Sendable, Equatable {
        public var access: String      // e.g. "MMAP_INTERLEAVED"
        public var format: String      // e.g. "FLOAT_LE"
        public var rate: Int
        public var channels: Int
        public var periodFrames: Int
        public var bufferFrames: Int

        public init(access: String, format: String, rate: Int, channels: Int, periodFrames: Int, bufferFrames: Int) {
            self.access = access
            self.format = format
            self.rate = rate
            self.channels = channels
            self.periodFrames = periodFrames
            self.bufferFrames = bufferFrames
        }
    }

    /// What happened, with the values the plugin logged.
    public enum Kind: Sendable, Equatable {
        case open(Stream)
        case close(Stream)
        case hwParams(Stream, HardwareParameters)
        case swParams(Stream, startThreshold: Int, availMin: Int, stopThreshold: Int)
        /// A playback configuration began recording to `file` in the card's directory.
        case recording(file: String)
        case prepare(Stream)
        /// The stream started; this event's `nanoseconds` is the exact start instant, from which
        /// the DAC times of its frames count.
        case start(Stream)
        /// The stream stopped after `frame` frames.
        case stop(Stream, frame: Int)
        case xrun(Stream, reason: XrunReason, frame: Int)
        /// Sound after silence: stream frame `frame` reached the DAC at `dacNanoseconds`
        /// (start + frame / rate); it is frame `fileFrame` of the recording.
        case onset(frame: Int, dacNanoseconds: UInt64, fileFrame: Int)
        /// The playback application moved its pointer back by `frames` to stream frame `to`
        /// (snd_pcm_rewind), noticed at the card's next callback; `ignored` when the card was
        /// set to accept rewinds and play on (`VirtualCard.RewindBehavior.ignore`).
        case rewind(frames: Int, to: Int, ignored: Bool)
        /// After a rewind, `frames` frames from stream frame `from` had already reached the DAC:
        /// what the application writes there again is never heard.
        case lost(frames: Int, from: Int)
        /// A stream noticed the card was unplugged.
        case disconnected(Stream)
        /// `VirtualCard.disconnect()` unplugged the card.
        case disconnect
        /// `VirtualCard.reconnect()` plugged it back.
        case reconnect
        /// The Master control changed through the mixer (amixer, snd_mixer, snd_ctl).
        case master(on: Bool, volume: Int)
    }

    public init(nanoseconds: UInt64, kind: Kind) {
        self.nanoseconds = nanoseconds
        self.kind = kind
    }

    /// Parses one line: `<ns> <name> key=value …`.
    init(line: Substring) throws {
        let words = line.split(separator: " ")
        guard words.count >= 2, let ns = UInt64(words[0]) else {
            throw CardError("events.log line \"\(line)\" is not \"<nanoseconds> <event> key=value…\"; delete the log if it is not the card's")
        }
        var fields: [Substring: Substring] = [:]
        for word in words.dropFirst(2) {
            guard let equals = word.firstIndex(of: "=") else { continue }
            fields[word[..<equals]] = word[word.index(after: equals)...]
        }
        func text(_ key: Substring) throws -> Substring {
            guard let value = fields[key] else {
                throw CardError("events.log line \"\(line)\" lacks \(key)=; the plugin and VirtualCard are from different versions, rebuild with swift build")
            }
            return value
        }
        func number<T: FixedWidthInteger>(_ key: Substring, as type: T.Type = Int.self) throws -> T {
            guard let value = T(try text(key)) else {
                throw CardError("events.log line \"\(line)\" has a malformed \(key)=; delete the log if it is not the card's")
            }
            return value
        }
        func stream() throws -> Stream {
            guard let stream = Stream(rawValue: String(try text("stream"))) else {
                throw CardError("events.log line \"\(line)\" names an unknown stream; rebuild the plugin with swift build")
            }
            return stream
        }
        let kind: Kind
        switch words[1] {
        case "open": kind = .open(try stream())
        case "close": kind = .close(try stream())
        case "prepare": kind = .prepare(try stream())
        case "start": kind = .start(try stream())
        case "stop": kind = .stop(try stream(), frame: try number("frame"))
        case "disconnect" where fields["stream"] != nil: kind = .disconnected(try stream())
        case "disconnect": kind = .disconnect
        case "reconnect": kind = .reconnect
        case "recording": kind = .recording(file: String(try text("file")))
        case "master": kind = .master(on: try number("switch") != 0, volume: try number("volume"))
        case "hw_params":
            kind = .hwParams(try stream(), HardwareParameters(
                access: String(try text("access")), format: String(try text("format")),
                rate: try number("rate"), channels: try number("channels"),
                periodFrames: try number("period"), bufferFrames: try number("buffer")))
        case "sw_params":
            kind = .swParams(try stream(), startThreshold: try number("start_threshold"),
                             availMin: try number("avail_min"), stopThreshold: try number("stop_threshold"))
        case "xrun":
            guard let reason = XrunReason(rawValue: String(try text("reason"))) else {
                throw CardError("events.log line \"\(line)\" gives an unknown xrun reason; rebuild the plugin with swift build")
            }
            kind = .xrun(try stream(), reason: reason, frame: try number("frame"))
        case "rewind":
            kind = .rewind(frames: try number("frames"), to: try number("to"), ignored: try number("ignored") != 0)
        case "lost":
            kind = .lost(frames: try number("frames"), from: try number("from"))
        case "onset":
            kind = .onset(frame: try number("frame"), dacNanoseconds: try number("dac_ns", as: UInt64.self),
                          fileFrame: try number("file_frame"))
        default:
            throw CardError("events.log line \"\(line)\" has an unknown event \(words[1]); rebuild the plugin with swift build")
        }
        self.init(nanoseconds: ns, kind: kind)
    }
}
