// The upload's transfer over libcurl (Sources/CSFXCurl/upload.c) at its edges: an answer far
// larger than the MiB kept, a server that takes the connection and never reads or answers, a
// cancel in the middle of a large file, and the multipart body as Python's own MIME parser
// reads it.
import Foundation
import SFXTestSupport
import XCTest
import SFX
import SFXCardSupport
import Synchronization

extension UploadTests {
    /// A 5 MiB answer: the response keeps its first MiB, byte for byte, and the upload succeeds
    /// (the rest is read and dropped). The `sfx upload` process's peak memory does not grow with
    /// the answer: 50 MiB answered costs less than 4 MB over an empty answer.
    func testAnAnswerOverAMiBIsCutNotGrown() async throws {
        let file = try wav(bytes: 10_000, name: "answer.wav")
        let response = try await Upload.send(file, to: server!.url("answer/\(5 << 20)/answer.wav"), retry: .none)
        XCTAssertEqual(response.status, 201)
        XCTAssertEqual(response.body.count, 1 << 20)
        XCTAssertTrue(response.body == Data((0..<(1 << 20)).map { UInt8($0 % 251) }), "the answer's first MiB, byte for byte")
        var peaks: [Int] = []
        for size in [0, 50 << 20] {
            let run = try Sfx(card).run(["-c", Self.peakMemory, Sfx.program.path, "upload", file.path,
                                         server!.url("answer/\(size)/answer.wav").absoluteString],
                                        via: URL(filePath: "/usr/bin/python3"))
            XCTAssertEqual(run.status, 0, run.stderr)
            let line = try XCTUnwrap(run.stderr.split(separator: "\n").last { $0.hasPrefix("peak kB ") }, run.stderr)
            peaks.append(try XCTUnwrap(Int(line.dropFirst("peak kB ".count))))
        }
        XCTAssertLessThan(peaks[1] - peaks[0], 4_000, "peak memory \(peaks[0]) kB with an empty answer, \(peaks[1]) kB with 50 MiB")
    }

    /// A server that accepts the connection and then neither reads nor answers (a listening
    /// socket nobody takes connections from: the kernel accepts them): a 20 MB body fills the
    /// sockets' buffers and stops moving, and after the timeout the attempt ends with the one
    /// line that says so, for a PUT and for a form.
    func testAServerThatNeverReadsTimesOutSayingSo() async throws {
        let listener = try SilentListener()
        let file = try wav(bytes: 20_000_000, name: "stuck.wav")
        let url = "http://127.0.0.1:\(listener.port)/stuck.wav"
        for method in [Upload.Method.put, .multipart(field: "file")] {
            let started = Date()
            do {
                _ = try await Upload.send(file, to: URL(string: url)!, method: method, retry: .none, timeout: 1)
                XCTFail("no answer was taken for success (\(method))")
            } catch {
                XCTAssertEqual(error, .timedOut(url: url, seconds: 1))
                XCTAssertEqual(error.description, "\(url): the upload failed: no answer from the server for 1 s (timed out); check that it "
                               + "is running, or wait longer with --timeout or [http] timeout in sfx.conf")
            }
            let took = Date().timeIntervalSince(started)
            XCTAssertGreaterThanOrEqual(took, 1, "\(method)")
            XCTAssertLessThan(took, 3, "\(method): ended \(took) s after it started, with a timeout of 1 s")
        }
        withExtendedLifetime(listener) {}
    }

    /// Cancelling the Task in the middle of a PUT of a large file (1 GiB, which the server reads
    /// at 1.3 MB/s: 13 minutes): `.cancelled` within a second, the upload's thread gone, and
    /// only a little of the file sent.
    func testCancellingALargePutStopsWithinASecond() async throws {
        let file = card.directory.appending(path: "large.bin")
        let fd = open(file.path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o600)
        XCTAssertEqual(ftruncate(fd, 1 << 30), 0)
        close(fd)
        let url = server!.url("slow/large.bin")
        let sent = Mutex<Int64>(0)
        let task = Task { () async -> UploadError? in
            do throws(UploadError) {
                _ = try await Upload.send(file, to: url, headers: ["Content-Type": "application/octet-stream"]) { bytes, _ in
                    sent.withLock { $0 = bytes }
                }
                return nil
            } catch { return error }
        }
        let started = card.directory.appending(path: "received/started")
        for _ in 0..<1_000 where !FileManager.default.fileExists(atPath: started.path) { usleep(10_000) }
        XCTAssertTrue(FileManager.default.fileExists(atPath: started.path), "the upload did not start")
        usleep(300_000)
        XCTAssertEqual(Self.uploadThreads(), 1, "one sfx-upload thread while it runs")
        let cancelled = Date()
        task.cancel()
        let error = await task.value
        let took = Date().timeIntervalSince(cancelled)
        XCTAssertEqual(error, UploadError.cancelled)
        XCTAssertLessThan(took, 1, "ended \(took) s after the cancel")
        print("large upload cancelled: ended \(String(format: "%.3f", took)) s after Task.cancel(), \(sent.withLock { $0 }) bytes sent")
        for _ in 0..<100 where Self.uploadThreads() > 0 { usleep(10_000) }
        XCTAssertEqual(Self.uploadThreads(), 0, "the upload's thread outlived the cancel")
        XCTAssertGreaterThan(sent.withLock { $0 }, 0)
        XCTAssertLessThan(sent.withLock { $0 }, 1 << 28, "far from all of the file")
    }

