import CSFXCurl
import FoundationEssentials
import SFXSystem
import Dispatch
import Glibc
import Synchronization

/// An HTTP(S) download kept in a private unnamed file as it arrives, which readers can decode
/// while it goes on (`bytes()`): what `sfx play https://…` and `Player` stream from.
///
/// The transfer is libcurl's (CSFXCurl's `sfx_curl_download`) on a thread of its own, and each
/// piece of the body goes from libcurl's receive buffer straight into the file: nothing queues
/// in memory, so a body that arrives faster than the disk takes it waits in the socket, and
/// memory stays at a few buffers whatever the body. (A queue between the transfer and the file
/// would hold every piece not yet written: one did, and grew by 20 MB a second with an endless
/// body on loopback.)
///
/// The file is made with O_TMPFILE (no name anyone could open or plant a link at, mode 0600)
/// in the temporary directory, and disappears with the last descriptor. The body may be at most
/// `maximumBytes` (`DownloadLimits`, `[http] max-download` in sfx.conf): past that the transfer
/// stops, as it does when the disk is full, each with its own error.
/// Failures are one line each (`DownloadError`): the host not found (DNS), a TLS failure, an
/// HTTP status other than 2xx, a connection dropped or a body shorter than its Content-Length
/// (truncated), no byte for `stallTimeout` (stalled), a header line over libcurl's 100 KB, the
/// cap passed, a full disk.
public final class HTTPDownload: @unchecked Sendable {
    public struct Progress: Sendable, Equatable {
        public var received: Int64
        /// The Content-Length, when the server gave one.
        public var expected: Int64?
        public var finished: Bool
        /// 0…1 when the length is known.
        public var fraction: Double? { expected.map { $0 > 0 ? min(1, Double(received) / Double($0)) : 1 } }
    }

    public let url: URL
    /// How long a read waits for bytes that have not come before it gives up (and the longest
    /// the transfer may go without a byte).
    public let stallTimeout: Double
    /// The most bytes the body may have.
    public let maximumBytes: Int64
    private let transfer: Transfer

