import Foundation
import Glibc
import SFXCardSupport

/// Exec → DAC: how long after a shell starts `sfx play tock` the tock's first frame reaches the
/// DAC, with the daemon (`sfx serve` already running; the client is the `sfx` front, a small C
/// program), without it (the Swift program opens the card itself), and for `aplay` playing the
/// same file. The time is taken just before posix_spawn; the DAC time is the card's onset.
/// Every run is a fresh process (cold start, warm page cache), one at a time, with silence
/// between them so that each onset stands alone. All three at 128 × 3 frames.
enum ExecLatency {
    struct Row: Codable {
        var client: String
        var command: String
        var runs: Int
        var matched: Int
        var milliseconds: Distribution
    }

    static let period = 128
    static let periods = 3

    static func measure(count: Int, scratch: URL) throws -> [Row] {
        let bin = URL(filePath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
            .deletingLastPathComponent()
        let front = bin.appending(path: "sfx-front"), program = bin.appending(path: "sfx")
        for needed in [front, program] where !FileManager.default.isExecutableFile(atPath: needed.path) {
            throw BenchError("\(needed.path) is missing; build it (swift build -c release --product \(needed.lastPathComponent)), as Bench/run does")
        }
        let tock = URL(filePath: "Sounds/sfx/stereo/tock.wav")
        guard FileManager.default.fileExists(atPath: tock.path) else {
            throw BenchError("\(tock.path) is missing; run the benchmark from the repository (Bench/run)")
        }
        let setting = ["--device", "sfxcard", "--period", "\(period)", "--periods", "\(periods)", "-q"]
        var rows: [Row] = []
        rows.append(try withDaemon(front: front, program: program, setting: setting, count: count, scratch: scratch))
        rows.append(try run(client: "sfx play tock, no daemon", executable: program,
                            arguments: ["play", "--no-daemon"] + setting + ["tock"], count: count, scratch: scratch, name: "exec-nodaemon"))
        rows.append(try run(client: "aplay", executable: URL(filePath: "/usr/bin/aplay"),
                            arguments: ["-q", "-D", "sfxcard", "--period-size=\(period)", "--buffer-size=\(period * periods)", tock.path],
                            count: count, scratch: scratch, name: "exec-aplay"))
        return rows
    }

    /// The daemon on its own card, and the front as the client.
    private static func withDaemon(front: URL, program: URL, setting: [String], count: Int, scratch: URL) throws -> Row {
        let cardRun = try CardRun(scratch: scratch, name: "exec-daemon")
        defer { cardRun.remove() }
        let runtime = try CardDirectory.makeTemporary(prefix: "sfx-bench-runtime-")
        defer { try? FileManager.default.removeItem(at: runtime) }
        var environment = cardRun.card.environment
        environment["XDG_RUNTIME_DIR"] = runtime.path
        environment["SFX_DAEMON_TRIED"] = nil
        environment["SFX_SOCKET"] = nil
        let daemon = Process()
        daemon.executableURL = program
        daemon.arguments = ["serve"] + setting
        daemon.environment = environment
        daemon.standardOutput = FileHandle.nullDevice
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        let socket = runtime.appending(path: "sfx/sfx.sock").path
        var waited = 0
        while !FileManager.default.fileExists(atPath: socket) {
            guard daemon.isRunning, waited < 400 else {
                if daemon.isRunning { daemon.terminate() }
                throw BenchError("sfx serve did not start on the card within 20 s; run `sfx serve --device sfxcard` by hand to see why")
            }
            Meter.sleep(seconds: 0.05)
            waited += 1
        }
        Meter.sleep(seconds: 0.3)
        let triggers = try spawnRuns(front, ["play", "tock"], environment: environment, count: count, settle: 0.15)
        daemon.terminate()
        daemon.waitUntilExit()
        return row("sfx play tock, daemon", "sfx play tock (the front, with `sfx serve` running)", triggers, try cardRun.log())
    }

    private static func run(client: String, executable: URL, arguments: [String], count: Int, scratch: URL, name: String) throws -> Row {
        let cardRun = try CardRun(scratch: scratch, name: name)
        defer { cardRun.remove() }
        var environment = cardRun.card.environment
        environment["SFX_DAEMON_TRIED"] = nil
        let triggers = try spawnRuns(executable, arguments, environment: environment, count: count, settle: 0.05)
        return row(client, ([executable.lastPathComponent] + arguments).joined(separator: " "), triggers, try cardRun.log())
    }

    private static func row(_ client: String, _ command: String, _ triggers: [UInt64], _ log: CardLog) -> Row {
        let matched = Latency.match(triggers: triggers, onsets: log.onsets)
        return Row(client: client, command: command, runs: triggers.count, matched: matched.milliseconds.count,
                   milliseconds: Distribution(matched.milliseconds))
    }

    /// Starts the program `count` times, one after the other; returns the time before each spawn.
    private static func spawnRuns(_ executable: URL, _ arguments: [String], environment: [String: String],
                                  count: Int, settle: Double) throws -> [UInt64] {
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var triggers: [UInt64] = []
        for _ in 0..<count {
            var pid: pid_t = 0
            let before = Meter.now()
            let result = posix_spawn(&pid, executable.path, &actions, nil, argv, envp)
            guard result == 0 else { throw BenchError("cannot start \(executable.path) (\(String(cString: strerror(result)))); check it is built") }
            triggers.append(before)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            guard status == 0 else {
                throw BenchError("\(([executable.lastPathComponent] + arguments).joined(separator: " ")) failed (wait status \(status)); run it by hand to see why")
            }
            // The tock is 80 ms: let it end and leave silence before the next onset.
            Meter.sleep(seconds: settle + 0.1)
        }
        return triggers
    }
}

extension BenchReport {
    /// The exec → DAC section of the table (its own section, beside the trigger → DAC table).
    func execLines() -> [String] {
        guard !exec.isEmpty else { return [] }
        var lines = ["", "## Exec → DAC of `sfx play tock` (ms)", "",
                     "From just before posix_spawn to the tock's first frame at the card's DAC; each run a new process, one at a time; \(ExecLatency.period) × \(ExecLatency.periods) frames.", "",
                     "| client | runs | matched | p50 | p95 | max | p50 ÷ aplay |", "|---|---:|---:|---:|---:|---:|---:|"]
        let aplay = exec.first { $0.client == "aplay" }?.milliseconds.p50
        for row in exec {
            let versus = aplay.map { format(row.milliseconds.p50 / $0, digits: 2) } ?? ""
            lines.append("| \(row.client) | \(row.runs) | \(row.matched) | \(format(row.milliseconds.p50)) | \(format(row.milliseconds.p95)) | \(format(row.milliseconds.max)) | \(versus) |")
        }
        lines += ["", "Commands: " + exec.map { "`\($0.command)`" }.joined(separator: "; ") + "."]
        return lines
    }
}
