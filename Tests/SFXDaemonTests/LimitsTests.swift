import CSFXProtocol
import Foundation
import Glibc
import XCTest

/// The daemon's limits on sounds, and its refusals of an empty frame and of a runtime directory
/// of another user.
final class LimitsTests: DaemonTestCase {
    func testAnEmptyFrameGetsAnErrorReply() throws {
        try startDaemon()
        let fd = try connect()
        defer { close(fd) }
        XCTAssertEqual(send(fd, nil, 0, Int32(MSG_NOSIGNAL)), 0)
        let answer = try reply(fd)
        XCTAssertEqual(answer.type, 0x82)
        XCTAssertEqual(answer.id, 0)
        XCTAssertTrue(answer.text.contains("shorter than its 12-byte header"), answer.text)
        // The connection goes on.
        XCTAssertEqual(try request(fd, 1, id: 2, "name=tock\nvolume=0.001\n").type, 0x81)
        XCTAssertEqual(stopDaemon(), 0)
    }

    func testSoundsOfAClientAreCappedByCountAndMemory() throws {
        // A 2 s stereo float tone decodes to 768,000 bytes: three fit in 2 MB, not four.
        try startDaemon(["--max-sounds-per-client", "5", "--max-sound-memory-per-client", "2"])
        let tone = try writeTone("two.wav", seconds: 2)
        let short = try writeTone("short.wav", seconds: 0.01)
        let fd = try connect()
        defer { close(fd) }
        func load(_ name: String, _ url: URL) throws -> (type: UInt8, id: UInt32, text: String) {
            let file = open(url.path, O_RDONLY | O_CLOEXEC)
            defer { close(file) }
            return try request(fd, 6, id: 1, "name=\(name)\nfile=1\n", pass: file)
        }
        for n in 1...2 { XCTAssertEqual(try load("big\(n)", tone).type, 0x81) }
        let over = try load("big3", tone)
        XCTAssertEqual(over.type, 0x82)
        XCTAssertTrue(over.text.contains("over the daemon's 2.0 MB per client") && over.text.contains("--max-sound-memory-per-client"), over.text)
        // Loaded again under a name it has: replaced, so it fits.
        XCTAssertEqual(try load("big2", tone).type, 0x81, "a replacement frees the sound it replaces")
        for n in 1...3 { XCTAssertEqual(try load("small\(n)", short).type, 0x81) }
        let many = try load("small4", short)
        XCTAssertEqual(many.type, 0x82)
        XCTAssertTrue(many.text.contains("has loaded 5 sounds") && many.text.contains("--max-sounds-per-client"), many.text)
        XCTAssertEqual(try request(fd, 1, id: 3, "name=small1\nvolume=0.001\n").type, 0x81, "what was loaded still plays")
        XCTAssertEqual(stopDaemon(), 0)
    }

    func testSoundsOfAllClientsAreCappedByCountAndMemory() throws {
        try startDaemon(["--max-sounds", "2", "--max-sound-memory", "1"])
        let tone = try writeTone("one.wav", seconds: 1)      // 384,000 bytes decoded
        let big = try writeTone("two.wav", seconds: 2)       // 768,000 bytes
        let fd = try connect()
        defer { close(fd) }
        func load(_ name: String, _ url: URL) throws -> (type: UInt8, id: UInt32, text: String) {
            let file = open(url.path, O_RDONLY | O_CLOEXEC)
            defer { close(file) }
            return try request(fd, 6, id: 1, "name=\(name)\nfile=1\n", pass: file)
        }
        XCTAssertEqual(try load("a", tone).type, 0x81)
        let heavy = try load("b", big)
        XCTAssertEqual(heavy.type, 0x82)
        XCTAssertTrue(heavy.text.contains("over its 1.0 MB in all") && heavy.text.contains("--max-sound-memory"), heavy.text)
        XCTAssertEqual(try load("b", tone).type, 0x81)
        let third = try load("c", tone)
        XCTAssertEqual(third.type, 0x82)
        XCTAssertTrue(third.text.contains("holds 2 loaded sounds") && third.text.contains("--max-sounds"), third.text)
        // A file passed to play counts while it plays: over the memory, refused.
        let file = open(big.path, O_RDONLY | O_CLOEXEC)
        defer { close(file) }
        let played = try request(fd, 1, id: 9, "file=1\nvolume=0.001\n", pass: file)
        XCTAssertEqual(played.type, 0x82, played.text)
        XCTAssertTrue(played.text.contains("--max-sound-memory"), played.text)
        XCTAssertEqual(stopDaemon(), 0)
    }

    func testARuntimeDirectoryOfAnotherUserIsRefused() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root to give a directory to another user") }
        let runtime = scratch.appending(path: "other-runtime")
        XCTAssertEqual(mkdir(runtime.path, 0o700), 0)
        XCTAssertEqual(chown(runtime.path, 65534, 65534), 0)
        // Bounded: a daemon that wrongly starts would serve for ever.
        let serve = try run(["serve", "-q", "-D", "null"], prefix: ["/usr/bin/timeout", "20"], environment: ["XDG_RUNTIME_DIR": runtime.path])
        XCTAssertEqual(serve.status, 1)
        XCTAssertTrue(serve.stderr.contains("XDG_RUNTIME_DIR \(runtime.path) belongs to uid 65534"), serve.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: runtime.appending(path: "sfx").path), "nothing made in it")
    }
}
