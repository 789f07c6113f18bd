import Foundation
import Glibc

/// What sfx costs on disk and in memory, beside aplay (issue 28's goals): the files as built and
/// stripped as script/deb ships them, and `sfx serve`'s resident memory while idle (measured in
/// the exec → DAC runs, ExecLatency.swift, with the peak memory of each command).
enum Footprint {
    struct File: Codable {
        var name: String
        var path: String
        /// Bytes as built, and after `strip` as script/deb strips it.
        var builtBytes: Int
        var strippedBytes: Int
    }

    struct Result: Codable {
        var files: [File]
        var serve: ExecLatency.Serve?
    }

    static func measure(serve: ExecLatency.Serve?, scratch: URL) throws -> Result {
        let bin = URL(filePath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
            .deletingLastPathComponent()
        let files: [(String, URL, [String])] = [
            ("sfx (the Swift program, libexec/sfx)", bin.appending(path: "sfx"), ["--remove-section=.comment", "--remove-section=.note"]),
            ("sfx (the front, bin/sfx)", bin.appending(path: "sfx-front"), ["--remove-section=.comment", "--remove-section=.note"]),
            ("libsfx.so.0", bin.appending(path: "libSFXC.so"), ["--remove-section=.comment", "--remove-section=.note", "--strip-unneeded"]),
            ("aplay", URL(filePath: "/usr/bin/aplay"), []),
        ]
        var result: [File] = []
        for (name, url, options) in files {
            guard let built = size(url.path) else {
                throw BenchError("\(url.path) is missing; build it (swift build -c release), as Bench/run does")
            }
            var stripped = built
            if !options.isEmpty {
                let out = scratch.appending(path: "stripped-\(url.lastPathComponent)")
                let strip = Process()
                strip.executableURL = URL(filePath: "/usr/bin/strip")
                strip.arguments = options + ["-o", out.path, url.path]
                try strip.run()
                strip.waitUntilExit()
                guard strip.terminationStatus == 0, let size = size(out.path) else {
                    throw BenchError("strip \(url.path) failed; install binutils")
                }
                stripped = size
                try? FileManager.default.removeItem(at: out)
            }
            result.append(File(name: name, path: url.path, builtBytes: built, strippedBytes: stripped))
        }
        return Result(files: result, serve: serve)
    }

    private static func size(_ path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }
}

extension BenchReport {
    func footprintLines() -> [String] {
        guard let footprint else { return [] }
        var lines = ["", "## Footprint", "",
                     "On disk, as built by `swift build -c release` and stripped as script/deb ships it (MB, 10⁶ bytes); peak memory in the exec → DAC table above.", "",
                     "| file | as built | stripped |", "|---|---:|---:|"]
        for file in footprint.files {
            lines.append("| \(file.name) | \(format(Double(file.builtBytes) / 1e6, digits: 2)) | \(format(Double(file.strippedBytes) / 1e6, digits: 2)) |")
        }
        if let serve = footprint.serve {
            lines += ["", "`sfx serve` idle on the card, resident: \(format(serve.startedMegabytes, digits: 1)) MB once started, \(format(serve.afterRunsMegabytes, digits: 1)) MB after serving the exec runs."]
        }
        return lines
    }

    /// Issue 28's goals for the footprint, judged on this run's figures.
    func footprintGoals() -> [Goal] {
        var goals: [Goal] = []
        if let footprint {
            let program = footprint.files.first { $0.name.hasPrefix("sfx (the Swift") }
            let front = footprint.files.first { $0.name.hasPrefix("sfx (the front") }
            if let program, let front {
                let total = Double(program.strippedBytes + front.strippedBytes) / 1e6
                goals.append(Goal(goal: "`sfx` on disk (the front and the Swift program, stripped) ≤ 15 MB",
                                  figures: "\(format(total, digits: 1)) MB", verdict: .holds(total <= 15)))
            }
            if let library = footprint.files.first(where: { $0.name == "libsfx.so.0" }) {
                let size = Double(library.strippedBytes) / 1e6
                goals.append(Goal(goal: "libsfx.so on disk (stripped) ≤ 10 MB", figures: "\(format(size, digits: 1)) MB", verdict: .holds(size <= 10)))
            }
            if let serve = footprint.serve {
                let worst = max(serve.startedMegabytes, serve.afterRunsMegabytes)
                goals.append(Goal(goal: "`sfx serve` idle ≤ 10 MB resident",
                                  figures: "\(format(serve.startedMegabytes, digits: 1)) MB started, \(format(serve.afterRunsMegabytes, digits: 1)) MB after the runs",
                                  verdict: .holds(worst <= 10)))
            }
        }
        if let own = exec.first(where: { $0.client == "sfx play tock, no daemon" }), let aplay = exec.first(where: { $0.client == "aplay" }) {
            if let mine = own.peakMegabytes, let theirs = aplay.peakMegabytes {
                let ratio = mine.p50 / theirs.p50
                goals.append(Goal(goal: "`sfx play --no-daemon tock` peak RSS ≤ 2× aplay's",
                                  figures: "\(format(mine.p50, digits: 1)) vs \(format(theirs.p50, digits: 1)) MB: \(format(ratio, digits: 2))×",
                                  verdict: .holds(ratio <= 2)))
            }
            let p50 = own.milliseconds.p50 / aplay.milliseconds.p50, p95 = own.milliseconds.p95 / aplay.milliseconds.p95
            goals.append(Goal(goal: "`sfx play --no-daemon tock` exec → DAC ≤ 2× aplay's p50 and ≤ 3× its p95",
                              figures: "p50 \(format(own.milliseconds.p50)) vs \(format(aplay.milliseconds.p50)) ms (\(format(p50, digits: 2))×), p95 \(format(own.milliseconds.p95)) vs \(format(aplay.milliseconds.p95)) ms (\(format(p95, digits: 2))×)",
                              verdict: .holds(p50 <= 2 && p95 <= 3)))
        }
        return goals
    }
}
