import SFXPlayback
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SFXMedia
import Synchronization

/// Sends a recording (any file) to an HTTP(S) server with the toolchain's URLSession
/// (FoundationNetworking, over libcurl): a PUT of the file's bytes, or a multipart/form-data
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
/// The file is never read into memory: URLSession streams the body from a file (see `send`).
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

    /// Uploads `file` to `destination`; `progress` is called with the bytes sent and the total
    /// of the current attempt (it starts again from 0 when a request is tried again).
    ///
    /// - `headers` are sent with every attempt. Names must be HTTP tokens and values one line;
    ///   `Host` and `Content-Length` (and `Transfer-Encoding`) are refused, as URLSession sets
    ///   them from the URL and the file. `Content-Type` replaces the type sfx infers: for a PUT
    ///   the request's, for multipart the file part's (the request's carries the boundary).
    /// - `fields` are plain multipart form fields, sent in their order before the file part
    ///   (an S3 POST policy requires the file last); with `.put` they are an error.
    /// - With nothing sent or received for `timeout` seconds (a server that takes the body and
    ///   never answers), an attempt fails with `UploadError.timedOut`.
    /// - The error after more than one attempt is `UploadError.gaveUp`, with the count and the
    ///   last attempt's error.
    /// - Cancelling the awaiting Task cancels the URLSession task or the wait between attempts
    ///   at once and throws `UploadError.cancelled`; the multipart body's copy is removed.
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
        let delegate = TransferDelegate(progress)
        let configuration = URLSessionConfiguration.keepingNothing
        configuration.timeoutIntervalForRequest = timeout
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        var attempt = 0
        while true {
            attempt += 1
            if Task.isCancelled { throw .cancelled }
            let outcome = try await once(source, to: destination, method: method, headers: headers, fields: fields,
                                         contentType: contentType, timeout: timeout, session: session, delegate: delegate)
            let failure: UploadError
            var retryAfter: Double?
            var again: Bool
            switch outcome {
            case .answered(let status, let data, let response):
                if status < 400 { return Response(status: status, body: data, contentType: contentType, attempts: attempt) }
                failure = .rejected(url: destination.absoluteString, status: status, body: String(decoding: data, as: UTF8.self))
                again = status >= 500 || status == 429
                if status == 503 || status == 429 { retryAfter = seconds(retryAfterOf: response) }
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
        case answered(status: Int, data: Data, response: HTTPURLResponse)
        /// No answer; `retryable` for a connection error worth another request.
        case failed(UploadError, retryable: Bool)
    }

    /// One request: the body prepared (for multipart, a fresh copy: URLSession's own descriptor
    /// of the last one is gone with its name), sent, and its answer or failure.
    private static func once(_ source: CheckedFile, to destination: URL, method: Method, headers: [String: String],
                             fields: [(name: String, value: String)], contentType: String, timeout: Double,
                             session: URLSession, delegate: TransferDelegate) async throws(UploadError) -> Attempt {
        // The body is streamed from a file by URLSession, never held in memory: the checked file
        // itself for a PUT; for multipart, the envelope and the file copied in chunks to an
        // unnamed file (O_TMPFILE) in a new private directory (mkdtemp, 0700), given a name
        // there only once it is whole, and unlinked with its directory as soon as URLSession
        // has opened it (`MultipartBody`): a SIGKILL leaves nothing behind but, in the
        // moments between, an empty private directory's name.
        var request = URLRequest(url: destination, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        for (name, value) in headers where name.lowercased() != "content-type" {
            request.setValue(value, forHTTPHeaderField: name)
        }
        let bodyFile: URL
        var multipart: MultipartBody?
        defer { multipart?.remove() }
        do {
            switch method {
            case .put:
                request.httpMethod = "PUT"
                request.setValue(contentType, forHTTPHeaderField: "Content-Type")
                bodyFile = try source.pathStillNamingIt()
            case .multipart(let field):
                let boundary = "sfx-" + UUID().uuidString
                request.httpMethod = "POST"
                request.setValue("multipart/form-data; boundary=\(boundary)", forHTTPHeaderField: "Content-Type")
                let (head, tail) = envelope(field: field, fileName: source.url.lastPathComponent, contentType: contentType,
                                            boundary: boundary, fields: fields)
                let body = try MultipartBody(directory: privateDirectory())
                multipart = body
                try source.copy(between: head, and: tail, to: body.descriptor, path: body.url)
                bodyFile = try body.name()
            }
        } catch let error as MediaError {
            throw .file(error)
        } catch {
            throw .file(MediaError(.failed(detail: "\(error)"), subject: source.url.path))
        }
        let running = RunningTask()
        let result: Attempt = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                delegate.expect { data, response, error in
                    if let error {
                        if (error as NSError).code == NSURLErrorCancelled {
                            continuation.resume(returning: .failed(.cancelled, retryable: false))
                            return
                        }
                        let failure = TransferFailure(error)
                        let retryable = [.refused, .hostNotFound, .timedOut, .dropped].contains(failure)
                            || { if case .other(let text) = failure { return text.lowercased().contains("reset") } else { return false } }()
                        continuation.resume(returning: .failed(UploadError(destination, error, timeout: timeout), retryable: retryable))
                    } else if let response = response as? HTTPURLResponse {
                        continuation.resume(returning: .answered(status: response.statusCode, data: data, response: response))
                    } else {
                        continuation.resume(returning: .failed(.transport(url: destination.absoluteString, detail: "no HTTP response"), retryable: false))
                    }
                }
                running.start(session.uploadTask(with: request, fromFile: bodyFile))
                multipart?.unlinkOnceOpened()
            }
        } onCancel: {
            running.cancel()
        }
        withExtendedLifetime(source) {}
        if case .failed(.cancelled, _) = result { throw .cancelled }
        return result
    }

    /// A `Retry-After` of whole seconds (an HTTP date is not taken: back-off applies then).
    private static func seconds(retryAfterOf response: HTTPURLResponse) -> Double? {
        guard let value = response.allHeaderFields.first(where: { ($0.key as? String)?.lowercased() == "retry-after" })?.value as? String else { return nil }
        return Double(value.trimmingCharacters(in: .whitespaces)).flatMap { $0 >= 0 && $0.isFinite ? $0 : nil }
    }

    /// Header names are HTTP tokens (RFC 9110), values one line without NUL; URLSession's own
    /// headers are not the caller's to give.
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

    /// The multipart body: `head` (the plain `fields` in order, then the file part's header),
    /// then the file's bytes, then `tail`.
    static func envelope(field: String, fileName: String, contentType: String, boundary: String,
                         fields: [(name: String, value: String)] = []) -> (head: Data, tail: Data) {
        func quoted(_ text: String) -> String {
            text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                .replacingOccurrences(of: "\r", with: "").replacingOccurrences(of: "\n", with: "")
        }
        var head = Data()
        for (name, value) in fields {
            head += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(quoted(name))\"\r\n\r\n\(value)\r\n".utf8)
        }
        head += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(quoted(field))\"; filename=\"\(quoted(fileName))\"\r\n".utf8)
        head += Data("Content-Type: \(contentType)\r\n\r\n".utf8)
        return (head, Data("\r\n--\(boundary)--\r\n".utf8))
    }

    /// A new directory only this user can enter: mkdtemp in $TMPDIR (else /tmp), mode 0700.
    private static func privateDirectory() throws -> URL {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        var template = Array(((base.hasSuffix("/") ? base : base + "/") + "sfx-upload-XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) != nil }) else {
            throw MediaError(.failed(detail: "cannot make a directory for the multipart body (\(String(cString: strerror(errno)))); set TMPDIR to a writable directory"), subject: base)
        }
        return URL(filePath: String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self), directoryHint: .isDirectory)
    }
}

