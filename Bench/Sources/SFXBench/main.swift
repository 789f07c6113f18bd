import Foundation

// sfx-bench: sfx's latency, mixing cost, preload cost and xruns under load beside OpenAL Soft,
// SDL_mixer and a raw-ALSA floor client, all on sfx's virtual sound card. Run it through
// Bench/run, which installs the peers, builds everything and passes --probes; see Bench/README.md.

let processStart = Meter.now()

/// Prints a stage's name as it starts, with the minutes since the benchmark started, so a long
/// run shows where it is and how long each stage takes.
func stage(_ name: String) {
    let minutes = Double(Meter.now() - processStart) / 60e9
    FileHandle.standardError.write(Data("sfx-bench: \(format(minutes, digits: 1)) min: \(name)\n".utf8))
}

func runBenchmark(_ options: BenchOptions) throws -> BenchReport {
    let scratch = FileManager.default.temporaryDirectory.appending(path: "sfx-bench-\(getpid())", directoryHint: .isDirectory)
    defer { try? FileManager.default.removeItem(at: scratch) }
    let start = Meter.now()
    var report = BenchReport(machine: .current(command: options.command), quick: options.quick)
    report.cardPointer = options.pointer.rawValue
    report.stableRule = "Rule, the same for every client: settings of \(BenchOptions.stablePeriods.map(String.init).joined(separator: ", ")) frames × 2 and × 3 periods, smallest buffer first; a trial of \(options.trialTriggers) triggers that is not clean drops a setting; a setting is stable after \(options.stableRuns) consecutive clean runs of \(options.triggers) triggers (no xrun, every click heard once), and dropped at its first run that is not clean. OpenAL Soft starts at 64 frames (its minimum period_size); SDL_mixer is offered 2 periods only (SDL's ALSA driver takes the fewest the device allows, and its API cannot ask for 3)."

    stage("preload of \(BenchOptions.cueCount) cues")
    report.preload = try Cost.preload(count: BenchOptions.cueCount, scratch: scratch)

    for period in BenchOptions.periods {
        stage("latency at period \(period): sfx and the floor")
        report.latency.append(try Latency.sfx(period: period, count: options.triggers, scratch: scratch, name: "sfx-\(period)"))
        report.latency.append(try Latency.client(.floor, period: period, count: options.triggers, label: "period \(period)",
                                                 options: options, scratch: scratch, name: "floor-\(period)"))
    }
    stage("latency in rewind mode at \(Latency.rewindLabel): sfx (its click plain, then positional) and the floor")
    report.latency += try Latency.rewindRows(count: options.triggers, options: options, scratch: scratch, name: "rewind", positional: true)
    stage("latency through the C API and the Python binding at \(Latency.rewindLabel), alternating")
    report.latency += try BindingLatency.rows(rounds: options.quick ? 1 : 2, count: options.triggers, options: options, scratch: scratch)
    for peer in [Peer.openAL, .sdlMixer] {
        stage("latency of \(peer.displayName) at its default")
        report.latency.append(try Latency.client(peer, period: nil, count: options.triggers, label: "default",
                                                 options: options, scratch: scratch, name: "\(peer.executable)-default"))
    }
    for client in StableClient.all {
        stage("smallest stable setting of \(client.displayName) (\(options.stableRuns) consecutive clean runs of \(options.triggers))")
        let result = try Latency.smallestStable(client, options: options, scratch: scratch)
        report.stable.append(result)
        if let row = result.row { report.latency.append(row) }
    }

    stage("exec → DAC of sfx play tock, with and without the daemon, and aplay")
    let (exec, serve) = try ExecLatency.measureWithServe(count: options.quick ? 10 : 60, scratch: scratch)
    report.exec = exec
    report.footprint = try Footprint.measure(serve: serve, scratch: scratch)

    let cpu = try Cost.cpuWindows(options: options, scratch: scratch, progress: stage)
    report.cpu = cpu.rows
    for window in 0..<options.cpuWindows {
        stage("CPU window \(window + 1) of \(options.cpuWindows): sfx in rewind mode, K=1")
        var row = try Cost.sfxCPU(voices: 1, rewind: true, options: options, scratch: scratch)
        row.window = window
        report.cpu.append(row)
    }
    report.cpuLimits = cpu.limits
    stage("sound in a game world: CPU per extra voice, sfx's Mixer and OpenAL Soft's loopback device")
    report.world = try World.measure(rounds: options.worldWindows, seconds: options.worldSeconds, probes: options.probes,
                                     scratch: scratch, progress: stage)
    report.schedule = try Schedule.measure(count: options.quick ? 5 : 50, scratch: scratch, progress: stage)
    report.events = try EventCost.measure(rounds: options.quick ? 1 : 2, count: options.triggers, scratch: scratch, progress: stage)
    stage("offline render speed")
    report.offlineVoices = 256
    report.offlineAudioSecondsPerCPUSecond = try Cost.offlineSpeed(voices: report.offlineVoices, options: options)

    stage("xruns with both cores loaded, \(Int(options.loadSeconds)) s a client and period")
    report.underLoad = try Cost.xrunsUnderLoad(options: options, scratch: scratch)

    report.analyse()
    report.machine.minutes = Double(Meter.now() - start) / 60e9
    return report
}

