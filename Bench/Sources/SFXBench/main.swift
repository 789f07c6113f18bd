import Foundation

// sfx-bench: sfx's latency, mixing cost, preload cost and xruns under load beside OpenAL Soft,
// SDL_mixer and a raw-ALSA floor client, all on sfx's virtual sound card. Run it through
// Bench/run, which installs the peers, builds everything and passes --probes; see Bench/README.md.

/// Prints a stage's name as it starts, so a long run shows where it is.
func stage(_ name: String) {
    FileHandle.standardError.write(Data("sfx-bench: \(name)\n".utf8))
}

func runBenchmark(_ options: BenchOptions) throws -> BenchReport {
    let scratch = FileManager.default.temporaryDirectory.appending(path: "sfx-bench-\(getpid())", directoryHint: .isDirectory)
    defer { try? FileManager.default.removeItem(at: scratch) }
    var report = BenchReport(machine: .current(command: options.command), quick: options.quick)

    stage("preload of \(BenchOptions.cueCount) cues")
    report.preload = try Cost.preload(count: BenchOptions.cueCount, scratch: scratch)

    for period in BenchOptions.periods {
        stage("latency at period \(period): sfx and the floor")
        report.latency.append(try Latency.sfx(period: period, count: options.triggers, scratch: scratch, name: "sfx-\(period)"))
        report.latency.append(try Latency.client(.floor, period: period, count: options.triggers, label: "period \(period)",
                                                 options: options, scratch: scratch, name: "floor-\(period)"))
    }
    stage("sfx's smallest stable setting below three periods of 32")
    if let smallest = try Latency.sfxSmallestStable(options: options, scratch: scratch) {
        report.latency.append(smallest)
    }
    for peer in [Peer.openAL, .sdlMixer] {
        stage("latency of \(peer.displayName) at its default and its smallest stable period")
        report.latency.append(try Latency.client(peer, period: nil, count: options.triggers, label: "default",
                                                 options: options, scratch: scratch, name: "\(peer.executable)-default"))
        let smallest = try Latency.peerSmallestStable(peer, options: options, scratch: scratch)
        report.smallestStablePeriod[peer.displayName] = smallest.requestedPeriod
        report.latency.append(smallest)
    }

    stage("CPU of the floor playing silence: the card's own cost")
    report.cpu.append(try Cost.clientCPU(.floor, voices: 1, options: options, scratch: scratch))
    // Every voice count once, then the two the per-voice goal reads (K = 1 and 256) again, in
    // turn, so that each of those figures is a median of `cpuRepeats` windows.
    let rounds = [BenchOptions.voiceCounts] + Array(repeating: BenchOptions.marginalCounts, count: options.cpuRepeats - 1)
    for (round, counts) in rounds.enumerated() {
        for voices in counts {
            stage("CPU with \(voices) voices\(round > 0 ? ", again (\(round + 1) of \(options.cpuRepeats))" : "")")
            report.cpu.append(try Cost.sfxCPU(voices: voices, options: options, scratch: scratch))
            for peer in [Peer.openAL, .sdlMixer] {
                report.cpu.append(try Cost.clientCPU(peer, voices: voices, options: options, scratch: scratch))
            }
        }
    }
    stage("offline render speed")
    report.offlineVoices = 256
    report.offlineAudioSecondsPerCPUSecond = try Cost.offlineSpeed(voices: report.offlineVoices, options: options)

    stage("xruns with both cores loaded, \(Int(options.loadSeconds)) s a client and period")
    report.underLoad = try Cost.xrunsUnderLoad(options: options, scratch: scratch)

    report.judge()
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
    let options = try BenchOptions(arguments: CommandLine.arguments)
    if options.latencyRounds > 0 {
        try runLatencyRounds(options)
        exit(0)
    }
    if options.loadRounds > 0 {
        try runLoadRounds(options)
        exit(0)
    }
    let report = try runBenchmark(options)
    let table = report.markdown()
    print(table, terminator: "")
    try FileManager.default.createDirectory(at: options.results, withIntermediateDirectories: true)
    try report.json().write(to: options.results.appending(path: "latest.json"))
    try Data(table.utf8).write(to: options.results.appending(path: "latest.md"))
} catch {
    FileHandle.standardError.write(Data("sfx-bench: \(error)\n".utf8))
    exit(1)
}
