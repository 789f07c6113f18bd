import Foundation
import XCTest
import SFXMedia

/// Inputs made to hurt: `sfx` must answer each in bounded memory, at once, and in one line of
/// its own. The program runs in a child process (spawned with raw argv bytes, so names that are
/// not UTF-8 reach it intact) under a watchdog, so a regression fails instead of hanging.
final class HostileInputTests: CommandTestCase {
    struct Outcome {
        let status: Int32
        let stdout: String
        let stderr: String
        /// The child's peak resident set in kilobytes: the largest VmHWM of /proc/PID/status read
        /// while it ran. (wait4's ru_maxrss would also count this test process's own resident
        /// set, which posix_spawn's vfork-style child shares until it execs: after a long run
        /// of other tests that alone passes any bound.)
        let peakKilobytes: Int
        let timedOut: Bool
    }

    func spawn(_ arguments: [[UInt8]], timeout: Double = 30, environment extra: [String: String?] = [:]) throws -> Outcome {
        let environment = self.environment(extra)
        let outPath = scratch.appending(path: "stdout").path, errPath = scratch.appending(path: "stderr").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv: [UnsafeMutablePointer<CChar>?] = ([Array(Self.program.path.utf8)] + arguments).map { bytes in
            (bytes + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { strdup($0.baseAddress!) } }
        } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, Self.program.path, &actions, nil, argv, envp)
        guard spawned == 0 else { throw ProgramMissing(description: "posix_spawn: \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        var usage = rusage()
        var timedOut = false
        var peak = 0
        let deadline = Date().addingTimeInterval(timeout)
        while wait4(pid, &status, WNOHANG, &usage) == 0 {
            // VmHWM only grows: the last reading before the exit is the peak, to within 2 ms.
            peak = max(peak, Self.highWaterKilobytes(pid))
            if Date() > deadline {
                timedOut = true
                kill(pid, SIGKILL)
                _ = wait4(pid, &status, 0, &usage)
                break
            }
            usleep(2_000)
        }
        let exited = (status & 0x7F) == 0
        return Outcome(status: exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F),
                       stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
                       stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "",
                       peakKilobytes: peak, timedOut: timedOut)
    }

    /// VmHWM of a running process, in kilobytes (0 once it has exited).
    static func highWaterKilobytes(_ pid: pid_t) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    func spawn(_ arguments: String..., timeout: Double = 30, environment: [String: String?] = [:]) throws -> Outcome {
        try spawn(arguments.map { Array($0.utf8) }, timeout: timeout, environment: environment)
    }