    /// Starts downloading `url` (http or https). `stallTimeout` is the longest wait for the next
    /// bytes; `maximumBytes` the largest body taken.
    public init(url: URL, stallTimeout: Double = 15, maximumBytes: Int64 = DownloadLimits().maximumBytes) throws {
        self.url = url
        self.stallTimeout = stallTimeout
        self.maximumBytes = maximumBytes
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw DownloadError(url: url, reason: .unsupported("only http:// and https:// URLs can be streamed"))
        }
        let (descriptor, directory) = try HTTPDownload.privateFile(url: url)
        transfer = Transfer(url: url, descriptor: descriptor, directory: directory, maximumBytes: maximumBytes)
        Threads.start(name: "sfx-download") { [transfer, stallTimeout] in transfer.run(stallSeconds: max(1, Int(stallTimeout.rounded(.up)))) }
    }

    /// Stops the transfer when its reader is gone (a transfer holds the file, not the download).
    deinit { transfer.cancelled.store(true, ordering: .relaxed) }

    /// Cancels the transfer (what has arrived stays readable).
    public func cancel() { transfer.cancelled.store(true, ordering: .relaxed) }

    public var progress: Progress {
        transfer.state.withLock { Progress(received: $0.received, expected: $0.expected, finished: $0.finished) }
    }

    /// Why the download failed, once it has.
    public var error: DownloadError? { transfer.state.withLock { $0.error } }

    /// Waits until the server has answered with a success status and sent `bytes` bytes (or all
    /// of a shorter body), or throws the download's failure.
    public func waitForData(_ bytes: Int64, timeout: Double) throws(DownloadError) {
        let deadline = MonotonicCondition.now() + timeout
        let changed = transfer.changed
        changed.lock()
        defer { changed.unlock() }
        while true {
            let now = transfer.state.withLock { $0 }
            if let error = now.error { throw error }
            if now.responded && (now.received >= bytes || now.finished) { return }
            if MonotonicCondition.now() >= deadline { throw DownloadError(url: url, reason: .stalled(seconds: timeout)) }
            _ = changed.wait(seconds: min(0.1, deadline - MonotonicCondition.now()))
        }
    }

    /// A reader's own view of the bytes, from the start.
    public func bytes() -> any ByteSource { Bytes(self) }

    /// An unnamed 0600 file in $TMPDIR (else /tmp), and that directory.
    private static func privateFile(url: URL) throws -> (Int32, String) {
        let directory = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let oTmpFile: Int32 = 0o20_200_000   // O_TMPFILE (__O_TMPFILE | O_DIRECTORY)
        let fd = open(directory, O_RDWR | O_CLOEXEC | oTmpFile, 0o600)
        guard fd >= 0 else {
            throw DownloadError(url: url, reason: .failed("cannot make a private file in \(directory): \(String(cString: strerror(errno))); set TMPDIR to a writable directory"))
        }
        return (fd, directory)
    }

    /// The transfer's side: the file, the shared state, and libcurl's callbacks. It lives while
    /// the transfer runs or a reader holds the download.
    fileprivate final class Transfer: @unchecked Sendable {
        struct State {
            var received: Int64 = 0
            var expected: Int64?
            var responded = false
            var finished = false
            var error: DownloadError?
            /// When the last bytes came (DispatchTime's uptime nanoseconds).
            var lastArrival = DispatchTime.now().uptimeNanoseconds
        }

        let url: URL
        let descriptor: Int32
        let directory: String
        let maximumBytes: Int64
        let state = Mutex(State())
        let changed = MonotonicCondition()
        let cancelled = Atomic<Bool>(false)
        /// The transfer thread's own count (the state's is for readers).
        private var written: Int64 = 0

        init(url: URL, descriptor: Int32, directory: String, maximumBytes: Int64) {
            self.url = url
            self.descriptor = descriptor
            self.directory = directory
            self.maximumBytes = maximumBytes
        }

        deinit { close(descriptor) }

        func run(stallSeconds: Int) {
            var callbacks = sfx_curl_download_callbacks()
            callbacks.context = Unmanaged.passUnretained(self).toOpaque()
            callbacks.begin = { context, status, length in
                Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue().begin(status: status, length: length) ? 0 : 1
            }
            callbacks.write = { context, data, size in
                Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue().write(data!, size) ? size : 0
            }
            callbacks.cancelled = { context in
                Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue().cancelled.load(ordering: .relaxed) ? 1 : 0
            }
            var detail = [CChar](repeating: 0, count: 512)
            let kind = withExtendedLifetime(self) {
                sfx_curl_download(url.absoluteString, stallSeconds, &callbacks, &detail, detail.count)
            }
            let words = String(decoding: detail.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            end(kind: Int(kind), detail: words, stallSeconds: stallSeconds)
        }

        private func begin(status: Int, length: Int64) -> Bool {
            guard (200..<300).contains(status) else {
                fail(.httpStatus(status, HTTPStatus.reasonPhrase(status)))
                return false
            }
            if length > maximumBytes {
                fail(.tooLarge(limit: maximumBytes))
                return false
            }
            update { state in
                state.responded = true
                if length > 0 { state.expected = length }
            }
            return true
        }

        private func write(_ data: UnsafePointer<CChar>, _ total: Int) -> Bool {
            // Up to the cap, every byte is kept; the one after it stops the transfer.
            let size = Int(min(Int64(total), maximumBytes - written))
            var done = 0
            while done < size {
                let n = pwrite(descriptor, data + done, size - done, off_t(written) + off_t(done))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else {
                    let code = n < 0 ? errno : ENOSPC
                    if code == ENOSPC || code == EDQUOT {
                        fail(.diskFull(directory: directory))
                    } else {
                        fail(.failed("cannot keep the download in \(directory): \(String(cString: strerror(code))); set TMPDIR to another directory"))
                    }
                    return false
                }
                done += n
            }
            written += Int64(size)
            let count = written
            let now = DispatchTime.now().uptimeNanoseconds
            update { state in
                state.received = count
                state.lastArrival = now
            }
            guard size == total else {
                fail(.tooLarge(limit: maximumBytes))
                return false
            }
            return true
        }

        private func end(kind: Int, detail: String, stallSeconds: Int) {
            let (received, expected) = state.withLock { ($0.received, $0.expected) }
            switch Int32(kind) {
            case Int32(SFX_CURL_OK):
                if let expected, received < expected {
                    fail(.truncated(received: received, expected: expected))
                } else {
                    update { $0.finished = true }
                }
            case Int32(SFX_CURL_ABORTED):
                // A callback's own failure is already told; else it was cancelled.
                fail(.failed("the download was cancelled"))
            case Int32(SFX_CURL_HOST_NOT_FOUND): fail(.hostNotFound)
            case Int32(SFX_CURL_REFUSED): fail(.refused)
            case Int32(SFX_CURL_TLS): fail(.tls(detail))
            case Int32(SFX_CURL_TIMED_OUT): fail(.stalled(seconds: Double(stallSeconds)))
            case Int32(SFX_CURL_DROPPED):
                if let expected, received < expected {
                    fail(.truncated(received: received, expected: expected))
                } else {
                    fail(.dropped)
                }
            case Int32(SFX_CURL_HEADER_TOO_LARGE): fail(.headerTooLarge)
            case Int32(SFX_CURL_REDIRECTS): fail(.failed("more than 10 redirects (\(detail)); check the URL"))
            case Int32(SFX_CURL_UNAVAILABLE): fail(.unsupported(detail))
            default: fail(.failed(detail))
            }
        }

        /// A reader waited `seconds` for bytes in vain: the transfer has stalled.
        func stall(seconds: Double) {
            fail(.stalled(seconds: seconds))
            cancelled.store(true, ordering: .relaxed)
        }

        private func fail(_ reason: DownloadError.Reason) {
            update { state in
                if state.error == nil { state.error = DownloadError(url: url, reason: reason) }
                state.finished = true
            }
        }

        private func update(_ body: (inout State) -> Void) {
            changed.lock()
            state.withLock { body(&$0) }
            changed.broadcast()
            changed.unlock()
        }
    }

    /// Reads through `pread` from its own offset; waits for bytes still to come.
    private final class Bytes: ByteSource {
        let download: HTTPDownload
        var offset: Int64 = 0

        init(_ download: HTTPDownload) { self.download = download }

        var size: Int64? { download.transfer.state.withLock { $0.finished && $0.error == nil ? $0.received : $0.expected } }

        func read(into buffer: UnsafeMutablePointer<UInt8>, count: Int) -> Int {
            let transfer = download.transfer
            let deadline = MonotonicCondition.now() + download.stallTimeout
            transfer.changed.lock()
            while true {
                let now = transfer.state.withLock { $0 }
                if now.received > offset {
                    transfer.changed.unlock()
                    let got = pread(transfer.descriptor, buffer, min(count, Int(now.received - offset)), off_t(offset))
                    if got < 0 { return -Int(errno) }
                    offset += Int64(got)
                    return got
                }
                if now.error != nil || now.finished {
                    transfer.changed.unlock()
                    return now.error != nil ? -Int(EIO) : 0
                }
                // Nothing will ever be there: past the end the server announced, past the cap,
                // or (a body of unknown length) far beyond what has come, as a demuxer's look
                // for chunks after a header's "largest" size is (FFmpeg's WAV reader seeks to
                // 4 GB): the end, now, rather than a wait for bytes that do not come.
                if (now.expected.map { offset >= $0 } ?? false) || offset >= transfer.maximumBytes
                    || (now.expected == nil && offset > now.received + Self.lookAhead) {
                    transfer.changed.unlock()
                    return 0
                }
                if MonotonicCondition.now() >= deadline { break }
                _ = transfer.changed.wait(seconds: min(0.1, deadline - MonotonicCondition.now()))
            }
            transfer.changed.unlock()
            // The reader gave up; when the transfer too has had nothing for as long, it has
            // stalled, and that is the download's failure (it stops).
            let quiet = Double(DispatchTime.now().uptimeNanoseconds - transfer.state.withLock { $0.lastArrival }) / 1e9
            if quiet >= download.stallTimeout { transfer.stall(seconds: download.stallTimeout) }
            return -Int(ETIMEDOUT)
        }

        /// How far past the bytes received a read of a body of unknown length may wait for more.
        static let lookAhead: Int64 = 16 << 20

        func seek(to newOffset: Int64) -> Int64 {
            offset = newOffset
            return offset
        }
    }
}

