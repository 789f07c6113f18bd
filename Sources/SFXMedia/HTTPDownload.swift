import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// An HTTP(S) download kept in a private unnamed file as it arrives (FoundationNetworking's
/// URLSession with a delegate: no HTTP of sfx's own), which readers can decode while it goes on
/// (`bytes()`): what `sfx play https://…` and `Player` stream from.
///
/// The file is made with O_TMPFILE (no name anyone could open or plant a link at, mode 0600)
/// in the temporary directory, and disappears with the last descriptor.
/// Failures are one line each (`DownloadError`): the host not found (DNS), a TLS failure, an
/// HTTP status other than 2xx, a connection dropped or a body shorter than its Content-Length
/// (truncated), or no byte for `stallTimeout` (stalled).
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
    private let descriptor: Int32
    private let state = Mutex(State())
    private let changed = NSCondition()
    private var session: URLSession?
    /// How long a read waits for bytes that have not come before it gives up.
    public let stallTimeout: Double

    private struct State {
        var received: Int64 = 0
        var expected: Int64?
        var responded = false
        var finished = false
        var error: DownloadError?
    }

    /// Starts downloading `url` (http or https). `stallTimeout` is the longest wait for the next
    /// bytes (the request's idle timeout too).
    public init(url: URL, stallTimeout: Double = 15) throws {
        self.url = url
        self.stallTimeout = stallTimeout
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw DownloadError(url: url, reason: .unsupported("only http:// and https:// URLs can be streamed"))
        }
        descriptor = try HTTPDownload.privateFile(url: url)
        let configuration = URLSessionConfiguration.keepingNothing
        configuration.timeoutIntervalForRequest = stallTimeout
        let delegate = Delegate()
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        self.session = session
        delegate.download = self
        session.dataTask(with: URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: stallTimeout)).resume()
    }

    deinit {
        session?.invalidateAndCancel()
        close(descriptor)
    }

    /// Cancels the transfer (what has arrived stays readable).
    public func cancel() { session?.invalidateAndCancel() }

    public var progress: Progress {
        state.withLock { Progress(received: $0.received, expected: $0.expected, finished: $0.finished) }
    }

    /// Why the download failed, once it has.
    public var error: DownloadError? { state.withLock { $0.error } }

    /// Waits until the server has answered with a success status and sent `bytes` bytes (or all
    /// of a shorter body), or throws the download's failure.
    public func waitForData(_ bytes: Int64, timeout: Double) throws(DownloadError) {
        let deadline = Date().addingTimeInterval(timeout)
        changed.lock()
        defer { changed.unlock() }
        while true {
            let now = state.withLock { $0 }
            if let error = now.error { throw error }
            if now.responded && (now.received >= bytes || now.finished) { return }
            if Date() >= deadline { throw DownloadError(url: url, reason: .stalled(seconds: timeout)) }
            _ = changed.wait(until: min(deadline, Date().addingTimeInterval(0.1)))
        }
    }

    /// A reader's own view of the bytes, from the start.
    public func bytes() -> any ByteSource { Bytes(self) }

    // MARK: Transfer (URLSession's delegate queue)

    fileprivate func respond(_ response: URLResponse) -> Bool {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 200
        guard (200..<300).contains(status) else {
            fail(.httpStatus(status, HTTPURLResponse.localizedString(forStatusCode: status)))
            return false
        }
        update { state in
            state.responded = true
            if response.expectedContentLength > 0 { state.expected = response.expectedContentLength }
        }
        return true
    }

    fileprivate func append(_ data: Data) {
        let offset = state.withLock { $0.received }
        let written = data.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(offset)) }
        guard written == data.count else {
            fail(.failed("cannot keep the download: \(String(cString: strerror(errno))); free space in \(NSTemporaryDirectory())"))
            return
        }
        update { $0.received += Int64(data.count) }
    }

    fileprivate func complete(_ error: (any Error)?) {
        let (received, expected) = state.withLock { ($0.received, $0.expected) }
        if let error {
            let reason = Self.classify(error as NSError, stallTimeout: stallTimeout)
            // A body cut short by the server's closing the connection.
            if case .failed = reason, let expected, received > 0, received < expected {
                fail(.truncated(received: received, expected: expected))
            } else {
                fail(reason)
            }
            return
        }
        if let expected, received < expected {
            fail(.truncated(received: received, expected: expected))
            return
        }
        update { $0.finished = true }
    }

    private func fail(_ reason: DownloadError.Reason) {
        update { state in
            if state.error == nil { state.error = DownloadError(url: url, reason: reason) }
            state.finished = true
        }
    }

    private func update(_ body: @Sendable (inout State) -> Void) {
        changed.lock()
        state.withLock { body(&$0) }
        changed.broadcast()
        changed.unlock()
    }

    static func classify(_ error: NSError, stallTimeout: Double) -> DownloadError.Reason {
        switch error.code {
        case NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed:
            return .hostNotFound
        case NSURLErrorSecureConnectionFailed, NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasBadDate,
             NSURLErrorServerCertificateHasUnknownRoot, NSURLErrorServerCertificateNotYetValid,
             NSURLErrorClientCertificateRejected, NSURLErrorClientCertificateRequired:
            return .tls(error.localizedDescription)
        case NSURLErrorTimedOut:
            return .stalled(seconds: stallTimeout)
        case NSURLErrorNetworkConnectionLost:
            return .dropped
        case NSURLErrorCannotConnectToHost:
            return .refused
        default:
            let text = error.localizedDescription
            if text.lowercased().contains("ssl") || text.lowercased().contains("certificate") { return .tls(text) }
            return .failed(text)
        }
    }

    private static func privateFile(url: URL) throws -> Int32 {
        let directory = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let oTmpFile: Int32 = 0o20_200_000   // O_TMPFILE (__O_TMPFILE | O_DIRECTORY)
        let fd = open(directory, O_RDWR | O_CLOEXEC | oTmpFile, 0o600)
        guard fd >= 0 else {
            throw DownloadError(url: url, reason: .failed("cannot make a private file in \(directory): \(String(cString: strerror(errno))); set TMPDIR to a writable directory"))
        }
        return fd
    }

    /// Reads through `pread` from its own offset; waits for bytes still to come.
    private final class Bytes: ByteSource {
        let download: HTTPDownload
        var offset: Int64 = 0

        init(_ download: HTTPDownload) { self.download = download }

        var size: Int64? { download.state.withLock { $0.finished && $0.error == nil ? $0.received : $0.expected } }

        func read(into buffer: UnsafeMutablePointer<UInt8>, count: Int) -> Int {
            let deadline = Date().addingTimeInterval(download.stallTimeout)
            download.changed.lock()
            defer { download.changed.unlock() }
            while true {
                let now = download.state.withLock { $0 }
                if now.received > offset {
                    let got = pread(download.descriptor, buffer, min(count, Int(now.received - offset)), off_t(offset))
                    if got < 0 { return -Int(errno) }
                    offset += Int64(got)
                    return got
                }
                if now.error != nil { return -Int(EIO) }
                if now.finished { return 0 }
                if Date() >= deadline { return -Int(ETIMEDOUT) }
                _ = download.changed.wait(until: min(deadline, Date().addingTimeInterval(0.1)))
            }
        }

        func seek(to newOffset: Int64) -> Int64 {
            offset = newOffset
            return offset
        }
    }

    private final class Delegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        weak var download: HTTPDownload?

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
            completionHandler(download?.respond(response) == true ? .allow : .cancel)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            download?.append(data)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            if let error = error as NSError?, error.code == NSURLErrorCancelled, download?.error != nil { return }
            download?.complete(error)
            session.finishTasksAndInvalidate()
        }
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
        case .unsupported(let detail): what = detail
        case .failed(let detail): what = "\(detail); try again"
        }
        return "\(url.absoluteString): \(what)"
    }
}
