import Foundation
import Glibc
import XCTest

/// SO_PEERCRED: a client of another user is refused, with a reply saying so.
final class PeerTests: DaemonTestCase {
    func testClientOfAnotherUserIsRefused() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root to run a client as another user") }
        let setpriv = "/usr/bin/setpriv"
        guard FileManager.default.isExecutableFile(atPath: setpriv) else { throw XCTSkip("setpriv (util-linux) is missing") }
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
