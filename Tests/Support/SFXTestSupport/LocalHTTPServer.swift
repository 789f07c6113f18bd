import Foundation

/// One of the test HTTP servers in Tests/http (`stream-server.py`, `upload-server.py`), run by
/// python3 on 127.0.0.1 at an ephemeral port, serving (or storing into) one directory. It ends
/// when its standard input closes: `stop`, or when released.
public final class LocalHTTPServer {
    /// The server did not report its port (is /usr/bin/python3 installed?).
    public struct NotStarted: Error, CustomStringConvertible {
        public let description: String
    }

    public let process = Process()
    /// The port it reported, its first line.
    public let port: Int
    private let input = Pipe()
    private var stopped = false

    /// Starts Tests/http/`script` with `directory` (and `arguments` after it) and waits for the
    /// port it reports.
    public init(script: String, serving directory: URL, arguments: [String] = []) throws {
        let path = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "http/\(script)")
        let output = Pipe()
        process.executableURL = URL(filePath: "/usr/bin/python3")
        process.arguments = [path.path, directory.path] + arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) {
            line.append(byte)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            throw NotStarted(description: "the test server (Tests/http/\(script)) did not report its port; is /usr/bin/python3 installed?")
        }
        self.port = port
    }

    /// `http://127.0.0.1:<port>/` followed by `path` (its modes and file names, as the script reads them).
    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)/\(path)")! }

    /// Closes its standard input and waits for it to end; `terminating` also sends it SIGTERM at
    /// once (a transfer that never ends, as the stream server's /endless, would hold it up).
    /// Only the first call does anything.
    public func stop(terminating: Bool = true) {
        guard !stopped else { return }
        stopped = true
        try? input.fileHandleForWriting.close()
        if terminating { process.terminate() }
        process.waitUntilExit()
    }

    deinit { stop() }
}