/// The caps on what streaming a URL may take (`[http] max-download` and `max-duration` in
/// sfx.conf): the body's bytes, kept in a private file while it plays, and the sound's length
/// as decoded. An endless body stops at the first cap it reaches, with an error that names it.
public struct DownloadLimits: Sendable, Equatable {
    /// The most bytes a body may have: 512 MiB by default (about 7 hours of 160 kbit/s MP3,
    /// 46 minutes of 48 kHz stereo 16-bit WAV).
    public var maximumBytes: Int64
    /// The longest the sound may play, in seconds of source decoded: 4 hours by default.
    public var maximumDuration: Double

    public init(maximumBytes: Int64 = 512 << 20, maximumDuration: Double = 4 * 3600) {
        self.maximumBytes = maximumBytes
        self.maximumDuration = maximumDuration
    }

    /// "512 MiB", "1.5 GiB", "300 KiB", "900 bytes".
    public static func text(bytes: Int64) -> String {
        let units: [(Int64, String)] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]
        for (size, name) in units where bytes >= size {
            let value = Double(bytes) / Double(size)
            return value == value.rounded() ? "\(Int64(value)) \(name)" : "\(String(cFormat: "%.1f", value)) \(name)"
        }
        return "\(bytes) bytes"
    }

    /// "4 h", "90 min", "30 s".
    public static func text(seconds: Double) -> String {
        if seconds >= 3600, seconds.truncatingRemainder(dividingBy: 3600) == 0 { return "\(Int(seconds / 3600)) h" }
        if seconds >= 60, seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(seconds / 60)) min" }
        return seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }

    /// A duration as sfx.conf writes it: seconds, or a number with s, min or h ("90min", "4h").
    public static func parseSeconds(_ text: String) -> Double? {
        let trimmed = text.trimmed.lowercased()
        for (suffix, scale) in [("min", 60.0), ("h", 3600.0), ("s", 1.0)] where trimmed.hasSuffix(suffix) {
            guard let value = Double(trimmed.dropLast(suffix.count).trimmed), value > 0, value.isFinite else { return nil }
            return value * scale
        }
        guard let value = Double(trimmed), value > 0, value.isFinite else { return nil }
        return value
    }

    /// A size as sfx.conf writes it: bytes, or a number with K, M or G (KiB, MiB, GiB; "512M").
    public static func parseBytes(_ text: String) -> Int64? {
        let trimmed = text.trimmed
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        var digits = Substring(trimmed)
        var unit: Int64 = 1
        if let last = trimmed.last?.uppercased().first, let size = units[last] {
            unit = size
            digits = digits.dropLast()
        }
        guard let value = Double(digits), value > 0, value.isFinite, value * Double(unit) < 9e18 else { return nil }
        return Int64(value * Double(unit))
    }
}