/// Interleaved rounds of the under-load comparison, printed as they finish.
func runLoadRounds(_ options: BenchOptions) throws {
    let scratch = FileManager.default.temporaryDirectory.appending(path: "sfx-bench-\(getpid())", directoryHint: .isDirectory)
    defer { try? FileManager.default.removeItem(at: scratch) }
    for round in 1...options.loadRounds {
        for row in try Cost.xrunsUnderLoad(options: options, scratch: scratch) {
            print("round \(round)  \(row.client)  period \(row.period)  \(Int(row.seconds)) s  xruns \(row.xruns)")
        }
    }
}

/// Interleaved rounds of rewind mode: sfx's and the floor's trigger→DAC latency at 256 × 4, then
/// the one-voice CPU of sfx in rewind mode, at its classic default and of OpenAL Soft at its
/// default, printed as they finish.
func runRewindRounds(_ options: BenchOptions, latency: Bool = true) throws {
    let scratch = FileManager.default.temporaryDirectory.appending(path: "sfx-bench-\(getpid())", directoryHint: .isDirectory)
    defer { try? FileManager.default.removeItem(at: scratch) }
    func emit(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
    for round in 1...(latency ? options.rewindRounds : options.cpuRounds) {
        for row in try latency ? Latency.rewindRows(count: options.triggers, options: options, scratch: scratch, name: "rewind-\(round)",
                                                                positional: options.positional) : [] {
            let d = row.milliseconds
            emit("round \(round)  pointer \(options.pointer.rawValue)  \(row.client)  \(row.label)  p50 \(String(format: "%.3f", d.p50))  p95 \(String(format: "%.3f", d.p95))"
                 + "  p99 \(String(format: "%.3f", d.p99))  max \(String(format: "%.3f", d.max))  matched \(row.matched)/\(row.triggers)  xruns \(row.xruns)")
        }
        let cpu = [try Cost.sfxCPU(voices: 1, rewind: true, options: options, scratch: scratch),
                   try Cost.sfxCPU(voices: 1, options: options, scratch: scratch),
                   try Cost.clientCPU(.openAL, voices: 1, options: options, scratch: scratch)]
        for row in cpu {
            let thread = row.outputThreadShare.map { ", output thread \(String(format: "%.2f", $0 * 100)) %" } ?? ""
            let threads = (row.threadShares ?? [:]).filter { $0.value.coreShare >= 0.0001 }.sorted { $0.value.coreShare > $1.value.coreShare }
                .map { "\($0.key) \(String(format: "%.2f", $0.value.coreShare * 100)) % \(Int($0.value.wakeUpsPerSecond.rounded()))/s" }
                .joined(separator: ", ")
            emit("round \(round)  pointer \(options.pointer.rawValue)  \(row.client)  \(row.setting?.text ?? "?")  one voice: \(String(format: "%.2f", row.coreShare * 100)) % of a core\(thread)"
                 + (threads.isEmpty ? "" : "  [threads: \(threads) wake-ups]"))
        }
    }
}

/// Only the world windows (World.swift): their table, printed at the end.
func runWorldRounds(_ options: BenchOptions) throws {
    let scratch = FileManager.default.temporaryDirectory.appending(path: "sfx-bench-\(getpid())", directoryHint: .isDirectory)
    defer { try? FileManager.default.removeItem(at: scratch) }
    let result = try World.measure(rounds: options.worldRounds, seconds: options.worldSeconds, features: options.worldFeatures,
                                   probes: options.probes,
                                   scratch: scratch, progress: stage)
    print(World.lines(result).dropFirst().joined(separator: "\n"))
}

/// Interleaved rounds of sfx's and the floor's latency at one period, printed as they finish.
func runLatencyRounds(_ options: BenchOptions) throws {
    let scratch = FileManager.default.temporaryDirectory.appending(path: "sfx-bench-\(getpid())", directoryHint: .isDirectory)
    defer { try? FileManager.default.removeItem(at: scratch) }
    let period = options.latencyPeriod
    func line(_ round: Int, _ row: LatencyRow) -> String {
        let d = row.milliseconds
        return "round \(round)  \(row.client)  \(period)x\(BenchOptions.periodsPerBuffer)  p50 \(String(format: "%.3f", d.p50))"
            + "  p95 \(String(format: "%.3f", d.p95))  p99 \(String(format: "%.3f", d.p99))  max \(String(format: "%.3f", d.max))"
            + "  matched \(row.matched)/\(row.triggers)  xruns \(row.xruns)"
    }
    for round in 1...options.latencyRounds {
        func emit(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
        emit(line(round, try Latency.sfx(period: period, count: options.triggers, scratch: scratch, name: "sfx-\(period)-\(round)")))
        emit(line(round, try Latency.client(.floor, period: period, count: options.triggers, label: "period \(period)",
                                             options: options, scratch: scratch, name: "floor-\(period)-\(round)")))
    }
}

do {
    if CommandLine.arguments.dropFirst().first == "--burst" {
        // The real-time thread's work bound alone (Burst.swift); needs no C clients.
        let scratch = FileManager.default.temporaryDirectory.appending(path: "sfx-bench-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let result = Result { try Burst.run(scratch: scratch, lockMemory: CommandLine.arguments.contains("--lock-memory")) }
        try? FileManager.default.removeItem(at: scratch)
        try result.get()
        exit(0)
    }
    if CommandLine.arguments.dropFirst().first == "--schedule" {
        // play(at:) accuracy alone (Schedule.swift): sfx-bench --schedule [N plays a row].
        let scratch = FileManager.default.temporaryDirectory.appending(path: "sfx-bench-\(getpid())", directoryHint: .isDirectory)
        let count = CommandLine.arguments.dropFirst(2).first.flatMap { Int($0) } ?? 50
        let measured = Result { try Schedule.measure(count: count, scratch: scratch, progress: stage) }
        try? FileManager.default.removeItem(at: scratch)
        print(Schedule.lines(try measured.get()).dropFirst().joined(separator: "\n"))
        exit(0)
    }
    if CommandLine.arguments.dropFirst().first == "--events" {
        // A 6-variation sound event against a plain play alone (EventCost.swift): sfx-bench --events [ROUNDS].
        let scratch = FileManager.default.temporaryDirectory.appending(path: "sfx-bench-\(getpid())", directoryHint: .isDirectory)
        let rounds = CommandLine.arguments.dropFirst(2).first.flatMap { Int($0) } ?? 2
        let measured = Result { try EventCost.measure(rounds: rounds, count: 200, scratch: scratch, progress: stage) }
        try? FileManager.default.removeItem(at: scratch)
        print(EventCost.lines(try measured.get()).dropFirst().joined(separator: "\n"))
        exit(0)
    }
    if CommandLine.arguments.dropFirst().first == "--bindings" {
        // The C API's and the Python binding's trigger → DAC alone (Bindings.swift):
        // sfx-bench --bindings [ROUNDS] --probes DIR.
        let arguments = Array(CommandLine.arguments.dropFirst(2))
        let rounds = arguments.first.flatMap { Int($0) } ?? 2
        let options = try BenchOptions(arguments: ["sfx-bench"] + arguments.drop { Int($0) != nil }, bindingsOnly: true)
        let scratch = FileManager.default.temporaryDirectory.appending(path: "sfx-bench-\(getpid())", directoryHint: .isDirectory)
        let measured = Result { try BindingLatency.rows(rounds: rounds, count: options.triggers, options: options, scratch: scratch) }
        try? FileManager.default.removeItem(at: scratch)
        print(BindingLatency.lines(try measured.get()).joined(separator: "\n"))
        exit(0)
    }
    if CommandLine.arguments.dropFirst().first == "--exec" {
        // Exec → DAC alone (ExecLatency.swift), printed as its table section.
        let scratch = FileManager.default.temporaryDirectory.appending(path: "sfx-bench-\(getpid())", directoryHint: .isDirectory)
        // sfx-bench --exec [N] [--against PATH]: PATH, another build of sfx, is measured beside this one.
        let arguments = Array(CommandLine.arguments.dropFirst(2))
        let count = arguments.first.flatMap { Int($0) } ?? 60
        var against: URL?
        if let index = arguments.firstIndex(of: "--against") {
            guard index + 1 < arguments.count else {
                FileHandle.standardError.write(Data("sfx-bench: --against needs the path of another build's sfx\n".utf8))
                exit(2)
            }
            against = URL(filePath: arguments[index + 1])
        }
        var report = BenchReport(machine: .current(command: "sfx-bench --exec \(arguments.joined(separator: " "))"), quick: false)
        let measured = Result { () throws -> ([ExecLatency.Row], Footprint.Result) in
            let (rows, serve) = try ExecLatency.measureWithServe(count: count, scratch: scratch, against: against)
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            return (rows, try Footprint.measure(serve: serve, scratch: scratch))
        }
        try? FileManager.default.removeItem(at: scratch)
        (report.exec, report.footprint) = try measured.get()
        print((report.execLines() + report.footprintLines()).joined(separator: "\n"))
        print("")
        for goal in report.footprintGoals() { print("- \(goal.goal): \(goal.figures) — \(goal.verdict.rawValue)") }
        exit(0)
    }
    let options = try BenchOptions(arguments: CommandLine.arguments)
    CardRun.pointer = options.pointer
    if options.latencyRounds > 0 {
        try runLatencyRounds(options)
        exit(0)
    }
    if options.worldRounds > 0 {
        try runWorldRounds(options)
        exit(0)
    }
    if options.loadRounds > 0 {
        try runLoadRounds(options)
        exit(0)
    }
    if let saved = options.render {
        // A saved run read again: its fits and goals computed anew, its tables printed and written.
        var report = try JSONDecoder().decode(BenchReport.self, from: Data(contentsOf: saved))
        if report.cardPointer == nil { report.cardPointer = options.pointer.rawValue }
        report.analyse()
        let table = report.markdown()
        print(table, terminator: "")
        try report.json().write(to: saved)
        try Data(table.utf8).write(to: saved.deletingPathExtension().appendingPathExtension("md"))
        exit(0)
    }
    if options.rewindRounds > 0 || options.cpuRounds > 0 {
        try runRewindRounds(options, latency: options.rewindRounds > 0)
        exit(0)
    }
    var runs: [BenchReport] = []
    for run in 1...options.repeatCount {
        if options.repeatCount > 1 { stage("run \(run) of \(options.repeatCount)") }
        runs.append(try runBenchmark(options))
    }
    let (table, json) = runs.count == 1 ? (runs[0].markdown(), try runs[0].json())
        : (RepeatReport(runs: runs).markdown(), try RepeatReport(runs: runs).json())
    print(table, terminator: "")
    try FileManager.default.createDirectory(at: options.results, withIntermediateDirectories: true)
    try json.write(to: options.results.appending(path: "latest.json"))
    try Data(table.utf8).write(to: options.results.appending(path: "latest.md"))
} catch {
    FileHandle.standardError.write(Data("sfx-bench: \(error)\n".utf8))
    exit(1)
}
