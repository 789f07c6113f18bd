import Foundation
import Glibc
import XCTest

/// Socket activation as sfx.socket does it: the listening socket is made by someone else and
/// handed over as descriptor 3 (LISTEN_FDS); the first client starts the daemon.
final class ActivationTests: DaemonTestCase {
    func testDaemonTakesTheSocketItIsPassed() throws {
        let activate = "/usr/bin/systemd-socket-activate"
        guard FileManager.default.isExecutableFile(atPath: activate) else {
            return XCTFail("\(activate) is missing: install systemd (script/test does)")
        }
        XCTAssertEqual(mkdir(scratch.appending(path: "sfx").path, 0o700), 0)
        // It passes on only the variables named with -E. Started with posix_spawn: it closes the
        // descriptors Foundation's Process watches a child by, which would hang Process's waiting.
        let passed = ["ALSA_CONFIG_PATH", "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_DIRS", "XDG_DATA_HOME", "HOME", "PATH"]
        let arguments = [activate, "--seqpacket", "--listen", socketPath] + passed.flatMap { ["-E", $0] }
            + [Self.program.path, "serve", "-q", "--device", card.pcmName]
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment().map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var pid: pid_t = 0
        XCTAssertEqual(posix_spawn(&pid, activate, &actions, nil, argv, envp), 0)
        var reaped = false
        defer {
            // Only while it is still this test's unreaped child (its pid cannot be reused yet).
            if !reaped {
                kill(pid, SIGKILL)
                var status: Int32 = 0
                waitpid(pid, &status, 0)
            }
        }
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: socketPath) { usleep(50_000) }
        // The first client's connection starts the daemon, which answers it.
        let play = try run(["play", "--daemon", "tock"], program: Self.front)
        XCTAssertEqual(play.status, 0, play.stderr)
        let status = try run(["status", "--daemon"])
        XCTAssertEqual(status.status, 0, status.stderr)
        XCTAssertTrue(status.stdout.contains("(socket activation)"), status.stdout)
        // SIGTERM: it removes nothing (the socket is systemd's) and exits 0.
        kill(pid, SIGTERM)
        var exit: Int32 = -1
        waitpid(pid, &exit, 0)
        reaped = true
        XCTAssertEqual(exit, 0)
    }
}