/// The URLSession task of an attempt, for cancellation from another thread: cancelled at once
/// if the awaiting Task was cancelled before it started.
private final class RunningTask: @unchecked Sendable {
    private let state = Mutex<(task: URLSessionTask?, cancelled: Bool)>((nil, false))

    func start(_ task: URLSessionTask) {
        let cancelled = state.withLock { state in
            state.task = task
            return state.cancelled
        }
        task.resume()
        if cancelled { task.cancel() }
    }

    func cancel() {
        let task = state.withLock { state in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }
}

/// The file to upload, opened once and checked to be a regular file (not a FIFO or a device,
/// which could block or never end).
private final class CheckedFile {
    let url: URL
    let fd: Int32
    let status: stat

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
        status = st
    }

    deinit { close(fd) }

    /// The file's real path (symbolic links resolved, from /proc/self/fd), after checking that
    /// it names the opened file itself and is no symbolic link: URLSession opens the file by
    /// path and takes its length from lstat, so /proc/self/fd/N itself cannot be given.
    func pathStillNamingIt() throws -> URL {
        guard let real = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"), real.hasPrefix("/") else {
            throw MediaError(.failed(detail: "its path cannot be found again; upload it from a directory of your own"), subject: url.path)
        }
        var now = stat()
        guard lstat(real, &now) == 0, now.st_mode & S_IFMT == S_IFREG, now.st_dev == status.st_dev, now.st_ino == status.st_ino else {
            throw MediaError(.failed(detail: "was replaced while it was being sent; upload it again"), subject: url.path)
        }
        return URL(filePath: real)
    }

    /// Writes `head`, the file's bytes (1 MiB at a time) and `tail` to `out` (`target` names it
    /// in errors).
    func copy(between head: Data, and tail: Data, to out: Int32, path target: URL) throws {
        func write(_ bytes: UnsafeRawBufferPointer) throws {
            var done = 0
            while done < bytes.count {
                let n = Glibc.write(out, bytes.baseAddress! + done, bytes.count - done)
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { throw failure(target, "cannot be written (for the multipart body)") }
                done += n
            }
        }
        try head.withUnsafeBytes(write)
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { chunk.deallocate() }
        var offset: off_t = 0
        while true {
            let n = pread(fd, chunk.baseAddress, chunk.count, offset)
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw failure(url, "cannot be read", fix: "check the disk and try again") }
            if n == 0 { break }
            try write(UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
            offset += off_t(n)
        }
        try tail.withUnsafeBytes(write)
    }

    /// "PATH: cannot be written (for the multipart body) (No space left on device); free some space or set TMPDIR to another directory"
    private func failure(_ file: URL, _ what: String, fix: String = "free some space or set TMPDIR to another directory") -> MediaError {
        MediaError(.failed(detail: "\(what) (\(String(cString: strerror(errno)))); \(fix)"), subject: file.path)
    }
}

