// `sfx play` of a long file or a URL: the streamed path. On a terminal (a pseudo-terminal made by
// script(1)) it draws a progress line and takes keys, and leaves the terminal as it found it;
// not on a terminal it draws nothing.
import Foundation
import XCTest
import SFXMedia

final class PlayerCommandTests: CommandTestCase {
    /// A 35 s sine (longer than the 30 s cue limit, so it is streamed).
    func longFile() throws -> URL {
        let url = scratch.appending(path: "long.wav")
        let sox = Process()
        sox.executableURL = URL(filePath: "/usr/bin/sox")
        sox.arguments = ["-n", "-r", "48000", "-c", "1", url.path, "synth", "35", "sine", "440", "vol", "0.3"]
        try sox.run()
        sox.waitUntilExit()
        XCTAssertEqual(sox.terminationStatus, 0)
        return url
    }

    /// Runs `command` in a shell on a pseudo-terminal; `keys` are typed after `delay` seconds.
    func onTerminal(_ command: String, keys: String? = nil, delay: Double = 1.5) throws -> (status: Int32, output: String) {
        let process = Process()
        // A hang fails the test (status 124) instead of the whole run.
        process.executableURL = URL(filePath: "/usr/bin/timeout")
        process.arguments = ["-k", "5", "120", "/usr/bin/script", "-qec", command, "/dev/null"]
        process.environment = environment(["TERM": "xterm", "COLUMNS": "100"])
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        if let keys {
            Thread.sleep(forTimeInterval: delay)
            input.fileHandleForWriting.write(Data(keys.utf8))
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try? input.fileHandleForWriting.close()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    func testALongFileShowsAProgressLineOnATerminalAndRestoresTheTerminal() throws {
        let file = try longFile()
        let run = try onTerminal("'\(Self.program.path)' play '\(file.path)' --start 33; echo status=$?; stty -a")
        XCTAssertEqual(run.status, 0)
        XCTAssertTrue(run.output.contains("status=0"), run.output)
        XCTAssertTrue(run.output.contains("▶ 0:33 / 0:35 ["), "the progress line: \(run.output)")
        XCTAssertTrue(run.output.contains("\r"), "redrawn in place")
        XCTAssertTrue(run.output.contains(" icanon") && run.output.contains(" echo "), "the terminal is back in canonical mode with echo: \(run.output)")
    }

    func testQQuitsAndSpacePauses() throws {
        let file = try longFile()
        let started = Date()
        let run = try onTerminal("'\(Self.program.path)' play '\(file.path)'; echo status=$?; stty -a", keys: " q", delay: 2)
        XCTAssertTrue(run.output.contains("status=0"), run.output)
        XCTAssertLessThan(Date().timeIntervalSince(started), 20, "q ends the 35 s play")
        XCTAssertTrue(run.output.contains("‖ "), "space paused it: \(run.output)")
        XCTAssertTrue(run.output.contains(" icanon") && run.output.contains(" echo "), run.output)
    }

    func testNotOnATerminalNothingIsDrawn() throws {
        let file = try longFile()
        let run = try sfx("play", file.path, "--start", "34", "--then", "tock", "--speed", "2")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertFalse(run.stderr.contains("\r") || run.stderr.contains("▶"), run.stderr)
        XCTAssertFalse(run.stdout.contains("\r") || run.stdout.contains("▶"), run.stdout)
    }

    func testAURLThatFailsIsOneLineAndExitCode1() throws {
        let run = try sfx("play", "http://sfx-test.invalid/message.mp3")
        XCTAssertEqual(run.status, 1)
        let lines = run.stderr.split(separator: "\n").filter { !$0.contains("virtual card") }
        XCTAssertEqual(lines.count, 1, run.stderr)
        XCTAssertTrue(lines.first?.contains("not found (DNS)") == true, run.stderr)
    }

    func testStartNeedsOneFile() throws {
        let run = try sfx("play", "tock", "--start", "3")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.contains("--start needs one sound file"), run.stderr)
    }
}

/// `sfx play --playlist` and `--loop-start/--loop-end`: what the virtual card recorded, frame
/// for frame, against the files' levels.
final class MusicCommandTests: CommandTestCase {
    /// A mono 16-bit WAV of `levels`, each held for 4,800 frames (0.1 s).
    func steps(_ name: String, _ levels: [Float]) throws -> URL {
        let url = scratch.appending(path: name)
        let samples = levels.flatMap { [Float](repeating: $0, count: 4_800) }
        try AudioFileWriter.write(samples, sampleRate: 48_000, channels: 1, to: url, as: .wavPCM16)
        return url
    }

