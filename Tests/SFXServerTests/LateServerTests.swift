import Foundation
import Glibc
import Synchronization
import SFX
import SFXTestSupport
import XCTest

/// A program that starts before its sound server (a kiosk at boot, a desktop session whose
/// PipeWire is not up yet): ALSA's `default` goes to the server's plugin, the server starts
/// 2 s later, and the program's sound must reach the null sink's monitor within a second of it.
/// The library in this process (Swift) and a C program built against an install of this build.
final class LateServerTests: ServerTestCase {
    func testTheLibraryAttachesWhenPipeWireStartsLate() throws { try libraryAttaches(.pipewire) }
    func testTheLibraryAttachesWhenPipeWirePulseStartsLate() throws { try libraryAttaches(.pulse) }

    func libraryAttaches(_ plugin: PrivateSoundServer.Plugin) throws {
        // The engine reopens the device on its own thread: the environment stays for the test.
        try withClientEnvironment(plugin) { try libraryAttachesHere(plugin) }
    }

    private func libraryAttachesHere(_ plugin: PrivateSoundServer.Plugin) throws {
        try server.stopServers()
        let events = Mutex<[EngineEvent]>([])
        let engine = try makeEngine()
        defer { engine.close() }
        engine.onEvent = { event in events.withLock { $0.append(event) } }
        let deadline = Date().addingTimeInterval(5)
        while events.withLock({ $0.isEmpty }), Date() < deadline { usleep(10_000) }
        guard case .deviceUnavailable(let why)? = events.withLock({ $0.first }) else {
            return XCTFail("\(plugin): \(events.withLock { $0 })")
        }
        print("\(plugin) plugin, no server: \(why)")
        XCTAssertTrue(why.hasPrefix("audio device 'default'"), why)
        let tock = try engine.systemSound(named: "tock")
        let playing = Atomic<Bool>(true)
        let player = Thread { while playing.load(ordering: .relaxed) { engine.play(tock); usleep(50_000) } }
        player.start()
        defer { playing.store(false, ordering: .relaxed) }
        usleep(2_000_000)
        XCTAssertEqual(events.withLock { $0.count }, 1, "reported once: \(events.withLock { $0 })")
        XCTAssertFalse(engine.metrics.deviceOpen)

        let started = Date()
        try server.startServers()
        let ready = Date()
        let monitor = try MonitorRecording(server: server, name: "late-\(plugin)")
        let heard = monitor.waitForSound(seconds: 5)
        playing.store(false, ordering: .relaxed)
        let afterReady = heard.map { monitor.started.timeIntervalSince(ready) + $0 }
        print(String(format: "%@ plugin: the server answered %.2f s after it was started; sfx's sound on the monitor %@ after that",
                     plugin.rawValue, ready.timeIntervalSince(started), afterReady.map { String(format: "%.2f s", $0) } ?? "never"))
        let sound = try XCTUnwrap(afterReady, "no sound within 5 s of the server through \(plugin): \(events.withLock { $0 })")
        XCTAssertLessThan(sound, 1.2, "sound within a second of the server through \(plugin)")
        XCTAssertTrue(events.withLock { $0.contains { if case .deviceRestored = $0 { true } else { false } } })
    }

    /// The C program: the README's way of opening, then a tock every 50 ms for 10 s.
    static let cProgram = #"""
        #define _DEFAULT_SOURCE
        #include <stdio.h>
        #include <unistd.h>
        #include <sfx.h>