/// The multipart body's file: made unnamed (O_TMPFILE) in its private directory, named `body`
/// there once written (URLSession opens a body by path), and unlinked with the directory as
/// soon as URLSession has it open.
private final class MultipartBody: @unchecked Sendable {
    let directory: URL
    let descriptor: Int32
    var url: URL { directory.appending(path: "body") }
    private let identity: (dev_t, ino_t)
    /// Named when it was made (no O_TMPFILE where TMPDIR is).
    private var named = false
    private let done = Atomic<Bool>(false)
    private let removed = Mutex(false)

    init(directory: URL) throws {
        self.directory = directory
        let oTmpFile: Int32 = 0o20_200_000   // O_TMPFILE (__O_TMPFILE | O_DIRECTORY)
        var fd = open(directory.path, O_RDWR | O_CLOEXEC | oTmpFile, 0o600)
        if fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL) {
            // A file system without O_TMPFILE: named from the start, in the private directory.
            fd = open(directory.appending(path: "body").path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            named = fd >= 0
        }
        guard fd >= 0 else {
            let error = MediaError(.failed(detail: "cannot make the multipart body's file (\(String(cString: strerror(errno)))); set TMPDIR to a writable directory"), subject: directory.path)
            rmdir(directory.path)
            throw error
        }
        var info = stat()
        fstat(fd, &info)
        descriptor = fd
        identity = (info.st_dev, info.st_ino)
    }

    deinit {
        remove()
        close(descriptor)
    }

    /// Gives the written file its name in the directory (linkat of the descriptor).
    func name() throws -> URL {
        if named { return url }
        guard linkat(AT_FDCWD, "/proc/self/fd/\(descriptor)", AT_FDCWD, url.path, AT_SYMLINK_FOLLOW) == 0 else {
            throw MediaError(.failed(detail: "cannot name the multipart body (\(String(cString: strerror(errno)))); set TMPDIR to another directory"), subject: url.path)
        }
        return url
    }

