import CSFXCurl
import CSFXSystem
import FoundationEssentials
import Glibc
import SFXMedia
import SFXSystem
import Synchronization

/// Sends a recording (any file) to an HTTP(S) server with libcurl (CSFXCurl's `sfx_curl_upload`,
/// libcurl loaded at the first transfer): a PUT of the file's bytes, or a multipart/form-data
/// POST with plain form fields and then the file in one field. The `Content-Type` comes from the
/// file's content, as `sfx info` gives it (`AudioContentType`): audio/mp4 for M4A, audio/ogg for
/// Opus and Vorbis, audio/mpeg for MP3, audio/flac, audio/wav; a caller's `Content-Type` header
/// overrides it (a presigned PUT signed with another type).
///
/// ```swift
/// let response = try await Upload.send(url, to: URL(string: "https://example.com/memos/1.m4a")!,
///                                      headers: ["Authorization": "Bearer \(token)"])
/// let posted = try await Upload.send(url, to: form, method: .multipart(field: "file"),
///                                    fields: [("token", token), ("key", "memos/1.m4a")]) { sent, total in … }
/// ```
/// Any status from 400 up throws `UploadError.rejected` with the status and the body's first line.
/// Connection errors and 5xx are tried again (`Retry`); cancelling the Task that awaits `send`
/// stops the transfer at once and throws `UploadError.cancelled`.
///
/// The file is never read into memory, nor copied: each attempt runs on a thread of its own
/// (`sfx-upload`), where libcurl reads the file from the descriptor opened and checked here, a
/// piece at a time as it sends it, the multipart envelope around it built by libcurl's mime API.
/// Redirects are followed (up to 10, http and https only); the User-Agent is "sfx".
public enum Upload {
    public enum Method: Sendable, Hashable {
        /// The file's bytes as the request body.
        case put
        /// multipart/form-data with the file in `field` (its file name and Content-Type given),
        /// after the plain `fields` of `send`.
        case multipart(field: String)
    }

    public struct Response: Sendable {
        public var status: Int
        /// The answer's body: its first MiB at most (an error page or a JSON answer, not a
        /// download); the rest is read and dropped.
        public var body: Data
        /// The Content-Type the file was sent with (for multipart, the file part's).
        public var contentType: String
        /// How many requests were made (1 unless an attempt failed and was tried again).
        public var attempts: Int = 1
    }

    /// When an upload is tried again: after a connection error (refused, reset, DNS, timed out)
    /// or an answer of 5xx or 429, up to `attempts` requests in all, waiting
    /// `initialDelay × 2ⁿ` seconds (at most `maximumDelay`) with jitter (a random half to all of
    /// it) between them. A `Retry-After` in seconds on a 503 or 429 is waited instead, up to
    /// `maximumDelay`. Never after any other 4xx: the same request would be refused again (429,
    /// Too Many Requests, is the server asking for exactly this: a later try). TLS failures and
    /// bad files are not tried again either.
    public struct Retry: Sendable, Hashable {
        public var attempts: Int
        public var initialDelay: Double
        public var maximumDelay: Double

        public init(attempts: Int, initialDelay: Double = 0.5, maximumDelay: Double = 8) {
            self.attempts = max(1, attempts)
            self.initialDelay = max(0, initialDelay)
            self.maximumDelay = max(0, maximumDelay)
        }

        /// One request, no second.
        public static let none = Retry(attempts: 1)
        /// 3 requests in all, 0.5 s then 1 s apart (with jitter), waits capped at 8 s: the default.
        public static let standard = Retry(attempts: 3, initialDelay: 0.5, maximumDelay: 8)

        /// The wait before request `attempt + 1` (after `attempt` failed), in seconds.
        func delay(after attempt: Int, retryAfter: Double?) -> Double {
            if let retryAfter { return min(max(0, retryAfter), maximumDelay) }
            let full = min(initialDelay * pow(2, Double(attempt - 1)), maximumDelay)
            return full * Double.random(in: 0.5...1)
        }
    }

    /// How long an upload may go with nothing sent or received (the server's answer included)
    /// unless told: `[http] timeout` in sfx.conf, `sfx upload --timeout`.
    public static let defaultTimeout: Double = 30

    /// The most of an answer's body kept (`Response.body`, the text of `UploadError.rejected`).
    static let bodyLimit = 1 << 20