/// Why a download failed, in one line that names the URL, what happened and what to do.
public struct DownloadError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable {
        case hostNotFound
        case refused
        case tls(String)
        case httpStatus(Int, String)
        case truncated(received: Int64, expected: Int64)
        case dropped
        case stalled(seconds: Double)
        /// A response header line over libcurl's 100 KB.
        case headerTooLarge
        /// The body went over the `maximumBytes` cap (`[http] max-download`).
        case tooLarge(limit: Int64)
        /// The disk holding the download (the temporary directory) is full.
        case diskFull(directory: String)
        case unsupported(String)
        case failed(String)
    }

    public let url: URL
    public let reason: Reason

    public var description: String {
        let what: String
        switch reason {
        case .hostNotFound: what = "host \(url.host ?? "?") not found (DNS); check the address and the network"
        case .refused: what = "the connection was refused; check the address and port, and that the server runs"
        case .tls(let detail): what = "TLS failed (\(detail)); check the server's certificate and the system's clock"
        case .httpStatus(let code, let text): what = "HTTP \(code) \(text); check the URL"
        case .truncated(let received, let expected):
            what = "the download ended after \(received) of its \(expected) bytes (truncated); try again"
        case .dropped: what = "the connection dropped before the end; try again"
        case .stalled(let seconds): what = "nothing arrived for \(Int(seconds)) s (stalled); check the network and try again"
        case .headerTooLarge: what = TransferFailure.headerTooLargeText
        case .tooLarge(let limit):
            what = "the download passed \(DownloadLimits.text(bytes: limit)), the most a stream may download; raise [http] max-download in sfx.conf to play it"
        case .diskFull(let directory):
            what = "disk full: no space left in \(directory) for the download; free some space or set TMPDIR to a larger disk"
        case .unsupported(let detail): what = detail
        case .failed(let detail): what = "\(detail); try again"
        }
        return "\(url.absoluteString): \(what)"
    }
}