    /// Watches this process's descriptors, from a thread of its own, for URLSession's own
    /// descriptor of the file, and unlinks the name and the directory as soon as it is there.
    func unlinkOnceOpened() {
        let thread = Thread { [self] in
            while !done.load(ordering: .relaxed) {
                if openedElsewhere() { return remove() }
                usleep(1_000)
            }
        }
        thread.name = "sfx-upload-unlink"
        thread.start()
    }

    /// Unlinks the file's name and removes the directory (once; also when the upload ends).
    func remove() {
        done.store(true, ordering: .relaxed)
        removed.withLock { removed in
            guard !removed else { return }
            removed = true
            unlink(url.path)
            rmdir(directory.path)
        }
    }

    /// Whether a descriptor other than ours is open on the file.
    private func openedElsewhere() -> Bool {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return false }
        for name in names {
            guard let fd = Int32(name), fd != descriptor else { continue }
            var info = stat()
            if fstat(fd, &info) == 0, info.st_dev == identity.0, info.st_ino == identity.1 { return true }
        }
        return false
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

    /// The error of a failed URLSession upload to `url`.
    init(_ url: URL, _ error: any Error, timeout: Double) {
        let what: String
        switch TransferFailure(error) {
        case .timedOut: self = .timedOut(url: url.absoluteString, seconds: timeout); return
        case .hostNotFound: what = "host \(url.host ?? "?") not found (DNS); check the address and the network"
        case .refused: what = "the connection was refused; check the address and port, and that the server runs"
        case .tls(let detail): what = "TLS failed (\(detail)); check the server's certificate and the system's clock"
        case .dropped: what = "the connection dropped before the server answered; try again"
        case .headerTooLarge: what = TransferFailure.headerTooLargeText
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
            let said = body.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " / ")
            return "\(url): the server answered \(status) \(HTTPURLResponse.localizedString(forStatusCode: status))"
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

/// The session's delegate: progress, the answer's bytes (up to 1 MiB; an error page or a JSON
/// answer, not a download) and the end of each attempt's task. A task with a completion handler
/// gets no `didSendBodyData` from FoundationNetworking, so tasks are made without one and end
/// here, one attempt at a time.
private final class TransferDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    typealias Ended = @Sendable (Data, URLResponse?, (any Error)?) -> Void
    let progress: (@Sendable (Int64, Int64) -> Void)?
    private let state = Mutex<(data: Data, ended: Ended?)>((Data(), nil))
    static let bodyLimit = 1 << 20

    init(_ progress: (@Sendable (Int64, Int64) -> Void)?) { self.progress = progress }

    /// Where the next task's end goes.
    func expect(_ ended: @escaping Ended) {
        state.withLock { $0 = (Data(), ended) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
                    totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        progress?(totalBytesSent, totalBytesExpectedToSend)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        state.withLock { state in
            let room = Self.bodyLimit - state.data.count
            if room > 0 { state.data += data.prefix(room) }
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (data, ended) = state.withLock { state in
            defer { state = (Data(), nil) }
            return (state.data, state.ended)
        }
        ended?(data, task.response, error)
    }
}

// URLSession's errors as TransferFailure (until uploads run over CSFXCurl too).
extension TransferFailure {
    public init(_ error: any Error) {
        let error = error as NSError
        let text = error.localizedDescription
        switch error.code {
        case NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed:
            self = .hostNotFound
        case NSURLErrorSecureConnectionFailed, NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasBadDate,
             NSURLErrorServerCertificateHasUnknownRoot, NSURLErrorServerCertificateNotYetValid,
             NSURLErrorClientCertificateRejected, NSURLErrorClientCertificateRequired:
            self = .tls(text)
        case NSURLErrorTimedOut:
            self = .timedOut
        case NSURLErrorNetworkConnectionLost:
            self = .dropped
        case NSURLErrorCannotConnectToHost:
            self = .refused
        default:
            let lower = text.lowercased()
            if lower.contains("out of memory") || lower.contains("bytes header") || lower.contains("header too large") {
                self = .headerTooLarge
            } else if lower.contains("ssl") || lower.contains("certificate") {
                self = .tls(text)
            } else {
                self = .other(text.isEmpty ? "error \(error.code) in \(error.domain)" : text)
            }
        }
    }
}