    /// Uploads `file` to `destination`; `progress` is called with the bytes sent and the total
    /// of the current attempt (it starts again from 0 when a request is tried again), on the
    /// upload's thread.
    ///
    /// - `headers` are sent with every attempt. Names must be HTTP tokens and values one line;
    ///   `Host` and `Content-Length` (and `Transfer-Encoding`) are refused, as the upload sets
    ///   them from the URL and the file. `Content-Type` replaces the type sfx infers: for a PUT
    ///   the request's, for multipart the file part's (the request's carries the boundary).
    /// - `fields` are plain multipart form fields, sent in their order before the file part
    ///   (an S3 POST policy requires the file last); with `.put` they are an error.
    /// - With nothing sent or received for `timeout` seconds (a server that takes the body and
    ///   never answers, or stops reading it), an attempt fails with `UploadError.timedOut`.
    /// - The error after more than one attempt is `UploadError.gaveUp`, with the count and the
    ///   last attempt's error.
    /// - Cancelling the awaiting Task stops the transfer (within 100 ms) or the wait between
    ///   attempts at once and throws `UploadError.cancelled`.
    public static func send(_ file: URL, to destination: URL, method: Method = .put, headers: [String: String] = [:],
                            fields: [(name: String, value: String)] = [], retry: Retry = .standard,
                            timeout: Double = defaultTimeout,
                            progress: (@Sendable (Int64, Int64) -> Void)? = nil) async throws(UploadError) -> Response {
        guard let scheme = destination.scheme?.lowercased(), scheme == "http" || scheme == "https", destination.host != nil else {
            throw .invalidURL(destination.absoluteString)
        }
        try check(headers: headers)
        if case .put = method, !fields.isEmpty {
            throw .invalidRequest("form fields (\(fields.map(\.name).joined(separator: ", "))) need a multipart upload; "
                                  + "give .multipart(field:) (sfx upload --form FIELD) or drop the fields")
        }
        if case .multipart(let field) = method { try check(fieldName: field, what: "the file's field") }
        for field in fields { try check(fieldName: field.name, what: "the form field") }
        let contentType: String
        let source: CheckedFile
        do {
            contentType = try headers.first { $0.key.lowercased() == "content-type" }?.value ?? AudioContentType.of(file)
            source = try CheckedFile(file)
        } catch let error as MediaError {
            throw .file(error)
        } catch {
            throw .file(MediaError(.failed(detail: "\(error)"), subject: file.path))
        }
        var attempt = 0
        while true {
            attempt += 1
            if Task.isCancelled { throw .cancelled }
            let outcome = try await once(source, to: destination, method: method, headers: headers, fields: fields,
                                         contentType: contentType, timeout: timeout, progress: progress)
            let failure: UploadError
            var retryAfter: Double?
            var again: Bool
            switch outcome {
            case .answered(let status, let data, let retryAfterHeader):
                if status < 400 { return Response(status: status, body: data, contentType: contentType, attempts: attempt) }
                failure = .rejected(url: destination.absoluteString, status: status, body: String(decoding: data, as: UTF8.self))
                again = status >= 500 || status == 429
                if status == 503 || status == 429 { retryAfter = seconds(retryAfter: retryAfterHeader) }
            case .failed(let error, let retryable):
                failure = error
                again = retryable
            }
            guard again, attempt < retry.attempts else {
                throw attempt > 1 ? .gaveUp(attempts: attempt, last: failure) : failure
            }
            let wait = retry.delay(after: attempt, retryAfter: retryAfter)
            do {
                try await Task.sleep(nanoseconds: UInt64(wait * 1e9))
            } catch {
                throw .cancelled
            }
        }
    }

    /// What one request ended with.
    private enum Attempt {
        case answered(status: Int, data: Data, retryAfter: String)
        /// No answer; `retryable` for a connection error worth another request.
        case failed(UploadError, retryable: Bool)
    }

