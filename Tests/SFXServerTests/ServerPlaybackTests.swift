import Foundation
import SFXTestSupport
import XCTest

/// `sfx` through a real sound server: a private PipeWire (see `PrivateSoundServer`), reached
/// through PipeWire's own ALSA plugin and through the PulseAudio one, with the null sink's
/// monitor recorded. Each test runs for both plugins.
final class ServerPlaybackTests: ServerTestCase {
    // MARK: Sound arrives

    func testSoundArrivesThroughPipeWirePlugin() throws { try soundArrives(.pipewire) }
    func testSoundArrivesThroughPulsePlugin() throws { try soundArrives(.pulse) }

    func soundArrives(_ plugin: PrivateSoundServer.Plugin) throws {
        let recording = try MonitorRecording(server: server, name: "monitor")
        usleep(300_000)
        let run = try SFXProgram(["play", "bell"], environment: server.clientEnvironment(plugin), in: server.directory)
        XCTAssertEqual(run.wait(seconds: 20), 0, run.output)
        XCTAssertNotNil(recording.waitForSound(seconds: 3), "nothing reached the sink's monitor through \(plugin)")
        XCTAssertFalse(run.errors.contains("virtual card"), run.errors)
    }

    // MARK: The server stops and comes back mid-play

    /// How long the outage lasts (SFX_OUTAGE_SECONDS for the figures of a longer one).
    static var outageSeconds: Double {
        ProcessInfo.processInfo.environment["SFX_OUTAGE_SECONDS"].flatMap(Double.init) ?? 4
    }

    func testServerRestartMidPlayThroughPipeWirePlugin() throws { try serverRestart(.pipewire) }
    func testServerRestartMidPlayThroughPulsePlugin() throws { try serverRestart(.pulse) }

    func serverRestart(_ plugin: PrivateSoundServer.Plugin) throws {
        let before = try MonitorRecording(server: server, name: "before")
        usleep(300_000)
        let run = try SFXProgram(["play", "bell", "--loops", "-1"], environment: server.clientEnvironment(plugin), in: server.directory)
        defer { run.kill() }
        XCTAssertNotNil(before.waitForSound(seconds: 5), "no sound before the outage through \(plugin)")
        before.stop()

        try server.stopServers()
        // The first half second is the engine noticing; measure the rest of the outage.
        usleep(500_000)
        let start = try XCTUnwrap(ProcessUsage(pid: run.pid), "sfx died when the server stopped: \(run.output)")
        let startTime = Date()
        var peakResident = start.residentBytes
        while Date().timeIntervalSince(startTime) < Self.outageSeconds {
            usleep(100_000)
            guard let usage = ProcessUsage(pid: run.pid) else { return XCTFail("sfx ended during the outage: \(run.output)") }
            peakResident = max(peakResident, usage.residentBytes)
        }
        let end = try XCTUnwrap(ProcessUsage(pid: run.pid))
        let cpu = (end.cpuSeconds - start.cpuSeconds) / Date().timeIntervalSince(startTime)
        let growth = peakResident - start.residentBytes

        let restart = Date()
        try server.startServers()
        let serverUp = Date().timeIntervalSince(restart)
        let after = try MonitorRecording(server: server, name: "after")
        let heard = after.waitForSound(seconds: 10)
        let secondsToSound = heard.map { after.started.timeIntervalSince(restart) + $0 }
        print(String(format: "%@ plugin, %.1f s outage: CPU %.2f %% of a core, RSS %.1f MB (+%.2f MB at peak), sound %@ after the server was started again (it answered after %.2f s)",
                     plugin.rawValue, Self.outageSeconds, cpu * 100, Double(start.residentBytes) / 1e6, Double(growth) / 1e6,
                     secondsToSound.map { String(format: "%.2f s", $0) } ?? "never", serverUp))
        XCTAssertLessThan(cpu, 0.10, "sfx used \(Int(cpu * 100)) % of a core while the server was gone")
        XCTAssertLessThan(growth, 20_000_000, "sfx grew by \(growth) bytes while the server was gone")
        XCTAssertNotNil(heard, "no sound within 10 s of the server's return through \(plugin): \(run.output)")

        run.interrupt()
        XCTAssertEqual(run.wait(seconds: 5), 130, "SIGINT did not end the play: \(run.output)")
    }

