import SFXPlayback
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SFXMedia
import Synchronization

/// Sends a recording (any file) to an HTTP(S) server with the toolchain's URLSession
/// (FoundationNetworking, over libcurl): a PUT of the file's bytes, or a multipart/form-data
/// POST with the file in one field. The `Content-Type` comes from the file's content, as
/// `sfx info` gives it (`AudioContentType`): audio/mp4 for M4A, audio/ogg for Opus and Vorbis,
/// audio/mpeg for MP3, audio/flac, audio/wav.
///
/// ```swift
/// let response = try await Upload.send(url, to: URL(string: "https://example.com/memos/1.m4a")!)
/// let posted = try await Upload.send(url, to: form, method: .multipart(field: "audio")) { sent, total in … }
/// ```
/// Any status from 400 up throws `UploadError.rejected` with the status and the body's first line.
///
/// The file is never read into memory: URLSession streams the body from a file (see `send`).
public enum Upload {
    public enum Method: Sendable, Hashable {
        /// The file's bytes as the request body.
        case put
        /// multipart/form-data with the file in `field` (its file name and Content-Type given).
        case multipart(field: String)
    }

    public struct Response: Sendable {
        public var status: Int
        public var body: Data
        /// The Content-Type the file was sent with.
        public var contentType: String
    }

    /// How long an upload may go with nothing sent or received (the server's answer included)
    /// unless told: `[http] timeout` in sfx.conf, `sfx upload --timeout`.
    public static let defaultTimeout: Double = 30

    /// Uploads `file` to `destination`; `progress` is called with the bytes sent and the total.
    /// With nothing sent or received for `timeout` seconds (a server that takes the body and
    /// never answers), it fails with `UploadError.timedOut`.
    public static func send(_ file: URL, to destination: URL, method: Method = .put, timeout: Double = defaultTimeout,
                            progress: (@Sendable (Int64, Int64) -> Void)? = nil) async throws(UploadError) -> Response {
        guard let scheme = destination.scheme?.lowercased(), scheme == "http" || scheme == "https", destination.host != nil else {
            throw .invalidURL(destination.absoluteString)
        }
        let contentType: String
        let source: CheckedFile
        do {
            contentType = try AudioContentType.of(file)
            source = try CheckedFile(file)
        } catch let error as MediaError {
            throw .file(error)
        } catch {
            throw .file(MediaError(.failed(detail: "\(error)"), subject: file.path))
        }
        // The body is streamed from a file by URLSession, never held in memory: the checked file
        // itself for a PUT; for multipart, the envelope and the file copied in chunks to an
        // unnamed file (O_TMPFILE) in a new private directory (mkdtemp, 0700), given a name
        // there only once it is whole, and unlinked with its directory as soon as URLSession
        // has opened it (`MultipartBody`): a SIGKILL leaves nothing behind but, in the
        // moments between, an empty private directory's name.
        var request = URLRequest(url: destination, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
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
                let (head, tail) = envelope(field: field, fileName: file.lastPathComponent, contentType: contentType, boundary: boundary)
                let body = try MultipartBody(directory: privateDirectory())
                multipart = body
                try source.copy(between: head, and: tail, to: body.descriptor, path: body.url)
                bodyFile = try body.name()
            }
        } catch let error as MediaError {
            throw .file(error)
        } catch {
            throw .file(MediaError(.failed(detail: "\(error)"), subject: file.path))
        }
        let delegate = ProgressDelegate(progress)
        let configuration = URLSessionConfiguration.keepingNothing
        configuration.timeoutIntervalForRequest = timeout
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let result: Result<(Data, HTTPURLResponse), UploadError> = await withCheckedContinuation { continuation in
            let task = session.uploadTask(with: request, fromFile: bodyFile) { data, response, error in
                if let error {
                    continuation.resume(returning: .failure(UploadError(destination, error, timeout: timeout)))
                } else if let response = response as? HTTPURLResponse {
                    continuation.resume(returning: .success((data ?? Data(), response)))
                } else {
                    continuation.resume(returning: .failure(.transport(url: destination.absoluteString, detail: "no HTTP response")))
                }
            }
            task.resume()
            multipart?.unlinkOnceOpened()
        }
        withExtendedLifetime(source) {}
        let (data, response) = try result.get()
        guard response.statusCode < 400 else {
            throw .rejected(url: destination.absoluteString, status: response.statusCode, body: String(decoding: data, as: UTF8.self))
        }
        return Response(status: response.statusCode, body: data, contentType: contentType)
    }

    /// The multipart body: `head`, then the file's bytes, then `tail`.
    static func envelope(field: String, fileName: String, contentType: String, boundary: String) -> (head: Data, tail: Data) {
        func quoted(_ text: String) -> String {
            text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                .replacingOccurrences(of: "\r", with: "").replacingOccurrences(of: "\n", with: "")
        }
        var head = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(quoted(field))\"; filename=\"\(quoted(fileName))\"\r\n".utf8)
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
        }
    }
}

private final class ProgressDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    let progress: (@Sendable (Int64, Int64) -> Void)?
    init(_ progress: (@Sendable (Int64, Int64) -> Void)?) { self.progress = progress }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
                    totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        progress?(totalBytesSent, totalBytesExpectedToSend)
    }
}
