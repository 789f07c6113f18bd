import Foundation
import XCTest
import SFXDevice

/// Mute as the sound server sees it: the sink, and sfx's own stream muted in the mixer, which
/// the server remembers and applies to every later sfx stream.
final class ServerMuteTests: ServerTestCase {
    /// A vibration "backend": a program that appends a line to a file per vibration.
    func buzzer() throws -> (program: URL, log: URL) {
        let program = server.directory.appending(path: "buzz")
        let log = server.directory.appending(path: "buzzed")
        try Data("#!/bin/sh\necho buzz >> '\(log.path)'\n".utf8).write(to: program)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: program.path)
        return (program, log)
    }

    func testAlertWithItsStreamMutedAtTheServerVibratesThroughPipeWirePlugin() throws { try mutedStream(.pipewire) }
    func testAlertWithItsStreamMutedAtTheServerVibratesThroughPulsePlugin() throws { try mutedStream(.pulse) }

    func mutedStream(_ plugin: PrivateSoundServer.Plugin) throws {
        let environment = server.clientEnvironment(plugin)
        let (program, log) = try buzzer()
        // Not muted yet: the alert plays and does not vibrate.
        let before = try SFXProgram(["alert", "bell", "--backend", "command", "--command", program.path], environment: environment, in: server.directory)
        XCTAssertEqual(before.wait(seconds: 20), 0, before.output)
        XCTAssertTrue(before.stdout.hasPrefix("played"), before.output)
        XCTAssertFalse(FileManager.default.fileExists(atPath: log.path))

        // The user mutes sfx's stream in the mixer while it plays; the server remembers.
        let play = try SFXProgram(["play", "bell", "--loops", "-1"], environment: environment, in: server.directory)
        defer { play.kill() }
        var index: String?
        for _ in 0..<50 where index == nil {
            usleep(100_000)
            index = try server.pactl("list", "short", "sink-inputs").split(separator: "\n").first?.split(separator: "\t").first.map(String.init)
        }
        try server.pactl("set-sink-input-mute", try XCTUnwrap(index, "sfx's stream never appeared at the server"), "1")
        usleep(300_000)
        play.interrupt()
        XCTAssertEqual(play.wait(seconds: 5), 130, play.output)
        usleep(300_000)

        let alert = try SFXProgram(["alert", "bell", "--backend", "command", "--command", program.path], environment: environment, in: server.directory)
        XCTAssertEqual(alert.wait(seconds: 20), 0, alert.output)
        XCTAssertTrue(alert.stdout.hasPrefix("not played (muted: muted at the sound server"), alert.output)
        XCTAssertTrue(alert.stdout.contains("sfx's stream"), alert.output)
        XCTAssertTrue(alert.stdout.contains("is muted"), alert.output)
        XCTAssertTrue(alert.stdout.contains("vibrated"), alert.output)
        XCTAssertEqual(try String(contentsOf: log, encoding: .utf8), "buzz\n", "one vibration")
    }

    func testTheServerStateReadsTheSinksMuteAndVolume() throws {
        let previous = ProcessInfo.processInfo.environment["PULSE_SERVER"]
        setenv("PULSE_SERVER", try XCTUnwrap(server.environment["PULSE_SERVER"]), 1)
        defer { if let previous { setenv("PULSE_SERVER", previous, 1) } else { unsetenv("PULSE_SERVER") } }

        var clear = try XCTUnwrap(SoundServer.state(), "the private server did not answer")
        // WirePlumber makes the null sink the default a moment after the server first answers.
        let deadline = Date().addingTimeInterval(5)
        while clear.sinkName == nil, Date() < deadline {
            usleep(100_000)
            clear = try XCTUnwrap(SoundServer.state(), "the private server stopped answering")
        }
        XCTAssertEqual(clear.sinkName, "sfx_test")
        XCTAssertEqual(clear.sinkMuted, false)
        XCTAssertEqual(clear.sinkVolume ?? -1, 1, accuracy: 0.001)
        XCTAssertEqual(clear.silencingReasons, [])

        try server.pactl("set-sink-mute", "sfx_test", "1")
        XCTAssertEqual(SoundServer.state()?.silencingReasons, ["the sink \"sfx test sink\" is muted"])
        try server.pactl("set-sink-mute", "sfx_test", "0")
        try server.pactl("set-sink-volume", "sfx_test", "0")
        XCTAssertEqual(SoundServer.state()?.silencingReasons, ["the sink \"sfx test sink\" is at zero volume"])
        try server.pactl("set-sink-volume", "sfx_test", "50%")
        let half = try XCTUnwrap(SoundServer.state())
        XCTAssertEqual(half.sinkVolume ?? -1, 0.5, accuracy: 0.01)
        XCTAssertEqual(half.silencingReasons, [])
    }

    func testNoServerMeansNoState() throws {
        let previous = ProcessInfo.processInfo.environment["PULSE_SERVER"]
        setenv("PULSE_SERVER", "unix:" + server.directory.appending(path: "nothing-here").path, 1)
        defer { if let previous { setenv("PULSE_SERVER", previous, 1) } else { unsetenv("PULSE_SERVER") } }
        XCTAssertNil(SoundServer.state(timeout: .milliseconds(500)))
    }
}
