// `sfx record` when things go wrong, in each of the six formats it writes: a full disk (a
// small tmpfs with 20 or 40 kB free), a file-size limit, SIGKILL and SIGSTOP; and the encoders'
// failure paths built with AddressSanitizer.
import CFFmpeg
import Foundation
import SFXTestSupport
import Glibc
import XCTest
import SFX
import SFXCardSupport
import SFXMedia

final class FaultTests: XCTestCase {
    var card: VirtualCard!
    var source: [Float] = []
    /// A mounted tmpfs, unmounted in tearDown.
    var disk: URL?

    override func setUpWithError() throws {
        source = Signal.music(seconds: 20, channels: 1)
        card = try cardCapturing(source, channels: 1)
    }

    override func tearDownWithError() throws {
        if let disk { umount2(disk.path, Int32(MNT_DETACH)) }
        try card?.remove()
    }

    /// A full disk stops the recording in every format: exit 1, one line that says so and how
    /// many seconds were kept, and a file that decodes to those seconds of the captured signal
    /// (exactly for WAV and FLAC), whose length `sfx info` reports. (M4A ended in `double free
    /// or corruption`, exit 134; MP3 said `saved (10.00 s …)`, exit 0, holding about 2 s; Opus
    /// and Vorbis overstated what was kept, and `sfx info` gave no length for FLAC and Ogg.)
    func testAFullDiskStopsEveryFormatAndKeepsWhatFitted() throws {
        let directory = try mountSmallDisk()
        let cases = RecordingFormat.allCases.map { ($0, 20_480) } + [(.m4a, 40_960)]
        for (format, free) in cases {
            try leave(free, freeIn: directory)
            let file = directory.appending(path: "take.\(format.fileExtension)")
            let run = try Sfx(card).run(["record", "-q", "--format", format.rawValue, "-o", file.path, "--max", "10"])
            let what = "\(format) with \(free / 1024) kB free"
            XCTAssertNoThrow(try checkKept(run, file: file, format: format, what: what), what)
            try? FileManager.default.removeItem(at: file)
        }
    }

    /// A file-size limit (RLIMIT_FSIZE: EFBIG, not ENOSPC) ends every format the same way.
    func testAFileSizeLimitStopsEveryFormatAndKeepsWhatFitted() throws {
        for format in RecordingFormat.allCases {
            let file = card.directory.appending(path: "limited.\(format.fileExtension)")
            let run = try Sfx(card).run(["record", "-q", "--format", format.rawValue, "-o", file.path, "--max", "10"], limitFileSize: 30_000)
            let what = "\(format) under a 30 kB limit"
            XCTAssertNoThrow(try checkKept(run, file: file, format: format, what: what), what)
        }
    }

    /// SIGKILL mid-recording leaves every format readable, missing at most the last second, and
    /// `sfx info` gives the length a decoder finds (an MP3 read as 0.68 s of 2.47: its first
    /// frame, LAME's empty one, was taken for the bit rate of them all; a FLAC had no length).
    func testSIGKILLLeavesEveryFormatReadableAndSfxInfoGivesItsLength() throws {
        for format in RecordingFormat.allCases {
            let file = card.directory.appending(path: "killed.\(format.fileExtension)")
            let process = try Sfx(card).start(["record", "--format", format.rawValue, "-o", file.path])
            try process.waitForStart()
            let started = Date()
            Thread.sleep(forTimeInterval: 2.6)
            let elapsed = Date().timeIntervalSince(started)
            kill(process.process.processIdentifier, SIGKILL)
            let run = process.finish()
            XCTAssertEqual(run.reason, .uncaughtSignal, "\(format)")
            let decoded = try decode(file, format)
            let seconds = Double(decoded.frames) / 48_000
            print("\(format): killed after \(String(format: "%.3f", elapsed)) s; the file decodes to \(String(format: "%.3f", seconds)) s")
            XCTAssertGreaterThanOrEqual(seconds, elapsed - 1.0, "\(format)")
            XCTAssertLessThanOrEqual(seconds, elapsed + 0.3, "\(format)")
            let info = try infoDuration(file)
            // MP3: what FFmpeg decodes may run past the frame count of the last checkpoint.
            XCTAssertEqual(info, seconds, accuracy: format == .mp3 ? 0.3 : 0.03, "sfx info of the killed \(format)")
            XCTAssertLessThanOrEqual(info, seconds + 0.03, "\(format)")
            XCTAssertGreaterThan(info, elapsed - 1.0, "\(format)")
            if format == .mp3 {
                // libsndfile (what sfx plays with) decodes that length too: it stops at the one it is given.
                XCTAssertEqual(Double(try Decoded.soundFile(file).frames) / 48_000, info, accuracy: 0.03)
                // As sfx wrote it before the count: LAME's empty first frame (MPEG-1 Layer III,
                // 128 kb/s, 48 kHz, mono: 384 bytes), zeros after its 4 + 17 bytes of header and
                // side information. `sfx info` then counts the frames.
                let handle = try FileHandle(forUpdating: file)
                XCTAssertEqual(try handle.read(upToCount: 4), Data([0xFF, 0xFB, 0x94, 0xC4]))
                try handle.seek(toOffset: 21)
                try handle.write(contentsOf: Data(count: 384 - 21))
                try handle.close()
                let uncounted = try infoDuration(file)
                let all = Double(try Decoded.mpeg4(file).frames) / 48_000
                print("mp3 without a count: sfx info \(String(format: "%.3f", uncounted)) s; FFmpeg decodes \(String(format: "%.3f", all)) s")
                XCTAssertEqual(uncounted, all, accuracy: 0.05, "sfx info of an MP3 without a frame count")
            }
            try checkContent(decoded, format: format, seconds: seconds)
        }
    }

