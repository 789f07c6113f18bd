import Foundation
import Glibc
import SFXTestSupport
import XCTest

/// `sfx play URL` of a body without end (Tests/http/stream-server.py's /endless and /paced, on
/// 127.0.0.1) stops at a cap or at a full disk, each told in one line, instead of filling the
/// temporary directory for ever.
final class StreamLimitTests: CommandTestCase {
    var server: LocalHTTPServer?
    var port = 0

    override func setUpWithError() throws {
        try super.setUpWithError()
        try Data("RIFF".utf8).write(to: scratch.appending(path: "tune.wav"))   // the name the modes take
        let server = try LocalHTTPServer(script: "stream-server.py", serving: scratch)
        self.server = server
        port = server.port
    }

    override func tearDownWithError() throws {
        server?.stop()
        try super.tearDownWithError()
    }

    func url(_ mode: String) -> String { "http://127.0.0.1:\(port)/\(mode)/tune.wav" }

    /// Runs `sfx arguments` under `timeout 60` (status 124 when it was still running), in a mount
    /// namespace of its own where `mount` (shell words) is done first.
    func sfx(mounting mount: String?, _ arguments: [String], environment extra: [String: String?] = [:]) throws -> Run {
        let script = (mount.map { "\($0) || exit 97\n" } ?? "") + "exec /usr/bin/timeout 60 \"$0\" \"$@\""
        let namespace = (getuid() == 0 ? [] : ["--user", "--map-root-user"]) + ["--mount", "--propagation", "private"]
        let run = try sfx(namespace + ["--", "/bin/sh", "-c", script, Self.program.path] + arguments,
                          program: URL(filePath: "/usr/bin/unshare"), environment: extra)
        XCTAssertNotEqual(run.status, 97, "could not mount in a namespace: \(run.stderr)")
        XCTAssertNotEqual(run.status, 124, "still running after 60 s: \(run.stderr)")
        return run
    }

    func testAFullDiskIsToldAsSuchAndEndsThePlay() throws {
        let small = scratch.appending(path: "small-tmp")
        try FileManager.default.createDirectory(at: small, withIntermediateDirectories: false)
        let run = try sfx(mounting: "mount -t tmpfs -o size=512k,mode=700 tmpfs \"$TMPDIR\"", ["play", "-q", url("endless")],
                          environment: ["TMPDIR": small.path])
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(run.stderr, "sfx: \(url("endless")): disk full: no space left in \(small.path) for the download; "
                       + "free some space or set TMPDIR to a larger disk\n")
    }

    func testTheSettingsFileSetsTheCaps() throws {
        let config = scratch.appending(path: "config/sfx")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try Data("[http]\nmax-download = 200K\n".utf8).write(to: config.appending(path: "sfx.conf"))
        let bytes = try sfx(mounting: nil, ["play", "-q", url("endless")])
        XCTAssertEqual(bytes.status, 1, bytes.stderr)
        XCTAssertEqual(bytes.stderr, "sfx: \(url("endless")): the download passed 200 KiB, the most a stream may download; "
                       + "raise [http] max-download in sfx.conf to play it\n")

        try Data("[http]\nmax-duration = 1s\n".utf8).write(to: config.appending(path: "sfx.conf"))
        let duration = try sfx(mounting: nil, ["play", "-q", url("paced")])
        XCTAssertEqual(duration.status, 1, duration.stderr)
        XCTAssertTrue(duration.stderr.hasPrefix("sfx: \(url("paced")): played 1 s, the longest a stream may play; raise [http] max-duration"),
                      duration.stderr)
        XCTAssertEqual(duration.stderr.split(separator: "\n").count, 1, duration.stderr)

        // [http] timeout: a server that stops sending is given up on after it (15 s unless set).
        try Data("[http]\ntimeout = 1\n".utf8).write(to: config.appending(path: "sfx.conf"))
        let stalled = try sfx(mounting: nil, ["play", "-q", "http://127.0.0.1:\(port)/stall/tune.wav"])
        XCTAssertEqual(stalled.status, 1, stalled.stderr)
        XCTAssertTrue(stalled.stderr.hasSuffix(": nothing arrived for 1 s (stalled); check the network and try again\n"), stalled.stderr)

        try Data("[http]\nmax-download = lots\ntimeout = 2min\n".utf8).write(to: config.appending(path: "sfx.conf"))
        let invalid = try sfx(mounting: nil, ["play", url("missing")])
        XCTAssertTrue(invalid.stderr.contains("sfx.conf:2: max-download = lots is not valid; use a size in bytes, or with K, M or G"),
                      invalid.stderr)
    }
}
