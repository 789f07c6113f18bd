import Foundation
import SFXTestSupport
import XCTest

struct ServerTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A private PipeWire with pipewire-pulse and a null sink `sfx_test`, run by
/// Tests/server/pipewire-session in a fresh temporary directory (its own XDG_RUNTIME_DIR and
/// HOME, mode 0700), stopped and removed by `shutdown()`. The machine's ALSA default is never
/// changed: clients get ALSA_CONFIG_PATH pointing at the session's own configuration.
final class PrivateSoundServer {
    /// The ALSA plugin that carries sfx's stream to the server.
    enum Plugin: String, CaseIterable {
        /// PipeWire's own ALSA PCM (pipewire-alsa).
        case pipewire
        /// The PulseAudio ALSA PCM (libasound2-plugins), served by pipewire-pulse.
        case pulse
    }

    static let script = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "server/pipewire-session")

    let directory: URL
    private let session: Process
    /// XDG_RUNTIME_DIR, HOME, XDG_CONFIG_HOME, XDG_STATE_HOME, PULSE_SERVER of the session.
    let environment: [String: String]

    init() throws {
        // The first start on a fresh machine can be slow; a second attempt in a fresh directory
        // gets warm caches. Both failures are reported with the logs' last lines.
        var failures: [String] = []
        var started: (directory: URL, session: Process)?
        for _ in 0..<2 where started == nil {
            let directory = FileManager.default.temporaryDirectory.appending(path: "sfx-server-\(UUID().uuidString)")
            do {
                started = (directory, try Self.start(in: directory))
            } catch {
                failures.append("\(error)")
            }
        }
        guard let started else {
            throw ServerTestFailure("cannot start a private PipeWire (\(failures.joined(separator: "; then "))); install the packages script/test installs (pipewire, wireplumber, pipewire-pulse, dbus)")
        }
        directory = started.directory
        session = started.session
        var environment: [String: String] = [:]
        let text = try String(contentsOf: directory.appending(path: "env"), encoding: .utf8)
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { environment[String(parts[0])] = String(parts[1]) }
        }
        self.environment = environment
    }

    private static func start(in directory: URL) throws -> Process {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        let session = Process()
        session.executableURL = script
        session.arguments = [directory.path]
        session.standardOutput = FileHandle.nullDevice
        session.standardError = FileHandle.nullDevice
        do {
            try session.run()
            try waitFor(directory.appending(path: "ready"), seconds: 60, session: session, what: "the private PipeWire to answer")
            return session
        } catch {
            let logs = logTails(in: directory)
            remove(directory, session: session)
            throw ServerTestFailure("\(error)\(logs.isEmpty ? "" : "; logs: " + logs)")
        }
    }

    /// The last lines of the session's logs, on one line, for a failure message.
    private static func logTails(in directory: URL) -> String {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".log") }.sorted().compactMap { name in
            guard let text = try? String(contentsOf: directory.appending(path: name), encoding: .utf8) else { return nil }
            let lines = text.split(separator: "\n").suffix(4).joined(separator: " | ")
            return lines.isEmpty ? nil : "\(name): \(lines)"
        }.joined(separator: "; ")
    }

    /// The environment of a client that plays through `plugin`: the session's variables and
    /// ALSA_CONFIG_PATH with `default` → that plugin.
    func clientEnvironment(_ plugin: Plugin) -> [String: String] {
        var result = ProcessInfo.processInfo.environment
        for (key, value) in environment { result[key] = value }
        result["ALSA_CONFIG_PATH"] = directory.appending(path: "asound-\(plugin.rawValue).conf").path
        result["SFX_VIRTUAL_CARD"] = nil
        result["XDG_DATA_DIRS"] = "/usr/share"
        result["XDG_DATA_HOME"] = "/nonexistent"
        return result
    }

    /// Stops pipewire, wireplumber and pipewire-pulse (the session bus stays).
    func stopServers() throws {
        try send("stop")
        try Self.waitFor(directory.appending(path: "stopped"), seconds: 10, session: session, what: "the servers to stop")
    }

    /// Starts them again and waits until the null sink is there.
    func startServers() throws {
        try send("start")
        try Self.waitFor(directory.appending(path: "ready"), seconds: 60, session: session, what: "the servers to start again")
    }

    /// Ends the session and removes its directory.
    func shutdown() {
        if session.isRunning { try? send("quit") }
        Self.remove(directory, session: session)
    }

    /// Runs `pactl` against the session.
    @discardableResult
    func pactl(_ arguments: String...) throws -> String {
        let run = try runToEnd(URL(filePath: "/usr/bin/pactl"), arguments, environment: clientEnvironment(.pulse), errors: .discarded)
        guard run.status == 0 else {
            throw ServerTestFailure("pactl \(arguments.joined(separator: " ")) failed with status \(run.status)")
        }
        return run.output
    }

    private func send(_ command: String) throws {
        if command != "quit" { try? FileManager.default.removeItem(at: directory.appending(path: command == "stop" ? "stopped" : "ready")) }
        guard let handle = FileHandle(forWritingAtPath: directory.appending(path: "control").path) else {
            throw ServerTestFailure("cannot open the session's control pipe in \(directory.path)")
        }
        handle.write(Data((command + "\n").utf8))
        try handle.close()
    }

    private static func waitFor(_ file: URL, seconds: Double, session: Process, what: String) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !FileManager.default.fileExists(atPath: file.path) {
            guard session.isRunning else { throw ServerTestFailure("the session ended while waiting for \(what)") }
            guard Date() < deadline else { throw ServerTestFailure("timed out after \(seconds) s waiting for \(what)") }
            usleep(20_000)
        }
    }

    private static func remove(_ directory: URL, session: Process) {
        let deadline = Date().addingTimeInterval(10)
        while session.isRunning, Date() < deadline { usleep(20_000) }
        if session.isRunning { session.terminate(); session.waitUntilExit() }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Records the null sink's monitor with parecord as raw 16-bit stereo at 48 kHz, from the moment
/// it starts, so a sample's index tells when it was heard.
final class MonitorRecording {
    static let rate = 48_000
    let file: URL
    /// CLOCK_MONOTONIC-free wall time of the start, for "seconds until sound".
    let started: Date
    private let process = Process()

    init(server: PrivateSoundServer, name: String, sink: String = "sfx_test") throws {
        file = server.directory.appending(path: "\(name).raw")
        process.executableURL = URL(filePath: "/usr/bin/parecord")
        process.arguments = ["--raw", "--format=s16le", "--rate=\(Self.rate)", "--channels=2", "--latency-msec=10",
                             "--device=\(sink).monitor", file.path]
        process.environment = server.clientEnvironment(.pulse)
        process.standardError = FileHandle.nullDevice
        started = Date()
        try process.run()
    }

    /// Samples recorded so far (interleaved stereo).
    func samples() -> [Int16] {
        guard let data = try? Data(contentsOf: file) else { return [] }
        return data.withUnsafeBytes { buffer in
            (0..<data.count / 2).map { Int16(littleEndian: buffer.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) }
        }
    }

    /// Seconds from the start of the recording to the first frame louder than `threshold`, or nil.
    func firstSound(threshold: Int16 = 300) -> Double? {
        guard let index = samples().firstIndex(where: { abs(Int32($0)) > Int32(threshold) }) else { return nil }
        return Double(index / 2) / Double(Self.rate)
    }

    /// Waits up to `seconds` for sound; returns seconds from the recording's start to it.
    func waitForSound(seconds: Double) -> Double? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let at = firstSound() { return at }
            usleep(50_000)
        }
        return firstSound()
    }

    func stop() {
        if process.isRunning { process.interrupt(); process.waitUntilExit() }
    }

    deinit { stop() }
}

/// CPU time and resident memory of a process, from /proc.
struct ProcessUsage {
    /// user + system CPU seconds so far.
    var cpuSeconds: Double
    var residentBytes: Int

    init?(pid: Int32) {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after the command name: state is field 3, utime 14, stime 15, rss 24.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 22, let utime = Double(fields[11]), let stime = Double(fields[12]),
              let rss = Int(fields[21]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        cpuSeconds = (utime + stime) / ticks
        residentBytes = rss * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