    /// SIGSTOP for two seconds mid-recording: the capture overruns and recovers, and the line
    /// says how much sound is missing (it said "a few milliseconds are missing").
    func testAStoppedRecorderSaysHowMuchSoundIsMissing() throws {
        for format in RecordingFormat.allCases {
            let file = card.directory.appending(path: "stopped.\(format.fileExtension)")
            let process = try Sfx(card).start(["record", "--format", format.rawValue, "-o", file.path, "--max", "3"])
            try process.waitForStart()
            let began = Date()
            Thread.sleep(forTimeInterval: 0.8)
            let pid = process.process.processIdentifier
            kill(pid, SIGSTOP)
            let stoppedAt = Date()
            Thread.sleep(forTimeInterval: 2)
            kill(pid, SIGCONT)
            let stopped = Date().timeIntervalSince(stoppedAt)
            let run = process.finish()
            let lasted = Date().timeIntervalSince(began)
            XCTAssertEqual(run.status, 0, "\(format): \(run.stderr)")
            XCTAssertTrue(run.stdout.hasPrefix("saved \(file.path) (3.00 s, "), run.stdout)
            let line = try XCTUnwrap(run.stderr.split(separator: "\n").first { $0.contains("overrun") }, "\(format): \(run.stderr)")
            let pattern = #"^sfx: 1 overrun \(the capture fell behind and recovered\): about (\d+\.\d\d) s of sound is missing from the recording$"#
            let match = try XCTUnwrap(String(line).firstMatch(of: try Regex(pattern)), String(line))
            let reported = try XCTUnwrap(Double(String(match.output[1].substring ?? "")))
            print("\(format): stopped for \(String(format: "%.3f", stopped)) s, ran \(String(format: "%.3f", lasted)) s for a 3 s file; reported missing \(reported) s")
            XCTAssertGreaterThanOrEqual(reported, 2.0 - 0.05, "\(format)")
            XCTAssertLessThanOrEqual(reported, stopped + 0.5, "\(format)")

            // The card's capture plays its source from the start of each stream, so the file does
            // not show the time lost; the clock does: the run lasted the file's 3 s and the gap.
            XCTAssertEqual(reported, lasted - 3, accuracy: 0.5, "\(format): reported missing vs the run's length less the file's")
            // Up to the stop the file is the signal, from its first frame.
            let decoded = try decode(file, format)
            if format == .wav || format == .flac {
                let cut = (0..<decoded.samples.count).first { decoded.samples[$0] != source[$0] } ?? decoded.samples.count
                XCTAssertGreaterThanOrEqual(cut, 33_600, "\(format): the file differs from the signal before the stop")
            }
        }
    }