    /// Runs sox to make a test file; sox is one of the packages the set-up installs.
    func sox(_ arguments: String...) throws {
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/sox")
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "sox \(arguments)")
    }

    /// Issue 9, item 3: a small file whose raw decode is huge (many channels at a high rate)
    /// must not make sfx hold the raw decode. The bound, 100 MB peak resident, is the program
    /// (about 30 MB) plus the 6 s and 10 s cues and the mix (under 10 MB) with ample room; the
    /// raw decodes alone are 295 MB and 210 MB (before decoding in blocks: 551 MB and 399 MB).
    func testSmallFilesWithHugeDecodesLoadInBoundedMemory() throws {
        let ogg = scratch.appending(path: "64ch-192k.ogg").path
        let flac = scratch.appending(path: "8ch-655k.flac").path
        try sox("-D", "-n", "-r", "192000", "-c", "64", ogg, "trim", "0", "6")
        try sox("-D", "-n", "-r", "655000", "-c", "8", "-b", "16", flac, "trim", "0", "10")
        for (file, seconds) in [(ogg, 6), (flac, 10)] {
            let raw = seconds * (file == ogg ? 64 * 192_000 : 8 * 655_000) * 4
            let output = scratch.appending(path: "out.wav").path
            let run = try spawn("render", file, "-o", output, timeout: 120)
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertTrue(run.stdout.contains("\(seconds * 48_000) frames"), run.stdout)
            XCTAssertGreaterThan(run.peakKilobytes, 10_000, "\(file): the peak was measured")
            XCTAssertLessThan(run.peakKilobytes, 100_000, "\(file): peak \(run.peakKilobytes) KB, raw decode \(raw / 1000) KB")
        }
    }

    /// Issue 9, item 5a: a FIFO is refused at once by info, render and play, never opened.
    func testFIFOIsRefusedAtOnce() throws {
        let fifo = scratch.appending(path: "pipe.wav").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        for arguments in [["info", fifo], ["render", fifo, "-o", scratch.appending(path: "o.wav").path], ["play", fifo]] {
            let run = try spawn(arguments.map { Array($0.utf8) }, timeout: 20)
            XCTAssertFalse(run.timedOut, "\(arguments) blocked on the FIFO")
            XCTAssertEqual(run.status, 1, "\(arguments): \(run.stderr)")
            // (play may first say that it plays through the virtual card.)
            XCTAssertEqual(run.stderr.split(separator: "\n").last, "sfx: \(fifo): is a FIFO, not a regular file; give the path of a regular file",
                           "\(arguments)")
        }
    }

    /// Issue 9, item 7: libmpg123's own diagnostics never reach stderr; only sfx's line does.
    func testCorruptMP3PrintsOnlySfxsOwnLine() throws {
        let mp3 = scratch.appending(path: "good.mp3")
        let sine = (0..<88_200).flatMap { i in Array(repeating: Float(0.5 * sin(Double(i) * 0.06)), count: 2) }
        try AudioFileWriter.write(sine, sampleRate: 44_100, channels: 2, to: mp3, as: .mp3)
        var bytes = [UInt8](try Data(contentsOf: mp3))
        var state: UInt64 = 3
        for _ in 0..<300 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let position = 1000 + Int((state >> 33) % UInt64(bytes.count - 1000))
            bytes[position] = UInt8(truncatingIfNeeded: state >> 17)
        }
        let damaged = scratch.appending(path: "damaged.mp3")
        try Data(bytes).write(to: damaged)
        for arguments in [["render", damaged.path, "-o", scratch.appending(path: "o.wav").path], ["info", damaged.path]] {
            let run = try spawn(arguments.map { Array($0.utf8) })
            let lines = run.stderr.split(separator: "\n")
            XCTAssertTrue(lines.allSatisfy { $0.hasPrefix("sfx: ") }, "\(arguments): \(run.stderr)")
            XCTAssertLessThanOrEqual(lines.count, 1, "\(arguments): \(run.stderr)")
            XCTAssertEqual(lines.isEmpty, run.status == 0, "\(arguments): \(run.status) \(run.stderr)")
        }
    }

    /// Issue 9, item 7: a file whose name is not UTF-8 opens; messages show the byte as \xFF.
    func testFileNamesThatAreNotUTF8Open() throws {
        let wav = scratch.appending(path: "plain.wav")
        try AudioFileWriter.write([Float](repeating: 0.25, count: 4_800), sampleRate: 48_000, channels: 1, to: wav, as: .wavPCM16)
        let raw = Array(scratch.path.utf8) + Array("/take-".utf8) + [0xFF] + Array(".wav".utf8)
        XCTAssertEqual(RawFilePath(bytes: raw).withCString { rename(wav.path, $0) }, 0)
        let info = try spawn([Array("info".utf8), raw])
        XCTAssertEqual(info.status, 0, info.stderr)
        XCTAssertTrue(info.stdout.hasPrefix(scratch.path + "/take-\\xFF.wav: audio/wav"), info.stdout)
        XCTAssertTrue(info.stdout.contains("4800 frames"), info.stdout)
        let render = try spawn([Array("render".utf8), raw, Array("-o".utf8), Array(scratch.appending(path: "o.wav").path.utf8)])
        XCTAssertEqual(render.status, 0, render.stderr)
        XCTAssertTrue(render.stdout.contains("4800 frames"), render.stdout)
    }

    /// Issue 9, item 4a: --at and the mix's 600 s end agree; a sound that would be cut is refused.
    func testRenderAtTheEndOfTheMix() throws {
        let wav = scratch.appending(path: "quarter.wav")
        try AudioFileWriter.write([Float](repeating: 0.25, count: 12_000), sampleRate: 48_000, channels: 1, to: wav, as: .wavPCM16)
        let output = scratch.appending(path: "o.wav").path
        for at in ["600", "599.9", "3600"] {
            let run = try spawn("render", wav.path, "-o", output, "--at", at)
            XCTAssertNotEqual(run.status, 0, "--at \(at): \(run.stdout)")
            XCTAssertEqual(run.stderr.split(separator: "\n").first?.hasPrefix("sfx: "), true, run.stderr)
            XCTAssertFalse(run.stdout.contains("wrote"), run.stdout)
        }
        // A 600 s mix takes about 24 s of CPU in a debug build: bounded for a loaded machine.
        let last = try spawn("render", wav.path, "-o", output, "--at", "599.75", timeout: 300)
        XCTAssertEqual(last.status, 0, last.stderr)
        XCTAssertTrue(last.stdout.contains("wrote \(output) (wav): \(599 * 48_000 + 36_000 + 12_000) frames"), last.stdout)
    }

    /// Issue 9, item 7: a settings file that is a device or a directory is named as such.
    func testSettingsFileThatIsNotAFileIsNamedSo() throws {
        let directory = scratch.appending(path: "config/sfx")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let conf = directory.appending(path: "sfx.conf").path
        XCTAssertEqual(symlink("/dev/zero", conf), 0)
        let device = try spawn("haptics", timeout: 20)
        XCTAssertFalse(device.timedOut)
        XCTAssertEqual(device.status, 1)
        XCTAssertEqual(device.stderr, "sfx: \(conf) is a character device, not a settings file; remove it or put a settings file (a text file) there\n")
        XCTAssertEqual(unlink(conf), 0)
        try FileManager.default.createDirectory(atPath: conf, withIntermediateDirectories: false)
        let folder = try spawn("haptics")
        XCTAssertEqual(folder.status, 1)
        XCTAssertEqual(folder.stderr, "sfx: \(conf) is a directory, not a settings file; remove it or put a settings file (a text file) there\n")
    }
}
