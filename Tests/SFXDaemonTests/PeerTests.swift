import Foundation
import Glibc
import XCTest

/// SO_PEERCRED: a client of another user is refused, with a reply saying so.
final class PeerTests: DaemonTestCase {
    func testClientOfAnotherUserIsRefused() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root to run a client as another user") }
        let setpriv = "/usr/bin/setpriv"
        guard FileManager.default.isExecutableFile(atPath: setpriv) else {
            return XCTFail("\(setpriv) is missing: install util-linux (script/test does)")
        }
        try startDaemon()
        // Let the other user reach the socket at all: only the daemon's own check stands between.
        chmod(scratch.path, 0o711)
        chmod(scratch.appending(path: "sfx").path, 0o711)
        chmod(socketPath, 0o666)
        let nobody = ["--reuid=65534", "--regid=65534", "--clear-groups"]
        for program in [Self.front, Self.program] {
            let run = try self.run(["play", "--daemon", "tock"], program: program, prefix: [setpriv] + nobody,
                                   environment: ["HOME": "/nonexistent"])
            XCTAssertEqual(run.status, 1, "\(program.lastPathComponent): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains("refused: uid 65534"), "\(program.lastPathComponent): \(run.stderr)")
        }
        // The daemon's own user still gets through.
        let mine = try run(["play", "--daemon", "tock"], program: Self.front)
        XCTAssertEqual(mine.status, 0, mine.stderr)
        XCTAssertEqual(stopDaemon(), 0)
    }
}

/// System mode: a socket of the kiosk's choosing, 0660 and owned by the group, whose members
/// (by their supplementary groups too) may play; others may not.
final class SystemModeTests: DaemonTestCase {
    func testGroupMembersMayUseASystemDaemonAndOthersMayNot() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root to run clients as other users") }
        guard let audio = getgrnam("audio")?.pointee.gr_gid else { return XCTFail("no audio group on this machine (Debian's base system has one)") }
        let run = scratch.appending(path: "run")
        XCTAssertEqual(mkdir(run.path, 0o755), 0)
        let socket = run.appending(path: "sfx.sock").path
        chmod(scratch.path, 0o711)
        let daemon = Process()
        daemon.executableURL = Self.program
        daemon.arguments = ["serve", "-q", "--device", card.pcmName, "--system", "--socket", socket, "--group", "audio"]
        daemon.environment = environment()
        try daemon.run()
        self.daemon = daemon
        for _ in 0..<400 where !FileManager.default.fileExists(atPath: socket) { usleep(50_000) }
        var info = stat()
        XCTAssertEqual(lstat(socket, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o660)
        XCTAssertEqual(info.st_gid, audio)
        let setpriv = "/usr/bin/setpriv"
        let member = try self.run(["play", "tock"], program: Self.front,
                                  prefix: [setpriv, "--reuid=65534", "--regid=65534", "--groups=\(audio)"],
                                  environment: ["SFX_SOCKET": socket, "HOME": "/nonexistent"])
        XCTAssertEqual(member.status, 0, member.stderr)
        XCTAssertEqual(member.stderr, "")
        // Not in the group: the socket's mode keeps it out (connect fails), so --daemon fails.
        let outsider = try self.run(["play", "--daemon", "tock"], program: Self.front,
                                    prefix: [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"],
                                    environment: ["SFX_SOCKET": socket, "HOME": "/nonexistent"])
        XCTAssertEqual(outsider.status, 1, outsider.stderr)
        XCTAssertEqual(stopDaemon(), 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket))
    }
}