    /// The left channel of the recording `run` names, from its first sound on.
    func heard(_ run: Run) throws -> [Float] {
        let line = try XCTUnwrap(run.stdout.split(separator: "\n").first { $0.contains("recorded what it played to") }, run.stdout)
        let cue = try AudioDecoder(format: .standard).decode(contentsOf: URL(filePath: String(line.split(separator: " ").last!)))
        let left = withExtendedLifetime(cue) { stride(from: 0, to: cue.samples.count, by: 2).map { cue.samples[$0] } }
        guard let onset = left.firstIndex(where: { abs($0) > 1e-6 }) else { return [] }
        return Array(left[onset...])
    }

    /// `expected` levels, 4,800 frames each, from frame 20 (past the start fade), then silence.
    func check(_ heard: [Float], _ expected: [Float], file: StaticString = #filePath, line: UInt = #line) {
        let want = expected.flatMap { [Float](repeating: $0, count: 4_800) }
        XCTAssertGreaterThanOrEqual(heard.count, want.count, file: file, line: line)
        for k in 20..<min(heard.count, want.count) where abs(heard[k] - want[k]) > 1e-6 {
            return XCTFail("frame \(k): \(heard[k]) instead of \(want[k])", file: file, line: line)
        }
        XCTAssertTrue(heard[min(heard.count, want.count)...].allSatisfy { abs($0) < 1e-6 }, "silence after", file: file, line: line)
    }

    func testPlaylistPlaysTheFilesBackToBack() throws {
        let a = try steps("a.wav", [0.25, 0.125]), b = try steps("b.wav", [0.5])
        let run = try sfx("play", a.path, b.path, "--playlist")
        XCTAssertEqual(run.status, 0, run.stderr)
        check(try heard(run), [0.25, 0.125, 0.5])
        let bad = try sfx("play", a.path, "tock", "--playlist")
        XCTAssertEqual(bad.status, 64)
        XCTAssertTrue(bad.stderr.contains("--playlist plays sound files"), bad.stderr)
    }

    func testLoopStartAndEndLoopBetweenThem() throws {
        let file = try steps("music.wav", [0.125, 0.25, 0.375])
        let run = try sfx("play", file.path, "--loop-start", "0.1", "--loop-end", "0.2", "--loops", "2")
        XCTAssertEqual(run.status, 0, run.stderr)
        check(try heard(run), [0.125, 0.25, 0.25, 0.25, 0.375])
        let bad = try sfx("play", "tock", "--loop-start", "1")
        XCTAssertEqual(bad.status, 64)
        XCTAssertTrue(bad.stderr.contains("--loop-start and --loop-end need one sound file"), bad.stderr)
    }

    /// A short Ogg file tagged LOOPSTART/LOOPLENGTH, played with --loops, is streamed and loops
    /// at its tags: 0.3 s with a 0.1 s loop played twice lasts 0.4 s.
    func testAFileTaggedWithLoopPointsLoopsThereWithLoops() throws {
        let wav = try steps("tagged.wav", [0.125, 0.25, 0.375])
        let ogg = scratch.appending(path: "tagged.ogg")
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(filePath: "/usr/bin/ffmpeg")
        ffmpeg.arguments = ["-loglevel", "error", "-y", "-i", wav.path, "-c:a", "libvorbis", "-metadata", "LOOPSTART=4800",
                            "-metadata", "LOOPLENGTH=4800", ogg.path]
        try ffmpeg.run()
        ffmpeg.waitUntilExit()
        XCTAssertEqual(ffmpeg.terminationStatus, 0)
        let run = try sfx("play", ogg.path, "--loops", "1")
        XCTAssertEqual(run.status, 0, run.stderr)
        let heard = try heard(run)
        let last = try XCTUnwrap(heard.lastIndex { abs($0) > 1e-4 })
        XCTAssertEqual(last + 1, 4 * 4_800, "intro, the loop twice, the tail")
        XCTAssertEqual(heard[4_800 + 2_400], heard[2 * 4_800 + 2_400], accuracy: 1e-6, "the loop's frames again")
    }

    func testLoopOptionsNeedOneFile() throws {
        let bad = try sfx("play", "tock", "--loop-start", "1")
        XCTAssertEqual(bad.status, 64)
        XCTAssertTrue(bad.stderr.contains("--loop-start and --loop-end need one sound file"), bad.stderr)
    }
}
