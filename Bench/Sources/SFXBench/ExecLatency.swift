import Foundation
import Glibc
import SFXCardSupport

/// Exec → DAC: how long after a shell starts `sfx play tock` the tock's first frame reaches the
/// DAC, with the daemon (`sfx serve` already running; the client is the `sfx` front, a small C
/// program), without it (the Swift program opens the card itself), and for `aplay` playing the
/// same file. The time is taken just before posix_spawn; the DAC time is the card's onset.
/// Every run is a fresh process (cold start, warm page cache), one at a time, with silence
/// between them so that each onset stands alone. All three at 128 × 3 frames.
///
/// The three take turns (daemon, no daemon, aplay, daemon, …), each on a card of its own: the
/// machine's load drifts over a minute (here, other builds on the same two cores), and runs in
/// three blocks put the drift between the rows, which are compared as ratios.
///
/// After them, each client runs again under `/usr/bin/time` for its peak resident memory
/// ("Maximum resident set size" of `time -v`, the kernel's ru_maxrss). Not in the timed runs:
/// time's own fork adds to the exec; and not from this process: a child spawned by a large
/// process and exec'd inherits that process's high-water mark in ru_maxrss (Linux keeps the
/// larger of the old and new images), where time's is a fraction of an MB. The daemon's
/// memory while it waits idle is its `VmRSS` in /proc, read before the runs and after.
///
/// Every client loads the card's plugin when it opens the card, inside the time measured, as a
/// client of a real card loads nothing beyond alsa-lib's `hw`. So the plugin is C and links
/// alsa-lib and the C library alone (PluginLinkTests): when it linked the Swift runtime,
/// libsndfile, libsoxr and libstdc++, it doubled aplay's time (5.1 ms p50 here, against an
/// independent card's 1.5–1.7 ms) and added well under 1 ms to sfx, which loads most of them anyway.
enum ExecLatency {
    struct Row: Codable {
        var client: String
        var command: String
        var runs: Int
        var matched: Int
        var milliseconds: Distribution
        /// Peak resident memory of each run, MB (10⁶ bytes); nil in runs saved before it.
        var peakMegabytes: Distribution?
    }

    /// `sfx serve`'s resident memory while idle on the card, MB: after it started (its sounds
    /// loaded, no client yet) and after every run of the front was served.
    struct Serve: Codable {
        var startedMegabytes: Double
        var afterRunsMegabytes: Double
    }

    static let period = 128
    static let periods = 3

    /// One client: what it runs, on which card, and the times just before each of its spawns.
    private final class Client {
        let name: String
        let command: String
        let executable: URL
        let card: CardRun
        let arguments: [String]
        let environment: [String: String]
        let argv: [UnsafeMutablePointer<CChar>?]
        let envp: [UnsafeMutablePointer<CChar>?]
        var triggers: [UInt64] = []
        var peaks: [Double] = []

        init(name: String, command: String? = nil, executable: URL, arguments: [String], environment: [String: String], card: CardRun) {
            self.name = name
            self.command = command ?? ([executable.lastPathComponent] + arguments).joined(separator: " ")
            self.executable = executable
            self.card = card
            self.arguments = arguments
            self.environment = environment
            argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
            envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        }

        deinit {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }

        var row: Row {
            get throws {
                let matched = Latency.match(triggers: triggers, onsets: try card.log().onsets)
                return Row(client: name, command: command, runs: triggers.count, matched: matched.milliseconds.count,
                           milliseconds: Distribution(matched.milliseconds), peakMegabytes: Distribution(peaks))
            }
        }
    }

    /// `against`: another build of the program (another checkout's `.build/release/sfx`),
    /// measured without the daemon beside this one, taking turns with the rest: a before/after
    /// comparison in one run (`sfx-bench --exec N --against PATH`).
    static func measure(count: Int, scratch: URL, against: URL? = nil) throws -> [Row] {
        try measureWithServe(count: count, scratch: scratch, against: against).rows
    }