    /// The multipart body as Python's email package (a MIME parser that is not the test
    /// server's) reads it, and as the test server's does: the plain fields in order with their
    /// names and values (quotes, a backslash, a line break and non-ASCII kept), then the file
    /// part with its field name, its file name (quotes in it) and Content-Type, and the file's
    /// bytes exactly. The request says User-Agent: sfx, and no Expect: 100-continue.
    func testTheFormAsAMIMEParserReadsIt() async throws {
        let file = try wav(bytes: 30_000, name: "take \"one\".wav")
        let fields = [("token", "secret-token"), ("x:\"quoted\" \\name", "a \\ backslash, \"quotes\",\r\nand a second line"),
                      ("note", "çödé ✓")]
        let response = try await Upload.send(file, to: server!.url("x/form"), method: .multipart(field: "audio"),
                                             fields: fields.map { (name: $0.0, value: $0.1) })
        XCTAssertEqual(response.status, 201)
        let request = try received(1)
        XCTAssertEqual(request.headers["user-agent"], "sfx")
        XCTAssertNil(request.headers["expect"])
        let type = try XCTUnwrap(request.headers["content-type"])

        let body = card.directory.appending(path: "received/request-1.body")
        let parsed = try runToEnd(URL(filePath: "/usr/bin/python3"), ["-c", Self.mimeParts, type, body.path])
        XCTAssertEqual(parsed.status, 0, parsed.errors)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: parsed.stdout) as? [String: Any], parsed.output)
        XCTAssertEqual(json["multipart"] as? Bool, true)
        XCTAssertEqual(json["defects"] as? [String], [])
        let parts = try XCTUnwrap(json["parts"] as? [[String: Any]])
        XCTAssertEqual(parts.count, 4)
        guard parts.count == 4 else { return }
        for (part, (name, value)) in zip(parts, fields) {
            XCTAssertEqual(part["name"] as? String, name)
            XCTAssertTrue(part["filename"] is NSNull, "a plain field has no file name: \(part)")
            XCTAssertTrue(part["type"] is NSNull, "a plain field has no Content-Type: \(part)")
            XCTAssertEqual(part["hex"] as? String, Data(value.utf8).map { String(format: "%02x", $0) }.joined())
        }
        let filePart = parts[3]
        XCTAssertEqual(filePart["name"] as? String, "audio")
        XCTAssertEqual(filePart["filename"] as? String, "take \"one\".wav")
        XCTAssertEqual(filePart["type"] as? String, "audio/wav")
        XCTAssertEqual(filePart["hex"] as? String, try Data(contentsOf: file).map { String(format: "%02x", $0) }.joined())

        // The test server's parser reads the same.
        let stored = try requestJSON(1)
        XCTAssertEqual(stored["parts"] as? [String], fields.map { $0.0 } + ["audio"])
        XCTAssertEqual(stored["fields"] as? [[String]], fields.map { [$0.0, $0.1] })
    }

    /// Prints a multipart/form-data body (argv[2]) with its Content-Type (argv[1]) as Python's
    /// email package parses it: JSON with each part's name, file name, Content-Type (null when
    /// absent) and bytes in hex, and the parser's defects.
    static let mimeParts = """
        import email.parser, email.policy, json, sys
        head = ("Content-Type: " + sys.argv[1] + "\\r\\n\\r\\n").encode()
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + open(sys.argv[2], "rb").read())
        parts = []
        for part in message.iter_parts():
            parts.append({"name": part.get_param("name", header="content-disposition"), "filename": part.get_filename(),
                          "type": part.get_content_type() if "content-type" in part else None,
                          "hex": part.get_payload(decode=True).hex()})
        defects = [type(d).__name__ for d in message.defects] + [type(d).__name__ for p in message.iter_parts() for d in p.defects]
        print(json.dumps({"multipart": message.is_multipart(), "defects": defects, "parts": parts}))
        """

    /// How many of this process's threads are named sfx-upload.
    static func uploadThreads() -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines) == "sfx-upload"
        }.count
    }
}

/// A TCP socket listening on 127.0.0.1 (an ephemeral port) from which no connection is ever
/// taken: the kernel completes each connection and takes bytes into its buffers, and nothing
/// reads or answers. Closed when released.
final class SilentListener {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(fd, address, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, address, &length) == 0
            }
        }
        guard fd >= 0, bound else {
            let error = CardError("cannot listen on 127.0.0.1: \(String(cString: strerror(errno)))")
            if fd >= 0 { close(fd) }
            throw error
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}