    // MARK: SIGINT

    func testInterruptEndsPlayAtAnyPointThroughPipeWirePlugin() throws { try interruptEndsPlay(.pipewire) }
    func testInterruptEndsPlayAtAnyPointThroughPulsePlugin() throws { try interruptEndsPlay(.pulse) }

    func interruptEndsPlay(_ plugin: PrivateSoundServer.Plugin) throws {
        for delay in [0.0, 0.02, 0.1, 0.3, 1.0] {
            let run = try SFXProgram(["play", "bell", "--loops", "-1"], environment: server.clientEnvironment(plugin), in: server.directory)
            defer { run.kill() }
            usleep(UInt32(delay * 1e6))
            run.interrupt()
            let status = run.wait(seconds: 5)
            XCTAssertNotNil(status, "SIGINT \(delay) s after start did not end `sfx play` through \(plugin)")
            // 130 once the handler is installed; before that the default action ends it by the signal.
            XCTAssertTrue(status == 130 || status == 0 || status == -SIGINT, "status \(String(describing: status)) after SIGINT at \(delay) s: \(run.output)")
        }
        // During an outage too.
        let run = try SFXProgram(["play", "bell", "--loops", "-1"], environment: server.clientEnvironment(plugin), in: server.directory)
        defer { run.kill() }
        usleep(500_000)
        try server.stopServers()
        usleep(1_000_000)
        run.interrupt()
        XCTAssertEqual(run.wait(seconds: 5), 130, "SIGINT during the outage did not end `sfx play` through \(plugin): \(run.output)")
    }
}

/// The `sfx` program (beside this test bundle) running in the background, its output in files.
final class SFXProgram {
    static var url: URL { BuildProducts.product("sfx") }

    private let process = Process()
    private let outFile: URL
    private let errFile: URL

    /// Hides the machine's sound cards from a child: a mount namespace of its own (unshare, as
    /// root) with an empty tmpfs over /dev/snd and /proc/asound where they exist, then the program
    /// in the same process, so its pid and signals are the program's.
    static let withoutSoundCards = """
        for d in /dev/snd /proc/asound; do if [ -e "$d" ]; then mount -t tmpfs none "$d" || exit 97; fi; done
        exec "$0" "$@"
        """

    /// Starts sfx with `arguments`; with `hidingSoundCards`, as on a machine without any (see
    /// `withoutSoundCards`), so tests about that case run on machines with cards too.
    init(_ arguments: [String], environment: [String: String], in directory: URL, hidingSoundCards: Bool = false) throws {
        let name = UUID().uuidString
        outFile = directory.appending(path: "sfx-\(name).out")
        errFile = directory.appending(path: "sfx-\(name).err")
        _ = FileManager.default.createFile(atPath: outFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errFile.path, contents: nil)
        if hidingSoundCards {
            process.executableURL = URL(filePath: "/usr/bin/unshare")
            process.arguments = ["--mount", "--propagation", "private", "--", "/bin/sh", "-c", Self.withoutSoundCards,
                                 Self.url.path] + arguments
        } else {
            process.executableURL = Self.url
            process.arguments = arguments
        }
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: outFile)
        process.standardError = try FileHandle(forWritingTo: errFile)
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }
    var stdout: String { (try? String(contentsOf: outFile, encoding: .utf8)) ?? "" }
    var errors: String { (try? String(contentsOf: errFile, encoding: .utf8)) ?? "" }
    var output: String { "stdout: \(stdout) stderr: \(errors)" }

    func interrupt() { if process.isRunning { process.interrupt() } }

    /// Waits up to `seconds`; the exit status, minus the signal number when a signal ended it, or nil.
    @discardableResult
    func wait(seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        guard !process.isRunning else { return nil }
        return process.terminationReason == .uncaughtSignal ? -process.terminationStatus : process.terminationStatus
    }

    func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
    }
}
