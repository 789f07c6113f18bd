// `sfx record`, `sfx recordings` and `sfx meter` as a user runs them, on the virtual card:
// plain progress lines, Enter, the minimum, SIGKILL mid-recording, a file-size limit, device errors.
import Foundation
import SFXTestSupport
import Glibc
import XCTest
import SFX
import SFXCardSupport

final class RecordCommandTests: XCTestCase {
    var card: VirtualCard!
    var source: [Float] = []

    override func setUpWithError() throws {
        source = Signal.music(seconds: 20, channels: 1)
        card = try cardCapturing(source, channels: 1)
    }

    override func tearDownWithError() throws {
        try card?.remove()
    }

    /// Not on a terminal: one plain line a second with the level, then the saved file's line.
    func testNotOnATerminalItPrintsOneLineASecondAndSaves() throws {
        let file = card.directory.appending(path: "memo.wav")
        let run = try Sfx(card).run(["record", "-o", file.path, "--max", "2.5"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.hasPrefix("sfx: recording to \(file.path) (wav, 48000 Hz, 1 ch); Enter or Ctrl-C stops\n"), run.stderr)
        let lines = run.stderr.split(separator: "\n").filter { $0.contains("dBFS peak") }
        XCTAssertTrue((2...4).contains(lines.count), run.stderr)
        XCTAssertTrue(lines.allSatisfy { $0.range(of: #"^● \d\d:\d\d\.\d  1 -?\d+\.\d dBFS peak -?\d+\.\d$"#, options: .regularExpression) != nil }, run.stderr)
        XCTAssertTrue(run.stdout.hasPrefix("saved \(file.path) (2.50 s, wav, "), run.stdout)
        assertSamplesEqual(try Decoded.soundFile(file).samples, Array(source.prefix(120_000)))
    }

    /// On a terminal (a pseudo-terminal from script(1)): a bar per channel with the held peak's
    /// mark, redrawn in place under a count-up timer.
    func testOnATerminalItDrawsABarPerChannelWithAPeakMark() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { throw XCTSkip("script(1) is missing") }
        let file = card.directory.appending(path: "tty.wav")
        let command = "\(Sfx.program.path) record --max 1.3 --channels 2 -o \(file.path)"
        let run = try Sfx(card).run(["-qc", command, "/dev/null"], via: URL(filePath: "/usr/bin/script"))
        XCTAssertEqual(run.status, 0, run.stdout)
        let screen = run.stdout
        XCTAssertTrue(screen.contains("\u{1B}[3A"), "redrawn in place: \(screen.debugDescription)")
        XCTAssertTrue(screen.contains("● 00:01."), screen)
        for label in ["L [", "R ["] {
            let line = try XCTUnwrap(screen.components(separatedBy: "\r\u{1B}[K").last { $0.hasPrefix(label) }, screen)
            XCTAssertNotNil(line.range(of: #"^[LR] \[#+\.*\|\.*\] +-?\d+\.\d dB  peak +-?\d+\.\d"#, options: .regularExpression), line)
        }
        XCTAssertTrue(screen.contains("saved \(file.path) (1.30 s, wav, "), screen)
    }

    /// Enter stops and saves; under --min the file is removed and the line says why (exit 1).
    func testEnterStopsAndTheMinimumDiscards() throws {
        let file = card.directory.appending(path: "short.opus")
        let process = try Sfx(card).start(["record", "-o", file.path, "--min", "5"])
        try process.waitForStart()
        Thread.sleep(forTimeInterval: 0.5)
        process.input.fileHandleForWriting.write(Data("\n".utf8))
        let run = process.finish()
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("sfx: discarded \(file.path): "), run.stderr)
        XCTAssertTrue(run.stderr.contains("shorter than the minimum of 5.00 s"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file.path))
    }

    /// Ctrl-C (SIGINT) stops and saves, exit 0: the file is the signal from frame 0.
    func testCtrlCStopsAndSaves() throws {
        let file = card.directory.appending(path: "interrupted.flac")
        let process = try Sfx(card).start(["record", "-o", file.path])
        try process.waitForStart()
        Thread.sleep(forTimeInterval: 0.7)
        kill(process.process.processIdentifier, SIGINT)
        let run = process.finish()
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.hasPrefix("saved \(file.path) ("), run.stdout)
        let saved = try Decoded.soundFile(file)
        XCTAssertGreaterThan(saved.frames, 24_000)
        assertSamplesEqual(saved.samples, Array(source.prefix(saved.frames)))
    }

    /// SIGKILL mid-recording leaves a readable file holding all but at most the last second: a
    /// WAV whose header covers the frames written (the captured signal from frame 0, exactly),
    /// and an M4A that FFmpeg decodes up to its last fragment.
    func testSIGKILLLeavesAReadableFileMissingAtMostTheLastSecond() throws {
        for format in ["wav", "m4a"] {
            let file = card.directory.appending(path: "killed.\(format)")
            let process = try Sfx(card).start(["record", "-o", file.path])
            try process.waitForStart()
            let started = Date()
            Thread.sleep(forTimeInterval: 2.6)
            let elapsed = Date().timeIntervalSince(started)
            kill(process.process.processIdentifier, SIGKILL)
            let run = process.finish()
            XCTAssertEqual(run.reason, .uncaughtSignal)
            let decoded = try Decoded.any(file)
            let seconds = Double(decoded.frames) / 48_000
            print("\(format): killed after \(String(format: "%.3f", elapsed)) s of recording; the file holds \(String(format: "%.3f", seconds)) s")
            XCTAssertGreaterThanOrEqual(seconds, elapsed - 1.0, format)
            XCTAssertLessThanOrEqual(seconds, elapsed + 0.3, format)
            if format == "wav" {
                assertSamplesEqual(decoded.samples, Array(source.prefix(decoded.frames)))
            } else {
                let closeness = Closeness.measure(source, decoded.samples, channels: 1, start: 24_000, span: 48_000)
                XCTAssertGreaterThan(closeness.snr, 20)
            }
        }
    }

    /// A file-size limit (RLIMIT_FSIZE, as a full disk): the recording stops, the file keeps
    /// what fitted, still valid, and one line says so (exit 1).
    func testAFullDiskStopsTheRecordingAndKeepsTheFile() throws {
        let file = card.directory.appending(path: "full.wav")
        let limit = 100_000                                 // about 1 s of 16-bit mono at 48 kHz
        let run = try Sfx(card).run(["record", "-o", file.path, "--max", "5"], limitFileSize: limit)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("\(file.path): the disk is full (or the file-size limit reached): recording stopped and the "), run.stderr)
        XCTAssertTrue(run.stderr.contains(" s written so far were kept; free some space"), run.stderr)
        let saved = try Decoded.soundFile(file)
        XCTAssertGreaterThan(saved.frames, 40_000)
        XCTAssertLessThanOrEqual(saved.frames, (limit - 44) / 2)
        assertSamplesEqual(saved.samples, Array(source.prefix(saved.frames)))
    }

    /// An M4A that cannot be rewritten as a standard file when it stops (its directory made
    /// read-only while it records, so no new file can be created beside it) stays the fragmented
    /// recording, complete and readable, with one line that says so (exit 1). As root the
    /// command runs without the capabilities that override permissions (setpriv drops them from
    /// its bounding set), so that the directory's mode applies to it.
    func testAnM4AThatCannotBeRewrittenStaysFragmentedWithOneLine() throws {
        let directory = card.directory.appending(path: "locked")
        XCTAssertEqual(mkdir(directory.path, 0o755), 0)
        defer { chmod(directory.path, 0o755) }
        let file = directory.appending(path: "memo.m4a")
        let command = ["record", "-o", file.path]
        let process: Sfx.Running
        if geteuid() == 0 {
            let setpriv = URL(filePath: "/usr/bin/setpriv")
            guard FileManager.default.isExecutableFile(atPath: setpriv.path) else { return XCTFail("\(setpriv.path) is missing: install util-linux (script/test does)") }
            process = try Sfx(card).start(["--bounding-set=-dac_override,-dac_read_search,-fowner", "--", Sfx.program.path] + command, via: setpriv)
        } else {
            process = try Sfx(card).start(command)
        }
        try process.waitForStart()
        Thread.sleep(forTimeInterval: 1.5)
        XCTAssertEqual(chmod(directory.path, 0o555), 0)
        process.input.fileHandleForWriting.write(Data("\n".utf8))
        let run = process.finish()
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(run.stderr.split(separator: "\n").filter { $0.contains("kept as fragmented") }.count, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("sfx: \(file.path): kept as fragmented MPEG-4 (complete and readable, but with no duration in its header): "
                                          + "it could not be rewritten as a standard M4A: a new file cannot be created beside it in \(directory.path) "
                                          + "(Permission denied); make \(directory.path) writable\n"), run.stderr)
        XCTAssertFalse(run.stdout.contains("saved"), run.stdout)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), ["memo.m4a"])
        XCTAssertTrue(try MP4Boxes(file).order.contains("moof"), "still the fragmented file")
        let decoded = try Decoded.mpeg4(file)
        XCTAssertGreaterThan(Double(decoded.frames) / 48_000, 1.4, "all of it")
        XCTAssertGreaterThan(Closeness.measure(source, decoded.samples, channels: 1, start: 24_000, span: 24_000).snr, 20)
    }

