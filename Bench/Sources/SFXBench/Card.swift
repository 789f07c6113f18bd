import Foundation
import SFXCardSupport

/// One measurement on a fresh virtual card: every client gets a card of its own, so the card's
/// event log holds that client's streams alone.
struct CardRun {
    let card: VirtualCard
    /// How the cards' playback pointer moves (`--pointer`): per period (the card's default, as
    /// on hardware with period interrupts) or frame by frame (as an HDA card's DMA position).
    /// Set once from the options, before any run.
    nonisolated(unsafe) static var pointer: VirtualCard.PointerGranularity = .period

    /// A fresh card in `scratch/name`. CPU measurements pass `record: false`: the card's WAV
    /// writes are disk I/O whose cost varies from window to window and would drown the mixing.
    init(scratch: URL, name: String, record: Bool = true) throws {
        let directory = scratch.appending(path: name, directoryHint: .isDirectory)
        try? FileManager.default.removeItem(at: directory)
        card = try VirtualCard(directory: directory, record: record, pointer: Self.pointer)
    }

    /// What the card logged: the client's last playback configuration, its onsets and its
    /// underruns. Read it after the client has closed the device (the plugin flushes at close).
    func log() throws -> CardLog {
        var log = CardLog()
        for event in try card.events() {
            switch event.kind {
            case .hwParams(.playback, let parameters): log.hardware = parameters
            case .onset(_, let dac, _): log.onsets.append(dac)
            case .xrun(.playback, .underrun, _): log.xruns += 1
            default: break
            }
        }
        return log
    }

    /// Runs a C client against the card and waits for it; returns what it wrote to its --out file.
    func runClient(_ executable: URL, _ arguments: [String], environment extra: [String: String] = [:]) throws -> String {
        let out = card.directory.appending(path: "client.out")
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--out", out.path, "--device", card.pcmName] + arguments
        process.environment = card.environment.merging(extra) { $1 }
        process.currentDirectoryURL = card.directory
        do {
            try process.run()
        } catch {
            throw BenchError("cannot start \(executable.path) (\(error.localizedDescription)); rebuild the C clients with Bench/run")
        }
        process.waitUntilExit()
        guard process.terminationStatus == 0, let text = try? String(contentsOf: out, encoding: .utf8) else {
            throw BenchError("\(executable.lastPathComponent) \(arguments.joined(separator: " ")) failed (status \(process.terminationStatus)); see its message above")
        }
        return text
    }

    func remove() { try? card.remove() }
}

/// The part of a card's event log the benchmark reads.
struct CardLog {
    var hardware: CardEvent.HardwareParameters?
    /// DAC times of the onsets, in order.
    var onsets: [UInt64] = []
    var xruns = 0

    /// "period 128 × 3 = 384" as the card saw it.
    var setting: Setting? { hardware.map { Setting(period: $0.periodFrames, buffer: $0.bufferFrames, format: $0.format, access: $0.access) } }
}

/// A client's negotiated period and buffer, as the card's hw_params event gave them.
struct Setting: Codable, Equatable {
    var period: Int
    var buffer: Int
    var format: String
    var access: String

    var text: String { "\(period)/\(buffer)" }
}

/// Process-wide measurements: CPU time, resident memory, the clock.
enum Meter {
    /// CPU seconds (user + system) of every thread of this process so far.
    static func processCPU() -> Double { cpu(RUSAGE_SELF.rawValue) }
    /// CPU seconds of this process's thread `tid` so far (its schedstat: nanoseconds on a CPU),
    /// or nil when it is gone.
    static func threadCPU(tid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/self/task/\(tid)/schedstat", encoding: .utf8),
              let first = text.split(separator: " ").first, let nanoseconds = Double(first) else { return nil }
        return nanoseconds / 1e9
    }

    /// CPU seconds and wake-ups (voluntary context switches) so far of each thread of this
    /// process, by thread id, with its name (comm).
    static func threadTimes() -> [Int32: ThreadTime] {
        var times: [Int32: ThreadTime] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [] {
            guard let tid = Int32(entry), let seconds = threadCPU(tid: tid) else { continue }
            let name = (try? String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8)) ?? "?"
            let status = (try? String(contentsOfFile: "/proc/self/task/\(tid)/status", encoding: .utf8)) ?? ""
            let switches = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
                .flatMap { Int($0.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") } ?? 0
            times[tid] = ThreadTime(name: name.trimmingCharacters(in: .whitespacesAndNewlines), seconds: seconds, wakeUps: switches)
        }
        return times
    }

    struct ThreadTime {
        var name: String
        var seconds: Double
        var wakeUps: Int
    }

    /// Each thread name's share of a core and wake-ups a second between two `threadTimes()`
    /// taken `seconds` apart (threads of the same name summed; a thread that started in between
    /// counts from 0).
    static func threadShares(from before: [Int32: ThreadTime], to after: [Int32: ThreadTime],
                             seconds: Double) -> [String: ThreadShare] {
        var shares: [String: ThreadShare] = [:]
        for (tid, now) in after {
            let then = before[tid]
            shares[now.name, default: ThreadShare()].coreShare += (now.seconds - (then?.seconds ?? 0)) / seconds
            shares[now.name, default: ThreadShare()].wakeUpsPerSecond += Double(now.wakeUps - (then?.wakeUps ?? 0)) / seconds
        }
        return shares
    }

    /// CPU seconds of the calling thread so far.
    static func threadCPU() -> Double { cpu(1) }  // RUSAGE_THREAD, which Glibc's module leaves out

    private static func cpu(_ who: Int32) -> Double {
        var usage = rusage()
        getrusage(who, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6
    }

    /// Resident set size in bytes, from /proc/self/statm.
    static func residentBytes() -> Int {
        let fields = ((try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? "").split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }

    static func now() -> UInt64 { VirtualCard.monotonicNanoseconds() }

    /// Sleeps until CLOCK_MONOTONIC reaches `nanoseconds`.
    static func sleep(until nanoseconds: UInt64) {
        var at = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nil) == EINTR {}
    }

    static func sleep(seconds: Double) { sleep(until: now() + UInt64(seconds * 1e9)) }
}