    /// AudioFileWriter (sfx render, OfflineMix) on a full disk: every encoding throws the
    /// disk-full error, the last flush at close included (libsndfile's MP3 encoder ignored its
    /// failed writes: the write "succeeded").
    func testTheFileWriterReportsAFullDiskInEveryEncoding() throws {
        let directory = try mountSmallDisk()
        let music = Signal.music(seconds: 10, channels: 2)
        for encoding in AudioFileEncoding.allCases {
            try leave(8_192, freeIn: directory)
            let file = directory.appending(path: "render-\(encoding.rawValue)")
            do {
                try AudioFileWriter.write(music, sampleRate: 48_000, channels: 2, to: file, as: encoding)
                XCTFail("\(encoding): 10 s written into 8 kB without an error")
            } catch let error as MediaError {
                XCTAssertEqual(error.reason, .diskFull, "\(encoding): \(error)")
                XCTAssertEqual(error.description, "\(file.path): cannot be written: no space left on the device; free some space and try again")
            }
            try? FileManager.default.removeItem(at: file)
        }
    }

    /// The encoders' failure paths under AddressSanitizer: the SFXMedia sources that write
    /// recordings (with FFmpeg's and libsndfile's loaders) and Tests/AddressSanitizer's driver
    /// are compiled with -sanitize=address, then fill a 20 kB tmpfs and meet a file-size limit in
    /// every format, mono and stereo. Any report from the sanitizer (leaks included) fails the
    /// test; so does a file that does not decode. (Before the fix: heap-buffer-overflow in
    /// MPEG4AudioEncoder.encode, called from finish() with all that append had left.)
    func testTheFailurePathsAreCleanUnderAddressSanitizer() throws {
        let program = try buildSanitizedDriver()
        let directory = try mountSmallDisk()
        for format in RecordingFormat.allCases {
            for channels in [1, 2] {
                try leave(20_480, freeIn: directory)
                let full = directory.appending(path: "asan.\(format.fileExtension)")
                try runSanitized(program, format: format, channels: channels, file: full)
                try FileManager.default.removeItem(at: full)
                let limited = card.directory.appending(path: "asan-\(channels).\(format.fileExtension)")
                try runSanitized(program, format: format, channels: channels, file: limited, limitFileSize: 30_000)
                try FileManager.default.removeItem(at: limited)
            }
        }
        // M4A's rewrite as a standard file at the end: through, and stopped by the full disk
        // once the fragmented file is complete (some 26 kB of 40 free: the rewrite needs as
        // much again), which keeps the fragmented file.
        for channels in [1, 2] {
            let seconds = channels == 1 ? 3.0 : 1.5
            let finished = card.directory.appending(path: "asan-standard-\(channels).m4a")
            try runSanitized(program, format: .m4a, channels: channels, file: finished, seconds: seconds, expecting: .finished)
            XCTAssertFalse(try MP4Boxes(finished).order.contains("moof"), "\(channels) ch")
            try leave(40_960, freeIn: directory)
            let stopped = directory.appending(path: "asan-standard-\(channels).m4a")
            try runSanitized(program, format: .m4a, channels: channels, file: stopped, seconds: seconds,
                             expecting: .line("failed: \(stopped.path): kept as fragmented MPEG-4 (complete and readable, but with no duration in its header): "
                                 + "it could not be rewritten as a standard M4A: the new file cannot be written (No space left on device); free some space"))
            XCTAssertTrue(try MP4Boxes(stopped).order.contains("moof"), "\(channels) ch")
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted(), ["asan-standard-\(channels).m4a", "fill"])
            try FileManager.default.removeItem(at: stopped)
        }
    }

    // MARK: Helpers

    /// The one line of a recording stopped by a full disk, and the file it kept.
    private func checkKept(_ run: Sfx.Run, file: URL, format: RecordingFormat, what: String) throws {
        XCTAssertEqual(run.reason, .exit, "\(what): \(run.stderr)")
        XCTAssertEqual(run.status, 1, "\(what): \(run.stdout) \(run.stderr)")
        XCTAssertEqual(run.stdout, "", what)
        let pattern = #"^sfx: (.+): the disk is full \(or the file-size limit reached\): recording stopped and the (\d+\.\d) s written so far were kept; free some space\n$"#
        let match = try XCTUnwrap(run.stderr.firstMatch(of: try Regex(pattern)), "\(what): \(run.stderr)")
        XCTAssertEqual(String(match.output[1].substring ?? ""), file.path)
        let said = try XCTUnwrap(Double(String(match.output[2].substring ?? "")))
        let decoded = try decode(file, format)
        let seconds = Double(decoded.frames) / 48_000
        let info = try infoDuration(file)
        print("\(what): said \(said) s kept; the file decodes to \(String(format: "%.3f", seconds)) s; sfx info \(String(format: "%.3f", info)) s")
        XCTAssertGreaterThan(seconds, 0.1, what)
        XCTAssertEqual(said, seconds, accuracy: 0.08, "\(what): the line vs what decodes")
        XCTAssertEqual(info, seconds, accuracy: 0.03, "\(what): sfx info vs what decodes")
        try checkContent(decoded, format: format, seconds: seconds)
    }

    /// The decoded recording is the captured signal from its first frame: sample for sample for
    /// WAV and FLAC, close in shape for the lossy codecs.
    private func checkContent(_ decoded: Decoded, format: RecordingFormat, seconds: Double) throws {
        if format == .wav || format == .flac {
            assertSamplesEqual(decoded.samples, Array(source.prefix(decoded.frames)), "\(format)")
        } else if seconds > 0.75 {
            let closeness = Closeness.measure(source, decoded.samples, channels: 1, start: 12_000, span: 12_000, search: 2_400)
            XCTAssertGreaterThan(closeness.snr, 12, "\(format)")
        }
    }

    /// The file decoded independently of sfx: FFmpeg for M4A and MP3 (what ffprobe and players
    /// find), libsndfile for the rest.
    private func decode(_ file: URL, _ format: RecordingFormat) throws -> Decoded {
        format == .m4a || format == .mp3 ? try Decoded.mpeg4(file) : try Decoded.soundFile(file)
    }

    /// The duration `sfx info --json` reports (a failure, and NaN, when it gives none).
    private func infoDuration(_ file: URL) throws -> Double {
        let run = try Sfx(card).run(["info", "--json", file.path])
        XCTAssertEqual(run.status, 0, run.stderr)
        let list = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]]
        guard let duration = list?.first?["duration"] as? Double else {
            XCTFail("sfx info gives no duration for \(file.lastPathComponent)")
            return .nan
        }
        return duration
    }

    /// A 64 kB tmpfs inside the card's private directory (a real full disk), unmounted in tearDown.
    private func mountSmallDisk() throws -> URL {
        guard getuid() == 0 else { throw XCTSkip("mounting a tmpfs needs root") }
        let directory = card.directory.appending(path: "small-disk")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        guard mount("tmpfs", directory.path, "tmpfs", UInt(MS_NOSUID | MS_NODEV), "size=64k,mode=0700") == 0 else {
            throw CardError("cannot mount a tmpfs at \(directory.path): \(String(cString: strerror(errno)))")
        }
        disk = directory
        return directory
    }

    /// Fills the disk at `directory` so that `bytes` remain free.
    private func leave(_ bytes: Int, freeIn directory: URL) throws {
        let fill = directory.appending(path: "fill")
        try? FileManager.default.removeItem(at: fill)
        var fs = statvfs()
        guard statvfs(directory.path, &fs) == 0 else { throw CardError("statvfs \(directory.path)") }
        let available = Int(fs.f_bavail) * Int(fs.f_bsize)
        try Data(count: available - bytes).write(to: fill)
        guard statvfs(directory.path, &fs) == 0 else { throw CardError("statvfs \(directory.path)") }
        XCTAssertEqual(Int(fs.f_bavail) * Int(fs.f_bsize), bytes, "free space on the small disk")
    }

    /// Builds Tests/AddressSanitizer/RecordingFaults.swift with the sources it drives, all with
    /// AddressSanitizer, into the card's private directory. About 10 s.
    private func buildSanitizedDriver() throws -> URL {
        let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let sources = root.appending(path: "Sources")
        let build = card.directory.appending(path: "asan")
        try FileManager.default.createDirectory(at: build, withIntermediateDirectories: false)
        let tools = try toolchain()
        try "module CSFXFFmpeg { header \"\(sources.path)/CSFXFFmpeg/include/csfxffmpeg.h\" export * }\n"
            .write(to: build.appending(path: "module.modulemap"), atomically: false, encoding: .utf8)
        try FileManager.default.copyItem(at: root.appending(path: "Tests/AddressSanitizer/RecordingFaults.swift"), to: build.appending(path: "main.swift"))
        for (source, include) in [("CSFXFFmpeg/ffmpeg.c", "CSFXFFmpeg/include"), ("CSFXMedia/on_demand.c", "CSFXMedia/include")] {
            let object = build.appending(path: URL(filePath: source).deletingPathExtension().lastPathComponent + ".o").path
            try runTool(tools.appending(path: "clang"), ["-c", "-g", "-fsanitize=address", "-I", sources.appending(path: include).path,
                                                          "-I", sources.appending(path: "CSFXOnDemand/include").path,
                                                          sources.appending(path: source).path, "-o", object])
        }
        // The media sources as one module with SFXSystem's text helpers (their `import SFXSystem`
        // taken out: here they are the same module).
        var media: [String] = [sources.appending(path: "SFXSystem/Text.swift").path]
        for name in ["RecordingFormat", "RecordingSink", "MP3InfoFrame", "MPEG4AudioEncoder", "MPEG4Remux", "SoundFileEncoder", "MediaError", "FFmpegLibraries"] {
            let text = try String(contentsOf: sources.appending(path: "SFXMedia/\(name).swift"), encoding: .utf8)
            let copy = build.appending(path: "\(name).swift")
            try text.replacingOccurrences(of: "\nimport SFXSystem\n", with: "\n").write(to: copy, atomically: false, encoding: .utf8)
            media.append(copy.path)
        }
        let program = build.appending(path: "RecordingFaults")
        try runTool(tools.appending(path: "swiftc"), ["-g", "-Onone", "-sanitize=address", "-module-name", "RecordingFaults", "-use-ld=lld",
                                                      "-I", sources.appending(path: "CFFmpeg").path, "-I", sources.appending(path: "CSndFile").path,
                                                      "-I", build.path, build.appending(path: "main.swift").path] + media
                                                     + [build.appending(path: "ffmpeg.o").path, build.appending(path: "on_demand.o").path, "-ldl", "-o", program.path])
        return program
    }

    /// The directory of the swiftc that runs these tests (the toolchain on PATH, else /opt/swift).
    private func toolchain() throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":").map(String.init) + ["/opt/swift/usr/bin"]
        where FileManager.default.isExecutableFile(atPath: directory + "/swiftc") && FileManager.default.isExecutableFile(atPath: directory + "/clang") {
            return URL(filePath: directory)
        }
        throw CardError("no swiftc with a clang beside it on PATH or in /opt/swift/usr/bin")
    }

    private func runTool(_ tool: URL, _ arguments: [String]) throws {
        let run = try runToEnd(tool, arguments, errors: .merged)
        guard run.status == 0 else {
            throw CardError("\(tool.lastPathComponent) failed (\(run.status)): \(run.output.suffix(4_000))")
        }
    }

    /// What the sanitized driver is to print.
    private enum Outcome {
        /// The disk-full line (ENOSPC and the limit's EFBIG alike).
        case diskFull
        /// No failure: the file finished.
        case finished
        case line(String)
    }

    /// Runs the sanitized driver until the disk (or the limit) stops it, or for `seconds`, and
    /// checks its report and the file.
    private func runSanitized(_ program: URL, format: RecordingFormat, channels: Int, file: URL, limitFileSize: Int? = nil,
                              seconds: Double = 60, expecting outcome: Outcome = .diskFull) throws {
        let what = "\(format), \(channels) ch, \(seconds) s, " + (limitFileSize.map { "a \($0 / 1000) kB limit" } ?? "the small disk")
        let process = Process()
        if let limitFileSize {
            process.executableURL = URL(filePath: "/usr/bin/prlimit")
            process.arguments = ["--fsize=\(limitFileSize)", "--", program.path, format.rawValue, String(channels), String(seconds), file.path]
        } else {
            process.executableURL = program
            process.arguments = [format.rawValue, String(channels), String(seconds), file.path]
        }
        var environment = card.environment
        // Leaks are reported too; halt at the first error, with the sanitizer's own exit code.
        environment["ASAN_OPTIONS"] = "detect_leaks=1:halt_on_error=1:exitcode=66"
        process.environment = environment
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let report = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertFalse(report.contains("AddressSanitizer") || report.contains("LeakSanitizer"), "\(what):\n\(report.prefix(6_000))")
        XCTAssertEqual(process.terminationStatus, 0, "\(what): \(printed) \(report.prefix(6_000))")
        switch outcome {
        case .diskFull: XCTAssertTrue(printed.contains("failed: \(file.path): cannot be written: no space left on the device"), "\(what): \(printed)")
        case .finished: XCTAssertFalse(printed.contains("failed"), "\(what): \(printed)")
        case .line(let line): XCTAssertTrue(printed.contains(line + "\n"), "\(what): \(printed)")
        }
        let decoded = format == .m4a || format == .mp3 ? try Decoded.mpeg4(file) : try Decoded.soundFile(file)
        XCTAssertEqual(decoded.channels, channels, what)
        XCTAssertGreaterThan(decoded.frames, 4_096, "\(what): kept \(decoded.frames) frames")
    }
}
