import Foundation
import Glibc
import XCTest

/// Without a daemon, or with one killed mid-run, commands play in-process.
final class FallbackTests: DaemonTestCase {
    func testDaemonKilledMidRunClientsFallBackInProcess() throws {
        let daemon = try startDaemon()
        var statuses: [Int32] = []
        for round in 0..<12 {
            if round == 4 {
                kill(daemon.processIdentifier, SIGKILL)
                daemon.waitUntilExit()
            }
            // The front, and the Swift program with an option the front leaves to it.
            let program = round % 2 == 0 ? Self.front : Self.program
            let arguments = round % 2 == 0 ? ["play", "tock"] : ["play", "tock", "--volume", "0.5"]
            let run = try self.run(arguments, program: program)
            XCTAssertEqual(run.status, 0, "round \(round): \(run.stderr)")
            statuses.append(run.status)
            if round >= 4 {
                // In-process: it opened the card itself and waited for the sound to end.
                XCTAssertTrue(run.stderr.isEmpty || !run.stderr.contains("daemon"), "round \(round): \(run.stderr)")
            }
        }
        XCTAssertEqual(statuses.count, 12)
        // The stale socket is left behind by the killed daemon; --daemon says no daemon answers.
        let forced = try run(["play", "--daemon", "tock"])
        XCTAssertEqual(forced.status, 1)
        XCTAssertTrue(forced.stderr.contains("no daemon answers"), forced.stderr)
        // A new daemon replaces the stale socket.
        try startDaemon()
        XCTAssertEqual(try run(["play", "--daemon", "tock"]).status, 0)
        XCTAssertEqual(stopDaemon(), 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: socketPath), "SIGTERM leaves no socket")
    }

    func testNoRuntimeDirectoryMeansNoDaemon() throws {
        let run = try self.run(["status", "--daemon"], environment: ["XDG_RUNTIME_DIR": nil])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.contains("XDG_RUNTIME_DIR is not set"), run.stderr)
        let serve = try self.run(["serve", "-q"], environment: ["XDG_RUNTIME_DIR": nil])
        XCTAssertEqual(serve.status, 1)
        XCTAssertTrue(serve.stderr.contains("XDG_RUNTIME_DIR is not set"), serve.stderr)
    }

    func testSocketDirectoryOfWrongModeIsRefused() throws {
        let directory = scratch.appending(path: "sfx")
        XCTAssertEqual(mkdir(directory.path, 0o755), 0)
        chmod(directory.path, 0o755)
        let serve = try run(["serve", "-q", "--device", card.pcmName])
        XCTAssertEqual(serve.status, 1)
        XCTAssertTrue(serve.stderr.contains("has mode 755, not 700"), serve.stderr)
    }
}

/// Something listens at the socket but never answers (a daemon stuck or flooded): clients give
/// it their bounded time and play in-process; `sfx status` says it does not answer.
final class StuckDaemonTests: DaemonTestCase {
    func testAListenerThatNeverAnswersCostsAClientItsTimeoutOnly() throws {
        let directory = scratch.appending(path: "sfx")
        XCTAssertEqual(mkdir(directory.path, 0o700), 0)
        let listener = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(socketPath.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        XCTAssertEqual(bound, 0)
        XCTAssertEqual(listen(listener, 16), 0)
        let clock = { () -> Double in
            var t = timespec()
            clock_gettime(CLOCK_MONOTONIC, &t)
            return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
        }
        // First with room in the backlog (connected, never answered), then with it full.
        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        for round in 0..<2 {
            let start = clock()
            // Bounded: a client that waits for the listener would wait for ever.
            let play = try run(["play", "-v", "tock", "--volume", "0.001"], prefix: ["/usr/bin/timeout", "20"], environment: ["SFX_DAEMON_TIMEOUT": nil])
            let elapsed = clock() - start
            print(String(format: "stuck daemon (%@): sfx play -v tock took %.0f ms", round == 0 ? "backlog room" : "backlog full", elapsed * 1000))
            XCTAssertEqual(play.status, 0, play.stderr)
            XCTAssertTrue(play.stdout.contains("sfx: in-process: the daemon"), play.stdout)
            print("stuck daemon: \(play.stdout.split(separator: "\n").first { $0.contains("in-process") } ?? "")")
            let front = try run(["play", "tock", "--volume", "0.001"], program: Self.front, prefix: ["/usr/bin/timeout", "20"], environment: ["SFX_DAEMON_TIMEOUT": nil])
            XCTAssertEqual(front.status, 0, front.stderr)
            let status = try run(["status"], prefix: ["/usr/bin/timeout", "30"], environment: ["SFX_DAEMON_TIMEOUT": nil])
            XCTAssertEqual(status.status, 0, status.stderr)
            XCTAssertTrue(status.stdout.hasPrefix("daemon: not answering: "), status.stdout)
            print("stuck daemon: \(status.stdout.prefix { $0 != "\n" })")
            // Fill the backlog for the next round.
            for _ in 0..<40 {
                let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
                let connected = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
                }
                if connected == 0 { held.append(fd) } else { close(fd) }
            }
        }
        // A second daemon does not take the socket of one whose backlog is full.
        let second = try run(["serve", "-q", "--device", card.pcmName], prefix: ["/usr/bin/timeout", "20"])
        XCTAssertEqual(second.status, 1, second.stderr)
        XCTAssertTrue(second.stderr.contains("a daemon already answers at \(socketPath)"), second.stderr)
        var info = stat()
        XCTAssertEqual(lstat(socketPath, &info), 0, "the socket is still there")
    }
}