    static func measureWithServe(count: Int, scratch: URL, against: URL? = nil) throws -> (rows: [Row], serve: Serve?) {
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

        // The daemon on its own card, and the front as its client.
        let daemonCard = try CardRun(scratch: scratch, name: "exec-daemon")
        defer { daemonCard.remove() }
        let runtime = try CardDirectory.makeTemporary(prefix: "sfx-bench-runtime-")
        defer { try? FileManager.default.removeItem(at: runtime) }
        var daemonEnvironment = daemonCard.card.environment
        daemonEnvironment["XDG_RUNTIME_DIR"] = runtime.path
        daemonEnvironment["SFX_DAEMON_TRIED"] = nil
        daemonEnvironment["SFX_SOCKET"] = nil
        let daemon = try startDaemon(program: program, setting: setting, environment: daemonEnvironment, runtime: runtime)
        let servedIdle = residentMegabytes(of: daemon.processIdentifier)
        defer {
            daemon.terminate()
            daemon.waitUntilExit()
        }
        let programCard = try CardRun(scratch: scratch, name: "exec-nodaemon")
        defer { programCard.remove() }
        let aplayCard = try CardRun(scratch: scratch, name: "exec-aplay")
        defer { aplayCard.remove() }
        func plain(_ card: CardRun) -> [String: String] {
            var environment = card.card.environment
            environment["SFX_DAEMON_TRIED"] = nil
            return environment
        }
        if let against, !FileManager.default.isExecutableFile(atPath: against.path) {
            throw BenchError("\(against.path) is not an executable; give --against another build's sfx (its .build/release/sfx)")
        }
        let againstCard = try against.map { _ in try CardRun(scratch: scratch, name: "exec-against") }
        defer { againstCard?.remove() }
        var clients = [
            Client(name: "sfx play tock, daemon", command: "sfx play tock (the front, with `sfx serve` running)",
                   executable: front, arguments: ["play", "tock"], environment: daemonEnvironment, card: daemonCard),
            Client(name: "sfx play tock, no daemon", executable: program, arguments: ["play", "--no-daemon"] + setting + ["tock"],
                   environment: plain(programCard), card: programCard),
            Client(name: "aplay", executable: URL(filePath: "/usr/bin/aplay"),
                   arguments: ["-q", "-D", "sfxcard", "--period-size=\(period)", "--buffer-size=\(period * periods)", tock.path],
                   environment: plain(aplayCard), card: aplayCard),
        ]
        if let against, let againstCard {
            clients.insert(Client(name: "sfx play tock, no daemon, \(against.path)", executable: against,
                                  arguments: ["play", "--no-daemon"] + setting + ["tock"],
                                  environment: plain(againstCard), card: againstCard), at: 2)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        for _ in 0..<count {
            for client in clients {
                client.triggers.append(try spawn(client, actions: &actions))
                // The tock is 80 ms: let it end and leave silence before the next onset; with
                // three cards in turn, the daemon has closed its device (100 ms of silence) by
                // its next run, as between a shell's occasional plays.
                Meter.sleep(seconds: 0.15)
            }
        }
        for _ in 0..<max(3, count / 3) {
            for client in clients {
                client.peaks.append(try peakMegabytes(client))
                Meter.sleep(seconds: 0.15)
            }
        }
        Meter.sleep(seconds: 0.5)
        let servedAfter = residentMegabytes(of: daemon.processIdentifier)
        daemon.terminate()
        daemon.waitUntilExit()
        let serve = servedIdle.flatMap { idle in servedAfter.map { Serve(startedMegabytes: idle, afterRunsMegabytes: $0) } }
        return (try clients.map { try $0.row }, serve)
    }

    /// A process's resident memory now (`VmRSS` in /proc/PID/status), MB.
    static func residentMegabytes(of pid: Int32) -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) }) else { return nil }
        return kilobytes * 1024 / 1e6
    }

    /// `sfx serve` on its card; returns once its socket is there.
    private static func startDaemon(program: URL, setting: [String], environment: [String: String], runtime: URL) throws -> Process {
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
        return daemon
    }

    /// One run of `client` under /usr/bin/time: its peak resident memory, MB.
    private static func peakMegabytes(_ client: Client) throws -> Double {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/time") else {
            throw BenchError("/usr/bin/time is missing; install Debian's time package (Bench/run does)")
        }
        let output = FileManager.default.temporaryDirectory.appending(path: "sfx-bench-time-\(getpid())")
        defer { try? FileManager.default.removeItem(at: output) }
        let time = Process()
        time.executableURL = URL(filePath: "/usr/bin/time")
        time.arguments = ["-f", "%M", "-o", output.path, client.executable.path] + client.arguments
        time.environment = client.environment
        time.standardOutput = FileHandle.nullDevice
        time.standardError = FileHandle.nullDevice
        try time.run()
        time.waitUntilExit()
        guard time.terminationStatus == 0, let text = try? String(contentsOf: output, encoding: .utf8),
              let kilobytes = Double(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BenchError("/usr/bin/time \(client.command) failed (\(time.terminationStatus)); run it by hand to see why")
        }
        return kilobytes * 1024 / 1e6
    }

    /// Starts one run of `client` and waits for it; returns the time just before the spawn.
    private static func spawn(_ client: Client, actions: inout posix_spawn_file_actions_t) throws -> UInt64 {
        var pid: pid_t = 0
        let before = Meter.now()
        let result = posix_spawn(&pid, client.executable.path, &actions, nil, client.argv, client.envp)
        guard result == 0 else { throw BenchError("cannot start \(client.executable.path) (\(String(cString: strerror(result)))); check it is built") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard status == 0 else {
            throw BenchError("\(client.command) failed (wait status \(status)); run it by hand to see why")
        }
        return before
    }
}

extension BenchReport {
    /// The exec → DAC section of the table (its own section, beside the trigger → DAC table).
    func execLines() -> [String] {
        guard !exec.isEmpty else { return [] }
        var lines = ["", "## Exec → DAC of `sfx play tock` (ms)", "",
                     "From just before posix_spawn to the tock's first frame at the card's DAC; each run a new process, one at a time; \(ExecLatency.period) × \(ExecLatency.periods) frames.", "",
                     "| client | runs | matched | p50 | p95 | max | p50 ÷ aplay | p95 ÷ aplay | peak RSS MB (median) | ÷ aplay |",
                     "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        let aplay = exec.first { $0.client == "aplay" }
        for row in exec {
            let versus = aplay.map { format(row.milliseconds.p50 / $0.milliseconds.p50, digits: 2) } ?? ""
            let versus95 = aplay.map { format(row.milliseconds.p95 / $0.milliseconds.p95, digits: 2) } ?? ""
            let peak = row.peakMegabytes.map { format($0.p50, digits: 1) } ?? ""
            let peakVersus = row.peakMegabytes.flatMap { own in aplay?.peakMegabytes.map { format(own.p50 / $0.p50, digits: 2) } } ?? ""
            lines.append("| \(row.client) | \(row.runs) | \(row.matched) | \(format(row.milliseconds.p50)) | \(format(row.milliseconds.p95)) | \(format(row.milliseconds.max)) | \(versus) | \(versus95) | \(peak) | \(peakVersus) |")
        }
        lines += ["", "Commands: " + exec.map { "`\($0.command)`" }.joined(separator: "; ") + "."]
        return lines
    }
}
