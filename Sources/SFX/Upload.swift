import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SFXMedia

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

    /// Uploads `file` to `destination`; `progress` is called with the bytes sent and the total.
    public static func send(_ file: URL, to destination: URL, method: Method = .put,
                            progress: (@Sendable (Int64, Int64) -> Void)? = nil) async throws(UploadError) -> Response {
        guard let scheme = destination.scheme?.lowercased(), scheme == "http" || scheme == "https", destination.host != nil else {
            throw .invalidURL(destination.absoluteString)
        }
        let contentType: String
        let bytes: Data
        do {
            contentType = try AudioContentType.of(file)
            bytes = try readRegularFile(file)
        } catch let error as MediaError {
            throw .file(error)
        } catch {
            throw .file(MediaError(.failed(detail: "\(error)"), subject: file.path))
        }
        var request = URLRequest(url: destination)
        let body: Data
        switch method {
        case .put:
            request.httpMethod = "PUT"
            request.setValue(contentType, forHTTPHeaderField: "Content-Type")
            body = bytes
        case .multipart(let field):
            let boundary = "sfx-" + UUID().uuidString
            request.httpMethod = "POST"
            request.setValue("multipart/form-data; boundary=\(boundary)", forHTTPHeaderField: "Content-Type")
            body = multipart(bytes, field: field, fileName: file.lastPathComponent, contentType: contentType, boundary: boundary)
        }
        let delegate = ProgressDelegate(progress)
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let result: Result<(Data, HTTPURLResponse), UploadError> = await withCheckedContinuation { continuation in
            let task = session.uploadTask(with: request, from: body) { data, response, error in
                if let error {
                    continuation.resume(returning: .failure(.transport(url: destination.absoluteString, detail: error.localizedDescription)))
                } else if let response = response as? HTTPURLResponse {
                    continuation.resume(returning: .success((data ?? Data(), response)))
                } else {
                    continuation.resume(returning: .failure(.transport(url: destination.absoluteString, detail: "no HTTP response")))
                }
            }
            task.resume()
        }
        let (data, response) = try result.get()
        guard response.statusCode < 400 else {
            throw .rejected(url: destination.absoluteString, status: response.statusCode, body: String(decoding: data, as: UTF8.self))
        }
        return Response(status: response.statusCode, body: data, contentType: contentType)
    }

    static func multipart(_ bytes: Data, field: String, fileName: String, contentType: String, boundary: String) -> Data {
        func quoted(_ text: String) -> String {
            text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                .replacingOccurrences(of: "\r", with: "").replacingOccurrences(of: "\n", with: "")
        }
        var body = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(quoted(field))\"; filename=\"\(quoted(fileName))\"\r\n".utf8)
        body += Data("Content-Type: \(contentType)\r\n\r\n".utf8)
        body += bytes
        body += Data("\r\n--\(boundary)--\r\n".utf8)
        return body
    }

    /// The file's bytes, if it is a regular file (not a FIFO or a device).
    private static func readRegularFile(_ url: URL) throws -> Data {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw MediaError(.failed(detail: "cannot be read (\(String(cString: strerror(errno)))); check the path"), subject: url.path) }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
            throw MediaError(.notRegularFile(kind: "not a regular file"), subject: url.path)
        }
        return try handle.readToEnd() ?? Data()
    }
}

/// Why an upload failed, as one line.
public enum UploadError: Error, CustomStringConvertible, Sendable, Equatable {
    case invalidURL(String)
    case file(MediaError)
    /// The connection failed (no server, TLS, DNS…).
    case transport(url: String, detail: String)
    /// The server answered 4xx or 5xx; `body` is what it said.
    case rejected(url: String, status: Int, body: String)

    public var description: String {
        switch self {
        case .invalidURL(let url):
            return "\(url) is not an http:// or https:// URL; give the full address, e.g. https://example.com/upload"
        case .file(let error):
            return error.description
        case .transport(let url, let detail):
            return "\(url): the upload failed: \(detail); check the address and that the server is running"
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
