// Uploads to local servers that behave like object stores (Tests/http/upload-server.py's
// /form/, /presigned/ and /flaky/ paths, and --late): headers, form fields before the file,
// retries and cancellation, through the API and `sfx upload`.
import Foundation
import SFXTestSupport
import XCTest
import SFX
import SFXCardSupport
import Synchronization

extension UploadTests {
    /// A form upload needing `token` and `key` beside `file`: the fields arrive in order before
    /// the file, the headers on the request, and the file's bytes intact.
    func testAFormUploadSendsFieldsBeforeTheFileWithHeaders() async throws {
        let file = try wav(bytes: 50_000, name: "voice.wav")
        let response = try await Upload.send(file, to: server!.url("form/bucket"), method: .multipart(field: "file"),
                                             headers: ["Authorization": "Bearer abc.def", "X-Api-Key": "k1"],
                                             fields: [("token", "secret-token"), ("key", "memos/voice.wav"), ("x:note", "a \"quoted\" note")])
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "{\"key\": \"memos/voice.wav\"}\n")
        let json = try requestJSON(1)
        XCTAssertEqual(json["parts"] as? [String], ["token", "key", "x:note", "file"])
        XCTAssertEqual(json["fields"] as? [[String]], [["token", "secret-token"], ["key", "memos/voice.wav"], ["x:note", "a \"quoted\" note"]])
        let headers = try XCTUnwrap(json["headers"] as? [String: String])
        XCTAssertEqual(headers["authorization"], "Bearer abc.def")
        XCTAssertEqual(headers["x-api-key"], "k1")
        let body = try received(1).body
        let bytes = try Data(contentsOf: file)
        XCTAssertNotNil(body.range(of: bytes), "the file's bytes are in the body")
    }

    /// The form server refuses what it should, so the test above can fail: a missing field, a
    /// wrong token.
    func testTheFormServerRefusesAMissingFieldOrAWrongToken() async throws {
        let file = try wav(bytes: 10_000, name: "voice.wav")
        let url = server!.url("form/bucket")
        for (fields, status) in [([("token", "secret-token")], 400), ([("token", "other"), ("key", "k")], 401)] {
            do {
                _ = try await Upload.send(file, to: url, method: .multipart(field: "file"), fields: fields)
                XCTFail("accepted \(fields)")
            } catch {
                XCTAssertEqual(error, .rejected(url: url.absoluteString, status: status, body: status == 400 ? "missing field key\n" : "bad token\n"))
            }
        }
        // The file part named otherwise than `file`: refused too.
        do {
            _ = try await Upload.send(file, to: url, method: .multipart(field: "audio"), fields: [("token", "secret-token"), ("key", "k")])
            XCTFail("accepted without a file part")
        } catch {
            XCTAssertEqual(error.underlying, .rejected(url: url.absoluteString, status: 400, body: "missing field file\n"))
        }
    }

    /// A presigned PUT signed for application/octet-stream: 403 with the inferred audio/wav, 200
    /// with the caller's Content-Type; the error is one line with the server's words.
    func testAPresignedPutNeedsTheContentTypeItWasSignedWith() async throws {
        let file = try wav(bytes: 10_000, name: "signed.wav")
        let url = server!.url("presigned/signed.wav?signed-type=application/octet-stream&X-Amz-Signature=abc")
        do {
            _ = try await Upload.send(file, to: url)
            XCTFail("a wrong Content-Type was accepted")
        } catch {
            XCTAssertEqual(error.description, "\(url.absoluteString): the server answered 403 Forbidden: SignatureDoesNotMatch: signed for "
                           + "Content-Type application/octet-stream, got audio/wav")
        }
        let response = try await Upload.send(file, to: url, headers: ["content-type": "application/octet-stream"])
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.contentType, "application/octet-stream")
        XCTAssertEqual(try received(2).headers["content-type"], "application/octet-stream")
        XCTAssertEqual(try received(2).body, try Data(contentsOf: file))
        XCTAssertEqual(try received(1).headers["content-type"], "audio/wav")
    }

    /// 503 twice, then 201: three requests (the server's count), the response says 3; with
    /// 2 attempts allowed, the error says it gave up after 2. A 400 is sent exactly once.
    func testA503IsTriedAgainAndA400Never() async throws {
        let file = try wav(bytes: 10_000, name: "retry.wav")
        let quick = Upload.Retry(attempts: 3, initialDelay: 0.05, maximumDelay: 0.2)
        let seen = Mutex<[Int64]>([])
        let response = try await Upload.send(file, to: server!.url("flaky/one"), retry: quick) { sent, _ in
            seen.withLock { $0.append(sent) }
        }
        let calls = seen.withLock { $0 }
        XCTAssertEqual(response.status, 201)
        XCTAssertEqual(response.attempts, 3)
        XCTAssertEqual(try String(contentsOf: card.directory.appending(path: "received/count-one"), encoding: .utf8), "3")
        XCTAssertEqual(calls.filter { $0 == 10_000 }.count, 3, "progress reached the whole file on each attempt: \(calls)")
        let url = server!.url("flaky/two")
        do {
            _ = try await Upload.send(file, to: url, retry: .init(attempts: 2, initialDelay: 0.05, maximumDelay: 0.2))
            XCTFail("a 503 was taken for success")
        } catch {
            XCTAssertEqual(error, .gaveUp(attempts: 2, last: .rejected(url: url.absoluteString, status: 503, body: "busy, try again\n")))
            XCTAssertEqual(error.description, "\(url.absoluteString): the server answered 503 Service Unavailable: busy, try again (gave up after 2 attempts)")
        }
        XCTAssertEqual(try String(contentsOf: card.directory.appending(path: "received/count-two"), encoding: .utf8), "2")
        let before = try requestCount()
        do {
            _ = try await Upload.send(file, to: server!.url("status/400"), retry: quick)
            XCTFail("a 400 was taken for success")
        } catch {
            XCTAssertEqual(error.underlying, error, "not wrapped: one attempt")
        }
        XCTAssertEqual(try requestCount() - before, 1, "a 400 is not tried again")
    }

    /// A port that refuses connections and listens 1.5 s later: the upload is tried again until
    /// it gets in; without retries it fails at once, saying the connection was refused.
    func testARefusedConnectionIsTriedAgain() async throws {
        let received = card.directory.appending(path: "late")
        try FileManager.default.createDirectory(at: received, withIntermediateDirectories: false)
        let late = try LocalHTTPServer(script: "upload-server.py", serving: received, arguments: ["--late", "1.5"])
        defer { late.stop(terminating: false) }
        let file = try wav(bytes: 10_000, name: "late.wav")
        let url = late.url("late.wav")
        do {
            _ = try await Upload.send(file, to: url, retry: .none)
            XCTFail("nothing listens yet")
        } catch {
            guard case .transport(_, let detail) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(detail.hasPrefix("the connection was refused"), detail)
        }
        let response = try await Upload.send(file, to: url, retry: .init(attempts: 8, initialDelay: 0.3, maximumDelay: 1))
        XCTAssertEqual(response.status, 201)
        XCTAssertGreaterThan(response.attempts, 1)
        XCTAssertTrue(FileManager.default.fileExists(atPath: received.appending(path: "request-1.body").path))
    }

    /// Cancelling the Task of a slow multipart upload (the server reads 64 KiB per 50 ms, 20 MB
    /// would take 16 s): `.cancelled` soon after, and nothing left in TMPDIR. Cancelling during
    /// the wait before a retry ends it too.
    func testCancellingTheTaskStopsTheUploadAndLeavesNothing() async throws {
        let file = try wav(bytes: 20_000_000, name: "slow.wav")
        let temporary = card.directory.appending(path: "tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: false)
        let previous = ProcessInfo.processInfo.environment["TMPDIR"]
        setenv("TMPDIR", temporary.path, 1)
        defer { if let previous { setenv("TMPDIR", previous, 1) } else { unsetenv("TMPDIR") } }
        let url = server!.url("slow/slow.wav")
        let task = Task { () async -> UploadError? in
            do throws(UploadError) { _ = try await Upload.send(file, to: url, method: .multipart(field: "file")); return nil } catch { return error }
        }
        let started = card.directory.appending(path: "received/started")
        for _ in 0..<1_000 where !FileManager.default.fileExists(atPath: started.path) { usleep(10_000) }
        XCTAssertTrue(FileManager.default.fileExists(atPath: started.path), "the upload did not start")
        let cancelled = Date()
        task.cancel()
        let error = await task.value
        let took = Date().timeIntervalSince(cancelled)
        XCTAssertEqual(error, UploadError.cancelled)
        XCTAssertLessThan(took, 2, "ended \(took) s after the cancel (the whole upload takes 16 s)")
        print("upload cancelled: ended \(String(format: "%.3f", took)) s after Task.cancel()")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: temporary.path), [], "the multipart copy was left behind")

        // The wait between attempts: 30 s asked for, cancelled after the first 503.
        let busy = server!.url("status/503")
        let waiting = Task { () async -> UploadError? in
            do throws(UploadError) {
                _ = try await Upload.send(file, to: busy, method: .multipart(field: "file"),
                                          retry: .init(attempts: 3, initialDelay: 30, maximumDelay: 30))
                return nil
            } catch { return error }
        }
        let before = try requestCount()
        for _ in 0..<1_000 where try requestCount() == before { usleep(10_000) }
        usleep(100_000)
        let stopped = Date()
        waiting.cancel()
        let waited = await waiting.value
        XCTAssertEqual(waited, UploadError.cancelled)
        XCTAssertLessThan(Date().timeIntervalSince(stopped), 2)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: temporary.path), [])
    }

    /// Headers and fields the upload cannot send: one line each, naming it, before any request.
    func testBadHeadersAndFieldsAreOneLineErrors() async throws {
        let file = try wav(bytes: 1_000, name: "bad.wav")
        let url = server!.url("x")
        let cases: [([String: String], [(name: String, value: String)], Upload.Method, String)] = [
            (["Bad Name": "x"], [], .put, "header 'Bad Name' is not a valid header name; use letters, digits and !#$%&'*+-.^_`|~ only, e.g. X-Api-Key"),
            (["X-Token": "a\r\nInjected: yes"], [], .put, "header X-Token has a line break or NUL in its value; give its value on one line"),
            (["Host": "example.com"], [], .put, "header Host cannot be set: it comes from the URL; put the host in the URL instead"),
            (["content-length": "5"], [], .put, "header Content-Length cannot be set: it is the body's length, which sfx sends itself; drop it"),
            ([:], [("token", "t")], .put, "form fields (token) need a multipart upload; give .multipart(field:) (sfx upload --form FIELD) or drop the fields"),
            ([:], [("to\nken", "t")], .multipart(field: "file"), "the form field name 'to\\nken' is empty or has a line break or NUL; give a name on one line, e.g. file"),
        ]
        for (headers, fields, method, line) in cases {
            do {
                _ = try await Upload.send(file, to: url, method: method, headers: headers, fields: fields)
                XCTFail("sent with \(headers) \(fields)")
            } catch {
                XCTAssertEqual(error.description, line)
            }
        }
        XCTAssertEqual(try requestCount(), 0, "nothing was sent")
    }

    /// `sfx upload --header --header @FILE --field --form --retries`: the form server gets the
    /// fields and headers; a flaky one is retried; a presigned PUT takes the given type; bad
    /// input is one line.
    func testTheCommandSendsHeadersFieldsAndRetries() throws {
        let file = try wav(bytes: 20_000, name: "cli.wav")
        let secrets = card.directory.appending(path: "auth.txt")
        try Data("# the service's key\nAuthorization: Bearer from-a-file\n\nX-Trace:  t-1 \n".utf8).write(to: secrets)
        let form = try Sfx(card).run(["upload", file.path, server!.url("form/cli").absoluteString, "--form", "file",
                                      "--header", "@\(secrets.path)", "-H", "X-Client: sfx",
                                      "--field", "token=secret-token", "-F", "key=a=b.wav"])
        XCTAssertEqual(form.status, 0, form.stderr)
        XCTAssertEqual(form.stdout, "uploaded \(file.path) as audio/wav: 200\n")
        let json = try requestJSON(1)
        XCTAssertEqual(json["fields"] as? [[String]], [["token", "secret-token"], ["key", "a=b.wav"]])
        let headers = try XCTUnwrap(json["headers"] as? [String: String])
        XCTAssertEqual(headers["authorization"], "Bearer from-a-file")
        XCTAssertEqual(headers["x-trace"], "t-1")
        XCTAssertEqual(headers["x-client"], "sfx")

        let flaky = try Sfx(card).run(["upload", file.path, server!.url("flaky/cli").absoluteString])
        XCTAssertEqual(flaky.status, 0, flaky.stderr)
        XCTAssertEqual(try String(contentsOf: card.directory.appending(path: "received/count-cli"), encoding: .utf8), "3")
        let once = try Sfx(card).run(["upload", file.path, server!.url("flaky/once").absoluteString, "--retries", "0"])
        XCTAssertEqual(once.status, 1)
        XCTAssertTrue(once.stderr.hasSuffix("the server answered 503 Service Unavailable: busy, try again\n"), once.stderr)

        let signed = server!.url("presigned/cli.wav?signed-type=audio/x-wav").absoluteString
        let put = try Sfx(card).run(["upload", file.path, signed, "--header", "Content-Type: audio/x-wav"])
        XCTAssertEqual(put.status, 0, put.stderr)
        XCTAssertEqual(put.stdout, "uploaded \(file.path) as audio/x-wav: 200\n")

        for (arguments, line) in [
            (["--field", "token=t"], "sfx: --field needs --form FIELD (a multipart POST); a PUT sends the file's bytes alone"),
            (["--header", "no colon"], "sfx: --header 'no colon' is not a header; give it as 'Name: value', e.g. 'Authorization: Bearer abc123'"),
            (["--header", "@/nonexistent/auth"], "sfx: --header @/nonexistent/auth: cannot be read (No such file or directory); check the path"),
            (["--retries", "many"], "sfx: --retries many is not a count from 0 to 10; give e.g. --retries 3 (0: one attempt only)"),
        ] {
            let run = try Sfx(card).run(["upload", file.path, server!.url("x").absoluteString] + arguments)
            XCTAssertEqual(run.status, 64, run.stderr)
            XCTAssertEqual(run.stderr.split(separator: "\n").first.map(String.init), line)
        }
        let header = try Sfx(card).run(["upload", file.path, server!.url("x").absoluteString, "--header", "Host: elsewhere"])
        XCTAssertEqual(header.status, 1)
        XCTAssertEqual(header.stderr, "sfx: header Host cannot be set: it comes from the URL; put the host in the URL instead\n")
    }

    /// request-N.json as the server wrote it.
    func requestJSON(_ n: Int) throws -> [String: Any] {
        let url = card.directory.appending(path: "received/request-\(n).json")
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    /// How many requests the server has stored.
    func requestCount() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: card.directory.appending(path: "received").path)
            .filter { $0.hasPrefix("request-") && $0.hasSuffix(".json") }.count
    }
}