        int main(void) {
            sfx_engine *engine;
            if (sfx_open(NULL, &engine) != SFX_OK) {
                fprintf(stderr, "sfx: %s\n", sfx_last_error());
                return 1;
            }
            char why[512];
            if (sfx_device_status(engine, why, sizeof why) == 0)
                fprintf(stderr, "sfx: %s\n", why);
            sfx_sound tock;
            if (sfx_system_sound(engine, "tock", &tock) != SFX_OK) {
                fprintf(stderr, "sfx: %s\n", sfx_last_error());
                return 1;
            }
            int attached = 0;
            for (int i = 0; i < 200; i++) {
                sfx_play(engine, tock, NULL, NULL);
                if (!attached && sfx_device_status(engine, why, sizeof why) == 1) {
                    attached = 1;
                    printf("attached\n");
                    fflush(stdout);
                }
                usleep(50000);
            }
            sfx_close(engine);
            return attached ? 0 : 3;
        }
        """#

    func testACProgramAttachesWhenPipeWireStartsLate() throws {
        let checkout = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let prefix = server.directory.appending(path: "prefix")
        let install = try runToEnd(checkout.appending(path: "script/install"),
                                   ["--from", BuildProducts.directory.path, "--prefix", prefix.path], errors: .captured)
        XCTAssertEqual(install.status, 0, install.output + install.errors)
        let source = server.directory.appending(path: "late.c"), program = server.directory.appending(path: "late")
        try Self.cProgram.write(to: source, atomically: true, encoding: .utf8)
        let build = try runToEnd(URL(filePath: "/bin/sh"),
                                 ["-c", "cc -std=c11 -Wall -Wextra -Werror -o '\(program.path)' '\(source.path)' $(pkg-config --cflags --libs sfx)"],
                                 environment: ProcessInfo.processInfo.environment.merging(
                                    ["PKG_CONFIG_PATH": prefix.appending(path: "lib/pkgconfig").path]) { $1 },
                                 errors: .captured)
        XCTAssertEqual(build.status, 0, build.output + build.errors)
        try server.stopServers()
        let out = server.directory.appending(path: "late.out"), err = server.directory.appending(path: "late.err")
        for file in [out, err] { _ = FileManager.default.createFile(atPath: file.path, contents: nil) }
        let process = Process()
        process.executableURL = program
        var environment = server.clientEnvironment(.pipewire)
        environment["XDG_CONFIG_HOME"] = server.directory.appending(path: "config").path
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() } }
        usleep(2_000_000)
        let errors = { (try? String(contentsOf: err, encoding: .utf8)) ?? "" }
        XCTAssertTrue(process.isRunning, "the program ended without a server: \(errors())")
        let started = Date()
        try server.startServers()
        let ready = Date()
        let monitor = try MonitorRecording(server: server, name: "late-c")
        let heard = monitor.waitForSound(seconds: 5)
        let afterReady = heard.map { monitor.started.timeIntervalSince(ready) + $0 }
        print(String(format: "C program, pipewire plugin: the server answered %.2f s after it was started; sound on the monitor %@ after that",
                     ready.timeIntervalSince(started), afterReady.map { String(format: "%.2f s", $0) } ?? "never"))
        process.waitUntilExit()
        let output = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
        XCTAssertEqual(process.terminationStatus, 0, "stdout: \(output) stderr: \(errors())")
        let lines = errors().split(separator: "\n")
        XCTAssertEqual(lines.count, 1, "said once why there was no device: \(errors())")
        XCTAssertTrue(lines.first?.hasPrefix("sfx: audio device 'default'") == true, errors())
        XCTAssertEqual(output, "attached\n")
        let sound = try XCTUnwrap(afterReady, "no sound within 5 s of the server: \(errors())")
        XCTAssertLessThan(sound, 1.2, "sound within a second of the server")
    }
}

/// `metrics.outputLatency` through a sound server: what sfx queues plus what the server holds
/// after it, as the plugin's `snd_pcm_delay` says, followed while playing. The server's graph is
/// made to hold more (PipeWire's quantum forced to 4,096 frames, 85 ms, with pw-metadata, as a
/// node with a long configured latency does) and the figure must grow by about as much. The
/// first figure is taken with the quantum forced small (256 frames), since a graph left to
/// itself may already run a large one (PipeWire raises it when a busy machine makes it late).
final class ServerLatencyTests: ServerTestCase {
    func testOutputLatencyFollowsTheServerThroughPipeWirePlugin() throws { try follows(.pipewire) }
    func testOutputLatencyFollowsTheServerThroughPulsePlugin() throws { try follows(.pulse) }

    private func forceQuantum(_ frames: Int) throws {
        let run = try runToEnd(URL(filePath: "/usr/bin/pw-metadata"), ["-n", "settings", "0", "clock.force-quantum", "\(frames)"],
                               environment: server.clientEnvironment(.pipewire), errors: .captured)
        guard run.status == 0 else { throw ServerTestFailure("pw-metadata failed: \(run.errors)") }
    }

    func follows(_ plugin: PrivateSoundServer.Plugin) throws {
        try withClientEnvironment(plugin) { try followsHere(plugin) }
    }

    private func followsHere(_ plugin: PrivateSoundServer.Plugin) throws {
        let engine = try makeEngine()
        defer { engine.close() }
        let tone = try engine.load(buffer: [Float](repeating: 0.01, count: 48_000), sampleRate: 48_000, channels: 1)
        try forceQuantum(256)
        defer { try? forceQuantum(0) }
        engine.play(tone, loops: -1)
        /// The median of the figure over `seconds`.
        func median(_ seconds: Double) -> Double? {
            var readings: [Double] = []
            let end = Date().addingTimeInterval(seconds)
            while Date() < end {
                if let latency = engine.metrics.outputLatency { readings.append(latency.seconds * 1000) }
                usleep(50_000)
            }
            return readings.isEmpty ? nil : readings.sorted()[readings.count / 2]
        }
        usleep(500_000)
        let before = try XCTUnwrap(median(1), "no output latency through \(plugin): \(engine.metrics)")
        try forceQuantum(4096)
        usleep(500_000)
        let after = try XCTUnwrap(median(1), "no output latency through \(plugin) after the change")
        print(String(format: "%@ plugin: output latency %.1f ms with the graph's quantum forced to 256 frames, %.1f ms with the graph's quantum forced to 4096 frames (85.3 ms); engine: %@",
                     plugin.rawValue, before, after, "\(engine.metrics)"))
        XCTAssertGreaterThan(before, 1, "\(plugin)")
        XCTAssertGreaterThan(after - before, 40, "the figure follows what the server holds (\(plugin))")
    }
}

/// The user picks another output while sfx plays (`pactl set-default-sink`, as a desktop's sound
/// settings do): the server moves sfx's stream, through either plugin, and sfx plays on there,
/// its device open and its output latency still read.
final class ServerDefaultMoveTests: ServerTestCase {
    func testTheStreamFollowsTheDefaultSinkThroughPipeWirePlugin() throws { try follows(.pipewire) }
    func testTheStreamFollowsTheDefaultSinkThroughPulsePlugin() throws { try follows(.pulse) }

    func follows(_ plugin: PrivateSoundServer.Plugin) throws {
        try server.pactl("load-module", "module-null-sink", "sink_name=sfx_second")
        try withClientEnvironment(plugin) { try followsHere(plugin) }
    }

    private func followsHere(_ plugin: PrivateSoundServer.Plugin) throws {
        let engine = try makeEngine()
        defer { engine.close() }
        let events = Mutex<[EngineEvent]>([])
        engine.onEvent = { event in events.withLock { $0.append(event) } }
        let tone = try engine.load(buffer: (0..<48_000).map { Float(0.3 * sin(Double($0) * 0.06)) }, sampleRate: 48_000, channels: 1)
        engine.play(tone, loops: -1)
        let first = try MonitorRecording(server: server, name: "first-\(plugin)")
        XCTAssertNotNil(first.waitForSound(seconds: 3), "no sound on the first sink through \(plugin)")
        let before = engine.metrics.outputLatency
        let second = try MonitorRecording(server: server, name: "second-\(plugin)", sink: "sfx_second")
        usleep(300_000)
        XCTAssertNil(second.firstSound(), "sound on the second sink before the move through \(plugin)")
        let moved = Date()
        try server.pactl("set-default-sink", "sfx_second")
        let heard = second.waitForSound(seconds: 3)
        let afterMove = heard.map { second.started.timeIntervalSince(moved) + $0 }
        usleep(300_000)
        let metrics = engine.metrics
        print(String(format: "%@ plugin: sound on the new default sink %@ after set-default-sink; output latency %@ before, %@ after",
                     plugin.rawValue, afterMove.map { String(format: "%.2f s", $0) } ?? "never",
                     before.map { String(format: "%.1f ms", $0.seconds * 1000) } ?? "none",
                     metrics.outputLatency.map { String(format: "%.1f ms", $0.seconds * 1000) } ?? "none"))
        XCTAssertNotNil(heard, "the stream did not follow the default sink through \(plugin)")
        XCTAssertTrue(metrics.deviceOpen, "\(plugin): \(events.withLock { $0 })")
        XCTAssertNotNil(metrics.outputLatency, "the output latency is still read after the move (\(plugin))")
        XCTAssertFalse(events.withLock { $0.contains { if case .deviceLost = $0 { true } else { false } } },
                       "a move is not a loss (\(plugin)): \(events.withLock { $0 })")
    }
}
