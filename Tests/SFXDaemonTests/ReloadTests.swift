import Foundation
import Glibc
import XCTest

/// serve.conf's sounds are preloaded by name, and SIGHUP reads the file again.
final class ReloadTests: DaemonTestCase {
    func testConfiguredSoundsArePreloadedAndSIGHUPReloadsThem() throws {
        let beep = try writeTone("beep.wav"), boop = try writeTone("boop.wav", frequency: 330)
        let config = scratch.appending(path: "config/sfx")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        let conf = config.appending(path: "serve.conf")
        try Data("[sounds]\nbeep = \(beep.path)\n".utf8).write(to: conf)
        let daemon = try startDaemon()
        XCTAssertEqual(try run(["play", "beep"], program: Self.front).status, 0)
        XCTAssertTrue(try run(["status", "--json", "--daemon"]).stdout.contains("\"customSounds\":[\"beep\"]"))
        try Data("[sounds]\nboop = \(boop.path)\n".utf8).write(to: conf)
        kill(daemon.processIdentifier, SIGHUP)
        var sounds = ""
        for _ in 0..<100 {
            sounds = try run(["status", "--json", "--daemon"]).stdout
            if sounds.contains("\"customSounds\":[\"boop\"]") { break }
            usleep(50_000)
        }
        XCTAssertTrue(sounds.contains("\"customSounds\":[\"boop\"]"), sounds)
        let gone = try run(["play", "--daemon", "beep"], program: Self.front)
        XCTAssertEqual(gone.status, 1)
        XCTAssertTrue(gone.stderr.contains("beep"), gone.stderr)
        XCTAssertEqual(try run(["play", "--daemon", "boop"], program: Self.front).status, 0)
        XCTAssertEqual(stopDaemon(), 0)
    }
}