    /// One request: sent from the checked file's descriptor on a thread of its own, awaited, and
    /// its answer or failure.
    private static func once(_ source: CheckedFile, to destination: URL, method: Method, headers: [String: String],
                             fields: [(name: String, value: String)], contentType: String, timeout: Double,
                             progress: (@Sendable (Int64, Int64) -> Void)?) async throws(UploadError) -> Attempt {
        let size: Int64
        do {
            size = try source.currentSize()
        } catch {
            throw .file(error)
        }
        var lines: [String] = []
        for name in headers.keys.sorted() where name.lowercased() != "content-type" {
            let value = headers[name]!
            lines.append(value.isEmpty ? "\(name);" : "\(name): \(value)")   // "Name;": libcurl's way to send an empty value
        }
        let part: (field: String, name: String)?
        switch method {
        case .put:
            lines.append("Content-Type: \(contentType)")
            part = nil
        case .multipart(let field):
            part = (field, source.url.lastPathComponent.filter { $0 != "\r" && $0 != "\n" && $0 != "\r\n" })
        }
        let transfer = UploadTransfer(url: destination.absoluteString, fd: source.fd, size: size, contentType: contentType,
                                      part: part, fields: fields, headers: lines,
                                      stallMilliseconds: max(1, Int((timeout * 1000).rounded(.up))), progress: progress)
        let ended = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                transfer.start { continuation.resume(returning: $0) }
            }
        } onCancel: {
            transfer.cancel()
        }
        withExtendedLifetime(source) {}
        switch ended.kind {
        case Int32(SFX_CURL_OK):
            return .answered(status: ended.status, data: ended.body, retryAfter: ended.retryAfter)
        case Int32(SFX_CURL_ABORTED):
            throw .cancelled
        case Int32(SFX_CURL_READ):
            throw .file(MediaError(.failed(detail: "\(ended.detail); check the file and upload it again"), subject: source.url.path))
        default:
            let failure = TransferFailure(kind: ended.kind, detail: ended.detail)
            let retryable = [.refused, .hostNotFound, .timedOut, .dropped].contains(failure)
                || { if case .other(let text) = failure { return text.lowercased().contains("reset") } else { return false } }()
            return .failed(UploadError(destination, failure, timeout: timeout), retryable: retryable)
        }
    }

    /// A `Retry-After` of whole seconds (an HTTP date is not taken: back-off applies then).
    private static func seconds(retryAfter value: String) -> Double? {
        Double(value).flatMap { $0 >= 0 && $0.isFinite ? $0 : nil }
    }

    /// Header names are HTTP tokens (RFC 9110), values one line without NUL; the headers the
    /// upload sets itself are not the caller's to give.
    static func check(headers: [String: String]) throws(UploadError) {
        let token = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        var seen: [String: String] = [:]
        for name in headers.keys.sorted() {
            let value = headers[name]!
            guard !name.isEmpty, name.allSatisfy(token.contains) else {
                throw .invalidRequest("header '\(name.debugDescription.dropFirst().dropLast())' is not a valid header name; "
                                      + "use letters, digits and !#$%&'*+-.^_`|~ only, e.g. X-Api-Key")
            }
            guard !value.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" || $0 == "\r\n" }) else {
                throw .invalidRequest("header \(name) has a line break or NUL in its value; give its value on one line")
            }
            switch name.lowercased() {
            case "host":
                throw .invalidRequest("header Host cannot be set: it comes from the URL; put the host in the URL instead")
            case "content-length":
                throw .invalidRequest("header Content-Length cannot be set: it is the body's length, which sfx sends itself; drop it")
            case "transfer-encoding":
                throw .invalidRequest("header Transfer-Encoding cannot be set: sfx sends the body with its length; drop it")
            default: break
            }
            if let other = seen[name.lowercased()] {
                throw .invalidRequest("headers \(other) and \(name) are the same header; give it once")
            }
            seen[name.lowercased()] = name
        }
    }

    /// A form field's name: not empty, one line without NUL (quoted in the part's header).
    static func check(fieldName name: String, what: String) throws(UploadError) {
        guard !name.isEmpty, !name.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" || $0 == "\r\n" }) else {
            throw .invalidRequest("\(what) name '\(name.debugDescription.dropFirst().dropLast())' is empty or has a line break or NUL; give a name on one line, e.g. file")
        }
    }
}

/// The file to upload, opened once and checked to be a regular file (not a FIFO or a device,
/// which could block or never end). Every attempt reads this descriptor: the file sent is the
/// one checked, whatever its name comes to mean meanwhile.
private final class CheckedFile: Sendable {
    let url: URL
    let fd: Int32