/// What a failed transfer (libcurl's, through CSFXCurl) means, from its SFX_CURL_ kind: what
/// downloads and uploads both tell in their one line.
public enum TransferFailure: Sendable, Equatable {
    case hostNotFound
    case refused
    case tls(String)
    /// Nothing sent or received for the transfer's stall timeout.
    case timedOut
    case dropped
    /// A response header line over libcurl's limit (CURL_MAX_HTTP_HEADER, 100 KB), which
    /// libcurl 7.x reports as CURLE_OUT_OF_MEMORY ("Out of memory").
    case headerTooLarge
    /// More than 10 redirects.
    case redirects(String)
    /// libcurl.so.4 cannot be loaded: the line says what to install.
    case unavailable(String)
    case other(String)

    /// The failure of a transfer that ended with `kind` (an SFX_CURL_ value other than OK,
    /// ABORTED and READ) and libcurl's words `detail`.
    public init(kind: Int32, detail: String) {
        switch kind {
        case Int32(SFX_CURL_HOST_NOT_FOUND): self = .hostNotFound
        case Int32(SFX_CURL_REFUSED): self = .refused
        case Int32(SFX_CURL_TLS): self = .tls(detail)
        case Int32(SFX_CURL_TIMED_OUT): self = .timedOut
        case Int32(SFX_CURL_DROPPED): self = .dropped
        case Int32(SFX_CURL_HEADER_TOO_LARGE): self = .headerTooLarge
        case Int32(SFX_CURL_REDIRECTS): self = .redirects(detail)
        case Int32(SFX_CURL_UNAVAILABLE): self = .unavailable(detail)
        default: self = .other(detail.isEmpty ? "libcurl failed (kind \(kind))" : detail)
        }
    }

    /// "a response header line was longer than 100 KB (libcurl's limit; it says \"Out of memory\"); …"
    public static let headerTooLargeText = "the server sent a response header line longer than libcurl takes (100 KB; libcurl "
        + "reports it as \"Out of memory\"); the server is misbehaving or is not an HTTP server: check the URL"
}
