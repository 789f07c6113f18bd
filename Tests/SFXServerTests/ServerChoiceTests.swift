import Foundation
import XCTest
import SFXDevice

/// A machine with a sound server and no sound card: `sfx play` goes to the server, `sfx devices`
/// says which devices reach it; with no server either, the virtual card as before. And `-v`
/// reports the setup as negotiated, with server defaults. Each `sfx` runs with the machine's sound
/// cards hidden (`SFXProgram.withoutSoundCards`), so the tests hold on machines with cards too.
final class ServerChoiceTests: ServerTestCase {
    /// The session's variables with the machine's own ALSA configuration (no ALSA_CONFIG_PATH).
    var machineALSA: [String: String] {
        var environment = server.clientEnvironment(.pipewire)
        environment["ALSA_CONFIG_PATH"] = nil
        environment["TMPDIR"] = server.directory.path
        return environment
    }

    func testWithoutACardAReachableServerIsPreferredToTheVirtualCard() throws {
        XCTAssertEqual(SoundServer.reachable(environment: machineALSA), [.pipewire, .pulseaudio])
        let recording = try MonitorRecording(server: server, name: "monitor")
        usleep(300_000)
        let run = try SFXProgram(["play", "bell", "-v"], environment: machineALSA, in: server.directory, hidingSoundCards: true)
        XCTAssertEqual(run.wait(seconds: 20), 0, run.output)
        XCTAssertFalse(run.errors.contains("virtual card"), run.output)
        XCTAssertTrue(run.stdout.contains("no sound card here: the PipeWire server"), run.output)
        XCTAssertNotNil(recording.waitForSound(seconds: 3), "nothing reached the server: \(run.output)")

        let devices = try SFXProgram(["devices"], environment: machineALSA, in: server.directory, hidingSoundCards: true)
        XCTAssertEqual(devices.wait(seconds: 20), 0, devices.output)
        XCTAssertTrue(devices.stdout.contains("plays through the PipeWire server with `pipewire`"), devices.stdout)
        XCTAssertTrue(devices.stdout.contains("`pulse`"), devices.stdout)
        XCTAssertFalse(devices.stdout.contains("uses sfx's virtual card"), devices.stdout)
    }

    func testWithoutACardOrAServerTheVirtualCardPlays() throws {
        var environment = machineALSA
        let empty = server.directory.appending(path: "no-server")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        environment["XDG_RUNTIME_DIR"] = empty.path
        environment["PULSE_SERVER"] = nil
        XCTAssertEqual(SoundServer.reachable(environment: environment), [])
        let run = try SFXProgram(["play", "tock"], environment: environment, in: server.directory, hidingSoundCards: true)
        XCTAssertEqual(run.wait(seconds: 20), 0, run.output)
        XCTAssertTrue(run.errors.contains("no sound card here: playing through sfx's virtual card"), run.output)
        let devices = try SFXProgram(["devices"], environment: environment, in: server.directory, hidingSoundCards: true)
        XCTAssertEqual(devices.wait(seconds: 20), 0, devices.output)
        XCTAssertTrue(devices.stdout.contains("no sound card and no sound server running"), devices.stdout)
    }

    func testVerbosePlayReportsTheNegotiatedSetupThroughPipeWirePlugin() throws { try verbose(.pipewire) }
    func testVerbosePlayReportsTheNegotiatedSetupThroughPulsePlugin() throws { try verbose(.pulse) }

    func verbose(_ plugin: PrivateSoundServer.Plugin) throws {
        let run = try SFXProgram(["play", "tock", "-v"], environment: server.clientEnvironment(plugin), in: server.directory, hidingSoundCards: true)
        XCTAssertEqual(run.wait(seconds: 20), 0, run.output)
        let kind = plugin == .pipewire ? "PipeWire" : "PulseAudio"
        XCTAssertTrue(run.stdout.contains("(a \(kind) sound server); asked for default: 48000 Hz, period 512 × 3"), run.stdout)
        let negotiated = try XCTUnwrap(run.stdout.split(separator: "\n").first { $0.hasPrefix("sfx: negotiated default: ") }, run.stdout)
        XCTAssertNotNil(negotiated.range(of: #"FLOAT_LE|S32_LE|S16_LE"#, options: .regularExpression), String(negotiated))
        XCTAssertNotNil(negotiated.range(of: #"period \d+ × [\d.]+ = buffer \d+ frames, latency ≤ [\d.]+ ms, (SCHED_FIFO|normal priority)"#,
                                         options: .regularExpression), String(negotiated))
        XCTAssertNotNil(run.stdout.range(of: #"sfx: \d+ xruns \(\d+ within 200 ms of opening the device\)"#, options: .regularExpression), run.stdout)

        // What was asked and what was granted both appear, even when they differ.
        let odd = try SFXProgram(["play", "tock", "-v", "--period", "100", "--periods", "2"], environment: server.clientEnvironment(plugin), in: server.directory, hidingSoundCards: true)
        XCTAssertEqual(odd.wait(seconds: 20), 0, odd.output)
        XCTAssertTrue(odd.stdout.contains("period 100 × 2"), odd.stdout)
    }
}