    init(_ url: URL) throws {
        self.url = url
        let fd = open(url.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw MediaError(.failed(detail: "cannot be read (\(String(cString: strerror(errno)))); check the path"), subject: url.path) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw MediaError(.notRegularFile(kind: "not a regular file"), subject: url.path)
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Its size now (an attempt sends this many bytes).
    func currentSize() throws(MediaError) -> Int64 {
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            throw MediaError(.failed(detail: "cannot be read (\(String(cString: strerror(errno)))); check the file"), subject: url.path)
        }
        return Int64(st.st_size)
    }
}

/// One attempt's transfer: the request as C wants it (its strings and arrays kept until the
/// transfer is done), the thread it runs on, and the flag a cancel sets.
private final class UploadTransfer: @unchecked Sendable {
    /// How it ended: an SFX_CURL_ kind, the answer, libcurl's words.
    struct Ended: Sendable {
        var kind: Int32
        var status: Int
        var body: Data
        var retryAfter: String
        var detail: String
    }

    private var request = sfx_curl_upload_request()
    private let progress: (@Sendable (Int64, Int64) -> Void)?
    private let cancelled = Atomic<Bool>(false)
    /// What `strdup` and `allocate` made for `request`, freed in deinit.
    private var strings: [UnsafeMutablePointer<CChar>] = []
    private var headerList: UnsafeMutablePointer<UnsafePointer<CChar>?>?
    private var fieldList: UnsafeMutablePointer<sfx_curl_field>?
    private var ended: (@Sendable (Ended) -> Void)?

    init(url: String, fd: Int32, size: Int64, contentType: String, part: (field: String, name: String)?,
         fields: [(name: String, value: String)], headers: [String], stallMilliseconds: Int,
         progress: (@Sendable (Int64, Int64) -> Void)?) {
        self.progress = progress
        request.url = keep(url)
        request.fd = fd
        request.file_size = size
        request.content_type = keep(contentType)
        request.stall_ms = stallMilliseconds
        if let part {
            request.multipart = 1
            request.file_field = keep(part.field)
            request.file_name = keep(part.name)
            let list = UnsafeMutablePointer<sfx_curl_field>.allocate(capacity: max(1, fields.count))
            for (i, field) in fields.enumerated() {
                let value = Array(field.value.utf8)
                list[i] = sfx_curl_field(name: keep(field.name), value: keep(bytes: value), value_size: value.count)
            }
            fieldList = list
            request.fields = UnsafePointer(list)
            request.field_count = fields.count
        }
        let list = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: max(1, headers.count))
        for (i, header) in headers.enumerated() { list[i] = keep(header) }
        headerList = list
        request.headers = UnsafePointer(list)
        request.header_count = headers.count
    }

    deinit {
        strings.forEach { free($0) }
        headerList?.deallocate()
        fieldList?.deallocate()
    }

    private func keep(_ text: String) -> UnsafePointer<CChar> { keep(bytes: Array(text.utf8)) }

    /// A NUL-terminated copy of `bytes` (which may hold NULs of their own), freed in deinit.
    private func keep(bytes: [UInt8]) -> UnsafePointer<CChar> {
        let copy = malloc(bytes.count + 1)!.assumingMemoryBound(to: CChar.self)
        bytes.withUnsafeBytes { if let base = $0.baseAddress { memcpy(copy, base, bytes.count) } }
        copy[bytes.count] = 0
        strings.append(copy)
        return UnsafePointer(copy)
    }

    /// Stops the transfer (at once if it has not started, else within 100 ms).
    func cancel() { cancelled.store(true, ordering: .relaxed) }

    /// Runs the transfer on a new thread, `sfx-upload`; `ended` is called there once it ends.
    func start(_ ended: @escaping @Sendable (Ended) -> Void) {
        self.ended = ended
        let box = Unmanaged.passRetained(self)
        var thread = pthread_t()
        let made = pthread_create(&thread, nil, { raw in
            let transfer = Unmanaged<UploadTransfer>.fromOpaque(raw!).takeRetainedValue()
            _ = sfx_name_thread("sfx-upload")
            transfer.ended?(transfer.run())
            return nil
        }, box.toOpaque())
        if made == 0 {
            pthread_detach(thread)
        } else {
            box.release()
            ended(Ended(kind: Int32(SFX_CURL_OTHER), status: 0, body: Data(), retryAfter: "",
                        detail: "cannot start the upload's thread (\(String(cString: strerror(made))))"))
        }
    }

