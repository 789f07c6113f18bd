// Uploads to a local HTTP server (Tests/http/upload-server.py on 127.0.0.1, an ephemeral port),
// which stores the headers and bytes it received for the test to check.
import Foundation
import SFXTestSupport
import XCTest
import SFX
import SFXCardSupport
import SFXMedia

final class UploadTests: XCTestCase {
    var card: VirtualCard!
    var server: LocalHTTPServer?
    var port = 0

    override func setUpWithError() throws {
        card = try cardCapturing(Signal.music(seconds: 3, channels: 1), channels: 1)
        let received = card.directory.appending(path: "received")
        try FileManager.default.createDirectory(at: received, withIntermediateDirectories: false)
        let server = try LocalHTTPServer(script: "upload-server.py", serving: received)
        self.server = server
        port = server.port
    }

    override func tearDownWithError() throws {
        server?.stop(terminating: false)   // it ends its transfers and itself when its input closes
        try card?.remove()
    }

    /// What the server stored for request `n`: its method, path and headers, and its body.
    func received(_ n: Int) throws -> (method: String, path: String, headers: [String: String], body: Data) {
        let base = card.directory.appending(path: "received/request-\(n)")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: base.appendingPathExtension("json"))) as! [String: Any]
        return (json["method"] as! String, json["path"] as! String, json["headers"] as! [String: String],
                try Data(contentsOf: base.appendingPathExtension("body")))
    }

    func record(_ format: RecordingFormat, name: String) throws -> URL {
        card.makeCurrent()
        var settings = settings(format, card: card, channels: 1, name: name)
        settings.maxDuration = .milliseconds(500)
        let recorder = try Recorder(settings: settings)
        try recorder.record()
        guard case .finished(let url, _) = recorder.waitUntilFinished(timeout: .seconds(10)) else { throw CardError("not recorded") }
        return url
    }

    /// PUT: the bytes arrive unchanged, with the Content-Type of the content — not of the name:
    /// an Opus file named .bin is still audio/ogg, an M4A named .dat audio/mp4.
    func testPutSendsTheBytesWithTheContentsType() async throws {
        for (format, name) in [(RecordingFormat.opus, "take.bin"), (.m4a, "take.dat"), (.mp3, "take"), (.flac, "take.wav")] {
            let file = try record(format, name: name)
            let response = try await Upload.send(file, to: URL(string: "http://127.0.0.1:\(port)/upload/\(name)")!)
            XCTAssertEqual(response.status, 201)
            XCTAssertEqual(response.contentType, format.mimeType)
            try FileManager.default.removeItem(at: file)
        }
        for (n, format) in [RecordingFormat.opus, .m4a, .mp3, .flac].enumerated() {
            let request = try received(n + 1)
            XCTAssertEqual(request.method, "PUT")
            XCTAssertEqual(request.headers["content-type"], format.mimeType)
        }
        XCTAssertEqual(try received(1).headers["content-type"], "audio/ogg")
        XCTAssertEqual(try received(2).headers["content-type"], "audio/mp4")
    }

    /// The bytes a PUT sends are the file's, every one.
    func testPutBodyIsTheFile() async throws {
        let file = try record(.wav, name: "exact.wav")
        _ = try await Upload.send(file, to: URL(string: "http://127.0.0.1:\(port)/x")!)
        XCTAssertEqual(try received(1).body, try Data(contentsOf: file))
        XCTAssertEqual(try received(1).headers["content-length"], String(try Data(contentsOf: file).count))
    }

    /// multipart/form-data POST: the file in the named field, with its name and Content-Type.
    func testMultipartPostPutsTheFileInTheField() async throws {
        let file = try record(.m4a, name: "memo.m4a")
        let response = try await Upload.send(file, to: URL(string: "http://127.0.0.1:\(port)/form")!, method: .multipart(field: "audio"))
        XCTAssertEqual(response.status, 201)
        let request = try received(1)
        XCTAssertEqual(request.method, "POST")
        let type = try XCTUnwrap(request.headers["content-type"])
        XCTAssertTrue(type.hasPrefix("multipart/form-data; boundary="), type)
        let boundary = String(type.dropFirst("multipart/form-data; boundary=".count))
        var expected = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"audio\"; filename=\"memo.m4a\"\r\nContent-Type: audio/mp4\r\n\r\n".utf8)
        expected += try Data(contentsOf: file)
        expected += Data("\r\n--\(boundary)--\r\n".utf8)
        XCTAssertEqual(request.body, expected)
    }

    /// 4xx and 5xx: an error whose one line has the status and the server's words.
    func testAServerErrorIsOneLineWithItsStatusAndBody() async throws {
        let file = try record(.opus, name: "memo.opus")
        let url = "http://127.0.0.1:\(port)/status/413"
        do {
            _ = try await Upload.send(file, to: URL(string: url)!)
            XCTFail("a 413 was taken for success")
        } catch {
            XCTAssertEqual(error, .rejected(url: url, status: 413, body: "rejected by the test server\nsecond line\n"))
            XCTAssertEqual(error.description, "\(url): the server answered 413 Payload Too Large: rejected by the test server / second line")
        }
    }

    /// `sfx upload`: exit 0 with the type on success; exit 1 and one line on a 500 (tried 3 times).
    func testTheCommandUploadsAndFailsOnServerErrors() throws {
        let file = try record(.opus, name: "cli.opus")
        let ok = try Sfx(card).run(["upload", file.path, "http://127.0.0.1:\(port)/cli"])
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertEqual(ok.stdout, "uploaded \(file.path) as audio/ogg: 201\n")
        XCTAssertEqual(try received(1).body, try Data(contentsOf: file))
        let failed = try Sfx(card).run(["upload", file.path, "http://127.0.0.1:\(port)/status/500", "--form", "audio"])
        XCTAssertEqual(failed.status, 1)
        XCTAssertTrue(failed.stderr.hasPrefix("sfx: http://127.0.0.1:\(port)/status/500: the server answered 500 "), failed.stderr)
        XCTAssertTrue(failed.stderr.hasSuffix(": rejected by the test server / second line (gave up after 3 attempts)\n"), failed.stderr)
        XCTAssertEqual(failed.stderr.split(separator: "\n").count, 1)
    }

    /// A 20 MB file is streamed, not read into memory: the server gets every byte (PUT and
    /// multipart), the Content-Type still follows the content, and the peak resident memory of
    /// the `sfx upload` process (VmHWM, as wait4 reports it) grows by less than half the file's
    /// size over uploading a 100 kB file (streamed: about 7 MB of buffers; read whole: 36 MB
    /// for a PUT and 56 MB for multipart, the file and copies of it).
    func testALargeFileIsStreamedNotHeldInMemory() throws {
        let small = try wav(bytes: 100_000, name: "small.wav")
        let large = try wav(bytes: 20_000_000, name: "large.wav")
        var request = 0
        for form in [[], ["--form", "audio"]] {
            var peaks: [Int] = []
            for file in [small, large] {
                let run = try Sfx(card).run(["-c", Self.peakMemory, Sfx.program.path, "upload", file.path, "http://127.0.0.1:\(port)/big"] + form,
                                            via: URL(filePath: "/usr/bin/python3"))
                XCTAssertEqual(run.status, 0, run.stderr)
                XCTAssertEqual(run.stdout, "uploaded \(file.path) as audio/wav: 201\n")
                let line = try XCTUnwrap(run.stderr.split(separator: "\n").last { $0.hasPrefix("peak kB ") }, run.stderr)
                peaks.append(try XCTUnwrap(Int(line.dropFirst("peak kB ".count))))
                request += 1
                let got = try received(request)
                let bytes = try Data(contentsOf: file)
                if form.isEmpty {
                    XCTAssertEqual(got.headers["content-type"], "audio/wav")
                    XCTAssertEqual(got.headers["content-length"], String(bytes.count))
                    XCTAssertTrue(got.body == bytes, "the PUT body differs from the file")
                } else {
                    let type = try XCTUnwrap(got.headers["content-type"])
                    let boundary = String(type.dropFirst("multipart/form-data; boundary=".count))
                    var expected = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"audio\"; filename=\"\(file.lastPathComponent)\"\r\nContent-Type: audio/wav\r\n\r\n".utf8)
                    expected += bytes
                    expected += Data("\r\n--\(boundary)--\r\n".utf8)
                    XCTAssertTrue(got.body == expected, "the multipart body differs from the envelope and the file")
                }
            }
            XCTAssertLessThan(peaks[1] - peaks[0], 10_000, "peak memory \(peaks[0]) kB for 100 kB, \(peaks[1]) kB for 20 MB \(form)")
        }
        // The multipart body's private directory is gone.
        let left = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter { $0.hasPrefix("sfx-upload-") }
        XCTAssertEqual(left, [])
    }

    /// A server that takes the body and never answers: the upload gives up after its timeout
    /// and says so in one line, from the API, from `--timeout` and from `[http] timeout`.
    func testAServerThatNeverAnswersTimesOutSayingSo() async throws {
        let file = try wav(bytes: 100_000, name: "wait.wav")
        let url = "http://127.0.0.1:\(port)/silent/wait.wav"
        do {
            _ = try await Upload.send(file, to: URL(string: url)!, retry: .none, timeout: 1)
            XCTFail("no answer was taken for success")
        } catch {
            XCTAssertEqual(error, .timedOut(url: url, seconds: 1))
            XCTAssertEqual(error.description, "\(url): the upload failed: no answer from the server for 1 s (timed out); check that it "
                           + "is running, or wait longer with --timeout or [http] timeout in sfx.conf")
        }
        let flag = try Sfx(card).run(["upload", file.path, url, "--timeout", "1", "--form", "audio", "--retries", "0"])
        XCTAssertEqual(flag.status, 1)
        XCTAssertEqual(flag.stderr, "sfx: \(url): the upload failed: no answer from the server for 1 s (timed out); check that it "
                       + "is running, or wait longer with --timeout or [http] timeout in sfx.conf\n")
        let config = card.directory.appending(path: "config/sfx")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try Data("[http]\ntimeout = 1\n".utf8).write(to: config.appending(path: "sfx.conf"))
        let setting = try Sfx(card).run(["upload", file.path, url])
        XCTAssertEqual(setting.status, 1)
        XCTAssertTrue(setting.stderr.contains("no answer from the server for 1 s (timed out)"), setting.stderr)
        XCTAssertTrue(setting.stderr.hasSuffix(" (gave up after 3 attempts)\n"), "a time-out is tried again: \(setting.stderr)")
        XCTAssertFalse(setting.stderr.contains("NSURLErrorDomain"), setting.stderr)
        let bad = try Sfx(card).run(["upload", file.path, url, "--timeout", "soon"])
        XCTAssertEqual(bad.status, 64)
        XCTAssertTrue(bad.stderr.contains("--timeout soon is not a number of seconds"), bad.stderr)
    }

    /// A header line of 10 MB in the answer is told as what it is, not as libcurl's "Out of memory".
    func testAHeaderLineOver100KBIsToldAsSuch() async throws {
        let file = try wav(bytes: 10_000, name: "head.wav")
        let url = "http://127.0.0.1:\(port)/headers/head.wav"
        do {
            _ = try await Upload.send(file, to: URL(string: url)!)
            XCTFail("the answer was taken")
        } catch {
            XCTAssertTrue(error.description.hasPrefix("\(url): the upload failed: the server sent a response header line longer than "
                                                      + "libcurl takes (100 KB"), error.description)
            XCTAssertFalse(error.description.contains("\n"))
        }
    }

    /// A multipart upload makes no copy of the file (libcurl reads it as it sends the body):
    /// while the upload runs nothing of it is in TMPDIR, and a SIGKILL leaves nothing.
    func testAKilledMultipartUploadLeavesNoCopy() throws {
        let file = try wav(bytes: 20_000_000, name: "killed.wav")
        let temporary = card.directory.appending(path: "tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: false)
        let started = card.directory.appending(path: "received/started")
        let running = try Sfx(card).start(["TMPDIR=\(temporary.path)", Sfx.program.path, "upload", file.path,
                                           "http://127.0.0.1:\(port)/slow/killed.wav", "--form", "audio"],
                                          via: URL(filePath: "/usr/bin/env"))
        var waited = 0
        while !FileManager.default.fileExists(atPath: started.path) && waited < 1_000 {
            usleep(10_000)
            waited += 1
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: started.path), "the upload did not start")
        usleep(500_000)
        XCTAssertTrue(running.process.isRunning, "still uploading (64 KiB per 50 ms)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: temporary.path), [], "nothing named while it is sent")
        kill(running.process.processIdentifier, SIGKILL)
        let run = running.finish()
        XCTAssertEqual(run.reason, .uncaughtSignal)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: temporary.path), [], "a SIGKILL left the copy behind")
    }

    /// Runs argv[1:] and prints the child's peak resident memory (ru_maxrss: its VmHWM at exit)
    /// on standard error as "peak kB N", exiting with the child's status.
    static let peakMemory = """
        import os, sys
        pid = os.fork()
        if pid == 0:
            os.execv(sys.argv[1], sys.argv[1:])
        _, status, usage = os.wait4(pid, 0)
        print("peak kB %d" % usage.ru_maxrss, file=sys.stderr)
        sys.exit(os.waitstatus_to_exitcode(status))
        """

    /// A 16-bit mono WAV of `bytes` bytes of generated noise (a 44-byte header, then data).
    func wav(bytes: Int, name: String) throws -> URL {
        let dataBytes = bytes - 44
        var data = Data(capacity: bytes)
        func le32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { data += $0 } }
        func le16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { data += $0 } }
        data += Data("RIFF".utf8); le32(bytes - 8); data += Data("WAVEfmt ".utf8)
        le32(16); le16(1); le16(1); le32(48_000); le32(96_000); le16(2); le16(16)
        data += Data("data".utf8); le32(dataBytes)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var words = [UInt64](repeating: 0, count: (dataBytes + 7) / 8)
        for i in words.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            words[i] = state ^ (state >> 29)
        }
        words.withUnsafeBytes { data += $0.prefix(dataBytes) }
        let url = card.directory.appending(path: name)
        try data.write(to: url)
        return url
    }
}