    /// `sfx record --fragmented` keeps the fragments; a standard file is the default.
    func testFragmentedKeepsTheFragmentsAndTheDefaultIsStandard() throws {
        let standard = card.directory.appending(path: "standard.m4a")
        let fragmented = card.directory.appending(path: "fragmented.m4a")
        let sfx = Sfx(card)
        let first = try sfx.run(["record", "-o", standard.path, "--max", "1", "-q"])
        XCTAssertEqual(first.status, 0, first.stderr)
        let second = try sfx.run(["record", "-o", fragmented.path, "--max", "1", "-q", "--fragmented"])
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertFalse(try MP4Boxes(standard).order.contains("moof"))
        XCTAssertTrue(try MP4Boxes(fragmented).order.contains("moof"))
        XCTAssertEqual(try mutagenLength(standard), 1, accuracy: 0.025)
        let wrong = try sfx.run(["record", "-o", card.directory.appending(path: "x.wav").path, "--fragmented"])
        XCTAssertEqual(wrong.status, 64, wrong.stderr)
        XCTAssertTrue(wrong.stderr.contains("--fragmented is for m4a, and this recording is wav"), wrong.stderr)
    }

    /// `sfx recordings` lists what `sfx record` saved without -o (text and JSON); rm removes one.
    func testRecordingsListsAndRemoves() throws {
        let sfx = Sfx(card)
        XCTAssertEqual(try sfx.run(["record", "--max", "0.5", "--format", "flac"]).status, 0)
        let listed = try sfx.run(["recordings", "--json"])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        let recordings = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]]
        XCTAssertEqual(recordings?.count, 1)
        let name = try XCTUnwrap(recordings?.first?["name"] as? String)
        XCTAssertEqual(recordings?.first?["format"] as? String, "flac")
        let date = try XCTUnwrap(recordings?.first?["date"] as? String)
        XCTAssertNotNil(date.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)$"#, options: .regularExpression), date)
        XCTAssertEqual(recordings?.first?["duration"] as? Double ?? 0, 0.5, accuracy: 1e-9)
        let text = try sfx.run(["recordings"])
        XCTAssertTrue(text.stdout.hasPrefix(name + "  "), text.stdout)
        XCTAssertTrue(text.stdout.contains("    0.50 s  flac"), text.stdout)
        XCTAssertEqual(try sfx.run(["recordings", "rm", name]).status, 0)
        XCTAssertTrue(try sfx.run(["recordings"]).stdout.hasPrefix("no recordings in "))
        let missing = try sfx.run(["recordings", "rm", name])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("no such recording"), missing.stderr)
    }

    /// `sfx meter` off a terminal: one plain line a second with the card's level, and no file.
    func testMeterPrintsPlainLinesWithoutRecording() throws {
        let run = try Sfx(card).run(["meter", "--seconds", "2.2", "--channels", "1"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let lines = run.stderr.split(separator: "\n")
        XCTAssertTrue((2...4).contains(lines.count), run.stderr)
        XCTAssertTrue(lines.allSatisfy { $0.range(of: #"^\d\d:\d\d\.\d  1 -?\d+\.\d dBFS peak -?\d+\.\d$"#, options: .regularExpression) != nil }, run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: card.directory.appending(path: "data/sfx/recordings").path))
        let missing = try Sfx(card).run(["meter", "-D", "nosuchdevice"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.stderr, "sfx: no capture device 'nosuchdevice' (ENOENT): connect a microphone, or pick another device with --device (`sfx devices` lists them)\n")
    }

    /// No such device, and no permission (a user outside the card's private directory, as a
    /// user outside the `audio` group meets /dev/snd): one line each with the fix; no file.
    func testDeviceErrorsAreOneLineWithTheFix() throws {
        let file = card.directory.appending(path: "none.wav")
        let missing = try Sfx(card).run(["record", "-D", "nosuchdevice", "-o", file.path])
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.stderr, "sfx: no capture device 'nosuchdevice' (ENOENT): connect a microphone, or pick another device with --device (`sfx devices` lists them)\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: file.path))

        // A user who may read the configuration but not open the card (its directory is the
        // root's, 0711): the plugin's open fails with EACCES, as /dev/snd/* does outside `audio`.
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return }
        let other = card.directory.appending(path: "other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: false)
        let configuration = other.appending(path: "asound.conf")
        try FileManager.default.copyItem(at: card.configURL, to: configuration)
        chown(other.path, 65_534, 65_534)
        chown(configuration.path, 65_534, 65_534)
        chmod(card.directory.path, 0o711)
        defer { chmod(card.directory.path, 0o700) }
        let denied = try Sfx(card).run(["record", "-D", card.pcmName, "-o", other.appending(path: "x.wav").path],
                                       asUser: 65_534, home: other, alsaConfiguration: configuration)
        XCTAssertEqual(denied.status, 1, denied.stderr)
        XCTAssertEqual(denied.stderr, "sfx: no permission to open capture device '\(card.pcmName)' (EACCES): add your user to the `audio` group (sudo usermod -aG audio $USER) and log in again\n")
    }
}

/// Runs the `sfx` built beside this test bundle with the card's ALSA configuration, its
/// recordings directory inside the card's private directory.
struct Sfx {
    let card: VirtualCard
    init(_ card: VirtualCard) { self.card = card }

    static var program: URL { BuildProducts.product("sfx") }

    struct Run {
        let status: Int32
        let reason: Process.TerminationReason
        let stdout: String
        let stderr: String
    }

    final class Running {
        let process = Process()
        let input = Pipe(), output = Pipe(), errors = Pipe()
        private let collected = Collected()

        /// Waits for the "recording to" line (up to 10 s).
        func waitForStart() throws {
            for _ in 0..<1_000 {
                if collected.errors.contains("recording to") { return }
                usleep(10_000)
            }
            throw CardError("sfx record did not start: \(collected.errors)")
        }

        func finish() -> Run {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            Thread.sleep(forTimeInterval: 0.05)
            return Run(status: process.terminationStatus, reason: process.terminationReason,
                       stdout: collected.output, stderr: collected.errors)
        }

        func collect() {
            output.fileHandleForReading.readabilityHandler = { [collected] handle in collected.add(output: handle.availableData) }
            errors.fileHandleForReading.readabilityHandler = { [collected] handle in collected.add(errors: handle.availableData) }
        }
    }

    final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        private var out = Data(), err = Data()
        func add(output data: Data) { lock.lock(); out += data; lock.unlock() }
        func add(errors data: Data) { lock.lock(); err += data; lock.unlock() }
        var output: String { lock.lock(); defer { lock.unlock() }; return String(decoding: out, as: UTF8.self) }
        var errors: String { lock.lock(); defer { lock.unlock() }; return String(decoding: err, as: UTF8.self) }
    }

    func start(_ arguments: [String], limitFileSize: Int? = nil, asUser uid: UInt32? = nil, home: URL? = nil,
               alsaConfiguration: URL? = nil, via wrapper: URL? = nil) throws -> Running {
        let running = Running()
        var environment = card.environment
        environment["XDG_DATA_HOME"] = card.directory.appending(path: "data").path
        environment["XDG_CONFIG_HOME"] = card.directory.appending(path: "config").path
        environment["XDG_STATE_HOME"] = card.directory.appending(path: "state").path
        if let home {
            environment["HOME"] = home.path
            environment["XDG_DATA_HOME"] = home.path
            environment["XDG_CONFIG_HOME"] = home.path
            environment["XDG_STATE_HOME"] = home.path
        }
        if let alsaConfiguration { environment["ALSA_CONFIG_PATH"] = alsaConfiguration.path }
        if let wrapper {
            running.process.executableURL = wrapper
            running.process.arguments = arguments
        } else if let limitFileSize {
            running.process.executableURL = URL(filePath: "/usr/bin/prlimit")
            running.process.arguments = ["--fsize=\(limitFileSize)", "--", Self.program.path] + arguments
        } else if let uid {
            running.process.executableURL = URL(filePath: "/usr/bin/setpriv")
            running.process.arguments = ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "--", Self.program.path] + arguments
        } else {
            running.process.executableURL = Self.program
            running.process.arguments = arguments
        }
        running.process.environment = environment
        running.process.standardInput = running.input
        running.process.standardOutput = running.output
        running.process.standardError = running.errors
        running.collect()
        try running.process.run()
        return running
    }

    func run(_ arguments: [String], limitFileSize: Int? = nil, asUser uid: UInt32? = nil, home: URL? = nil,
             alsaConfiguration: URL? = nil, via wrapper: URL? = nil) throws -> Run {
        try start(arguments, limitFileSize: limitFileSize, asUser: uid, home: home, alsaConfiguration: alsaConfiguration, via: wrapper).finish()
    }
}