    /// The transfer, on the calling thread.
    private func run() -> Ended {
        var callbacks = sfx_curl_upload_callbacks()
        callbacks.context = Unmanaged.passUnretained(self).toOpaque()
        if progress != nil {
            callbacks.progress = { context, sent, total in
                Unmanaged<UploadTransfer>.fromOpaque(context!).takeUnretainedValue().progress?(Int64(sent), Int64(total))
            }
        }
        callbacks.cancelled = { context in
            Unmanaged<UploadTransfer>.fromOpaque(context!).takeUnretainedValue().cancelled.load(ordering: .relaxed) ? 1 : 0
        }
        let body = UnsafeMutableRawPointer.allocate(byteCount: Upload.bodyLimit, alignment: 16)
        defer { body.deallocate() }
        var response = sfx_curl_upload_response()
        response.body = body.assumingMemoryBound(to: CChar.self)
        response.body_capacity = Upload.bodyLimit
        var detail = [CChar](repeating: 0, count: 512)
        let kind = withExtendedLifetime(self) {
            sfx_curl_upload(&request, &callbacks, &response, &detail, detail.count)
        }
        let retryAfter = withUnsafeBytes(of: &response.retry_after) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return Ended(kind: kind, status: Int(response.status), body: Data(bytes: body, count: response.body_size),
                     retryAfter: retryAfter, detail: String(decoding: detail.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}

/// Why an upload failed, as one line.
public enum UploadError: Error, CustomStringConvertible, Sendable, Equatable {
    case invalidURL(String)
    case file(MediaError)
    /// The connection failed (no server, TLS, DNS…); `detail` says what and what to do.
    case transport(url: String, detail: String)
    /// Nothing was sent or received for `seconds` (a server that never answers).
    case timedOut(url: String, seconds: Double)
    /// The server answered 4xx or 5xx; `body` is what it said.
    case rejected(url: String, status: Int, body: String)
    /// A header or form field the upload cannot send, or fields with a PUT; the line says which and why.
    case invalidRequest(String)
    /// The Task awaiting the upload was cancelled; the transfer was stopped.
    case cancelled
    /// Every attempt failed (`Upload.Retry`): how many were made, and the last one's error.
    indirect case gaveUp(attempts: Int, last: UploadError)

    /// The error itself, without the count of attempts of `gaveUp`.
    public var underlying: UploadError {
        if case .gaveUp(_, let last) = self { return last.underlying }
        return self
    }

    /// The error of a failed upload to `url`.
    init(_ url: URL, _ failure: TransferFailure, timeout: Double) {
        let what: String
        switch failure {
        case .timedOut: self = .timedOut(url: url.absoluteString, seconds: timeout); return
        case .hostNotFound: what = "host \(url.host ?? "?") not found (DNS); check the address and the network"
        case .refused: what = "the connection was refused; check the address and port, and that the server runs"
        case .tls(let detail): what = "TLS failed (\(detail)); check the server's certificate and the system's clock"
        case .dropped: what = "the connection dropped before the server answered; try again"
        case .headerTooLarge: what = TransferFailure.headerTooLargeText
        case .redirects(let detail): what = "more than 10 redirects (\(detail)); check the URL"
        case .unavailable(let line): what = line
        case .other(let detail): what = "\(detail); check the address and that the server is running"
        }
        self = .transport(url: url.absoluteString, detail: what)
    }

    public var description: String {
        switch self {
        case .invalidURL(let url):
            return "\(url) is not an http:// or https:// URL; give the full address, e.g. https://example.com/upload"
        case .file(let error):
            return error.description
        case .transport(let url, let detail):
            return "\(url): the upload failed: \(detail)"
        case .timedOut(let url, let seconds):
            let shown = seconds == seconds.rounded() ? "\(Int(seconds))" : "\(seconds)"
            return "\(url): the upload failed: no answer from the server for \(shown) s (timed out); check that it is running, "
                + "or wait longer with --timeout or [http] timeout in sfx.conf"
        case .rejected(let url, let status, let body):
            let said = body.split(whereSeparator: \.isNewline).map { $0.trimmed }.filter { !$0.isEmpty }.joined(separator: " / ")
            return "\(url): the server answered \(status) \(HTTPStatus.reasonPhrase(status))"
                + (said.isEmpty ? "" : ": \(said.prefix(300))")
        case .invalidRequest(let detail):
            return detail
        case .cancelled:
            return "the upload was cancelled"
        case .gaveUp(let attempts, let last):
            return "\(last.description) (gave up after \(attempts) attempts)"
        }
    }
}
