import CSFXProtocol
import Foundation
import Glibc
import SFXCardSupport
import XCTest

/// A client's sound travels as an open descriptor: the daemon reads through it, and opens no
/// path of the client's.
final class FilePassingTests: DaemonTestCase {
    func testCustomSoundLoadedAndPlayedThroughItsDescriptor() throws {
        let tone = try writeTone("beep.wav")
        try startDaemon()
        let load = try run(["load", "--daemon", "--name", "beep", tone.path])
        XCTAssertEqual(load.status, 0, load.stderr)
        XCTAssertTrue(load.stdout.contains("loaded beep"), load.stdout)
        // The file is gone: only what the daemon read through the descriptor remains.
        try FileManager.default.removeItem(at: tone)
        let play = try run(["play", "--daemon", "beep"], program: Self.front)
        XCTAssertEqual(play.status, 0, play.stderr)
        let status = try run(["status", "--json", "--daemon"])
        XCTAssertTrue(status.stdout.contains("\"customSounds\":[\"beep\"]"), status.stdout)
        usleep(300_000)
        XCTAssertEqual(stopDaemon(), 0)
        let recording = try XCTUnwrap(card.recordingURLs().last)
        let peak = try WAVAudio(contentsOf: recording).samples.map(abs).max() ?? 0
        XCTAssertEqual(peak, 0.5, accuracy: 0.02, "the tone's peak reached the DAC")
    }

    /// A pipe may never end: it is refused at once, naming what it is, and so is a descriptor
    /// that cannot be read; a regular file that has no path any more (unlinked) is read
    /// through its descriptor alone.
    func testOnlyARegularFileIsReadThroughItsDescriptor() throws {
        let tone = try writeTone("unlinked.wav", frequency: 440)
        try startDaemon()
        let fd = try connect()
        defer { close(fd) }
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        defer { close(ends[1]) }
        let piped = try request(fd, 6, id: 3, "name=piped\nfile=1\n", pass: ends[0])
        close(ends[0])
        XCTAssertEqual(piped.type, 0x82, piped.text)
        XCTAssertEqual(piped.id, 3)
        XCTAssertTrue(piped.text.contains("is a pipe or FIFO, not a regular file"), piped.text)
        let file = open(tone.path, O_RDONLY | O_CLOEXEC)
        try FileManager.default.removeItem(at: tone)
        let loaded = try request(fd, 6, id: 4, "name=unlinked\nfile=1\n", pass: file)
        close(file)
        XCTAssertEqual(loaded.type, 0x81, loaded.text)
        XCTAssertEqual(try request(fd, 1, id: 5, "name=unlinked\n").type, 0x81)
        // A descriptor opened for writing only cannot be read: refused, with the reason.
        let path = scratch.appending(path: "write-only.wav").path
        let writeOnly = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        defer { close(writeOnly) }
        let refused = try request(fd, 6, id: 6, "name=nope\nfile=1\n", pass: writeOnly)
        XCTAssertEqual(refused.type, 0x82)
        XCTAssertTrue(refused.text.contains("cannot be read through the passed descriptor"), refused.text)
        XCTAssertEqual(stopDaemon(), 0)
    }
}
