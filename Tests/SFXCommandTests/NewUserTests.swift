import Foundation
import SFXTestSupport
import XCTest
import SFXMedia

/// Issue 17: `sfx` as someone used to aplay, paplay, canberra-gtk-play and sox tries it. Each
/// test runs the program as a process, on the virtual card, in a scratch directory of its own.
final class NewUserTests: CommandTestCase {
    /// A mono WAV of `frames` samples at `level`.
    func constant(_ name: String, level: Float = 0.25, frames: Int = 4_800) throws -> URL {
        let url = scratch.appending(path: name)
        try AudioFileWriter.write([Float](repeating: level, count: frames), sampleRate: 48_000, channels: 1, to: url, as: .wavPCM16)
        return url
    }

    /// The virtual card's recording named in "the virtual card recorded what it played to PATH".
    func recording(_ run: Run) -> URL? {
        run.stdout.split(separator: "\n").first { $0.contains("recorded what it played to") }
            .flatMap { $0.split(separator: " ").last }.map { URL(filePath: String($0)) }
    }

    // MARK: 1. Names and files

    func testAWordWithAnAudioExtensionIsAFileAndAMissingOneSaysNoSuchFile() throws {
        let run = try sfx("play", "missing.wav")
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.hasPrefix("sfx: missing.wav: no such file"), run.stderr)
        XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, "one line, before any device is opened: \(run.stderr)")
        XCTAssertFalse(run.stderr.contains("no system sound"), run.stderr)
        // -i forces a system sound name, whatever it looks like.
        let forced = try sfx("play", "-i", "missing.wav", "-q")
        XCTAssertEqual(forced.status, 1)
        XCTAssertTrue(forced.stderr.contains("no system sound named 'missing.wav'"), forced.stderr)
    }

    func testAFileInTheCurrentDirectoryDoesNotShadowASystemSound() throws {
        // `bell` here is not audio: played as a file it would fail.
        try Data("not audio".utf8).write(to: scratch.appending(path: "bell"))
        let system = try sfx("play", "bell", "-q")
        XCTAssertEqual(system.status, 0, system.stderr)
        let file = try sfx("play", "./bell", "-q")
        XCTAssertEqual(file.status, 1)
        XCTAssertTrue(file.stderr.hasPrefix("sfx: ./bell:"), file.stderr)
        let forced = try sfx("play", "-f", "bell", "-q")
        XCTAssertEqual(forced.status, 1)
        XCTAssertTrue(forced.stderr.hasPrefix("sfx: bell:"), forced.stderr)
    }

    func testStandardInputIsASound() throws {
        let tone = try Data(contentsOf: try constant("tone.wav", level: 0.5, frames: 9_600))
        let play = try sfx("play", "-", input: tone)
        XCTAssertEqual(play.status, 0, play.stderr)
        let recorded = try XCTUnwrap(recording(play), play.stdout)
        XCTAssertEqual(try peak(recorded), 0.5, accuracy: 0.01)
        let info = try sfx("info", "-", input: tone)
        XCTAssertEqual(info.status, 0, info.stderr)
        XCTAssertTrue(info.stdout.contains("48000 Hz  1 ch  9600 frames"), info.stdout)
        let empty = try sfx("play", "-", input: Data())
        XCTAssertEqual(empty.status, 1)
        XCTAssertTrue(empty.stderr.contains("standard input: is empty"), empty.stderr)
        XCTAssertEqual(try sfx("play", "-", "-f", "-").status, 64)
    }

    // MARK: 2. Volume, quiet, verbose

    func testVolumeInDecibelsAndAsGain() throws {
        let tone = try constant("tone.wav", level: 0.25)
        func rendered(_ options: String...) throws -> Float {
            let out = scratch.appending(path: "out-\(options.joined()).wav")
            let run = try sfx(["render", tone.path, "-o", out.path, "-q"] + options)
            XCTAssertEqual(run.status, 0, run.stderr)
            return try peak(out)
        }
        let unity = try rendered()
        let minus6 = pow(10, Float(-6) / 20)
        XCTAssertEqual(try rendered("--volume", "-6dB") / unity, minus6, accuracy: 1e-3)
        XCTAssertEqual(try rendered("-V", "-6") / unity, minus6, accuracy: 1e-3)
        XCTAssertEqual(try rendered("--volume", "0.5") / unity, 0.5, accuracy: 1e-3)
        XCTAssertEqual(try rendered("--volume", "2") / unity, 2, accuracy: 1e-3)
        // +12 dB of a 0.25 tone is past full scale: the limiter keeps it under 1.
        let loud = try rendered("--volume", "+12dB")
        XCTAssertLessThanOrEqual(loud, 1)
        XCTAssertGreaterThan(loud, unity * 2)
        for bad in [["--volume", "5"], ["--volume", "13dB"], ["-V", "loud"], ["--volume", "1", "-V", "0"]] {
            XCTAssertEqual(try sfx(["play", "tock"] + bad).status, 64, "\(bad)")
        }
    }

    func testQuietSilencesTheNoticesAndVerboseShowsTheSetup() throws {
        let quiet = try sfx("play", "tock", "-q")
        XCTAssertEqual(quiet.status, 0, quiet.stderr)
        XCTAssertEqual(quiet.stdout, "")
        XCTAssertEqual(quiet.stderr, "")
        let verbose = try sfx("play", "tock", "-v")
        XCTAssertEqual(verbose.status, 0, verbose.stderr)
        XCTAssertTrue(verbose.stdout.contains("sfx's virtual card (a card or plain ALSA device)"), verbose.stdout)
        // Rewind mode, the default: periods of 128 frames (the virtual card's pointer moves per
        // period), a buffer of twice the 20 ms kept at each wake-up, plays started by rewinding.
        XCTAssertTrue(verbose.stdout.contains("period 128 × 16 = buffer 2048 frames, latency ≤"), verbose.stdout)
        XCTAssertTrue(verbose.stdout.contains("rewind active, pointer granularity 128 frames"), verbose.stdout)
        XCTAssertTrue(verbose.stdout.contains("SCHED_FIFO"), verbose.stdout)
    }

    // MARK: 3. Output formats

    func testRenderWritesTheFormatTheNameOrFormatGives() throws {
        let cases: [(String, [String], String)] = [
            ("out.ogg", [], "Ogg Vorbis"), ("out.flac", [], "FLAC"), ("out.opus", [], "Ogg Opus"),
            ("out.aiff", [], "AIFF"), ("out.wav", [], "WAV Signed 32 bit PCM"), ("out.mp3", [], "MPEG"),
            ("forced.wav", ["--format", "flac"], "FLAC"),
        ]
        for (name, extra, expected) in cases {
            let out = scratch.appending(path: name)
            let run = try sfx(["render", "tock", "-o", out.path] + extra)
            XCTAssertEqual(run.status, 0, "\(name): \(run.stderr)")
            let info = try sfx("info", out.path)
            XCTAssertTrue(info.stdout.contains(expected), "\(name): \(info.stdout)")
        }
        XCTAssertEqual(try sfx("render", "tock", "-o", "x.wav", "--format", "wma").status, 64)
    }

    func testRenderToStandardOutput() throws {
        let run = try sfx("render", "tock", "-o", "-")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.data.prefix(4), Data("RIFF".utf8))
        XCTAssertTrue(run.stderr.contains("wrote standard output (wav): 3840 frames"), run.stderr)
        let file = scratch.appending(path: "piped.wav")
        try run.data.write(to: file)
        XCTAssertEqual(try AudioFileInfo(contentsOf: file).frames, 3840)
    }

    /// The WAVs sfx writes for people — render's, and the recording of the virtual card that
    /// `sfx play` uses — are plain PCM that sox reads without "wave header missing extended part
    /// of fmt chunk". (A test's VirtualCard records 32-bit float, sample-exact, by default.)
    func testEveryWAVSfxWritesIsOneSoxReadsWithoutAWarning() throws {
        let rendered = scratch.appending(path: "r.wav")
        XCTAssertEqual(try sfx("render", "bell", "-o", rendered.path).status, 0)
        let play = try sfx("play", "tock")
        XCTAssertEqual(play.status, 0, play.stderr)
        let recorded = try XCTUnwrap(recording(play), play.stdout)
        XCTAssertGreaterThan(try peak(recorded), 0.1, "tock reached the card")
        for file in [rendered, recorded] {
            let bytes = [UInt8](try Data(contentsOf: file))
            XCTAssertEqual(Int(bytes[20]) | Int(bytes[21]) << 8, 1, "\(file.path): WAVE_FORMAT_PCM")
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sox") else { continue }
            let sox = try runToEnd(URL(filePath: "/usr/bin/sox"), [file.path, "-n"], output: .inherited, errors: .captured)
            let text = sox.errors
            XCTAssertEqual(sox.status, 0, text)
            XCTAssertEqual(text, "", file.path)
        }
    }

    // MARK: 4. Mute and status

    func testMuteStatusExitCodesAndJSON() throws {
        let off = try sfx("mute", "status", "--device", "null")
        XCTAssertEqual(off.status, 1, "not muted: 1")
        XCTAssertTrue(off.stdout.contains("output mixer (null): none — the device has no Master or PCM control"), off.stdout)
        XCTAssertFalse(off.stdout.contains("ENOENT") || off.stdout.contains("No such file"), off.stdout)
        XCTAssertEqual(try sfx("mute", "on", "-q").status, 0)
        XCTAssertEqual(try sfx("mute", "status", "-q", "--device", "null").status, 0, "muted: 0")
        let json = try sfx("mute", "status", "--json", "--device", "null")
        XCTAssertEqual(json.status, 0)
        let fields = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(fields["muted"] as? Bool, true)
        XCTAssertEqual(fields["flag"] as? Bool, true)
        XCTAssertEqual(fields["device"] as? String, "null")
        XCTAssertNil(fields["mixer"])
        XCTAssertEqual(try sfx("mute", "off").status, 0)
    }

    func testAlertWhileMutedDoesNotSayWhereTheCardRecorded() throws {
        XCTAssertEqual(try sfx("mute", "on").status, 0)
        let muted = try sfx("alert", "bell", "--vibrate", "never")
        XCTAssertTrue(muted.stdout.contains("not played"), muted.stdout)
        XCTAssertFalse(muted.stdout.contains("recorded what it played"), muted.stdout)
        XCTAssertEqual(try sfx("mute", "off").status, 0)
        let heard = try sfx("alert", "bell")
        XCTAssertEqual(heard.status, 0, heard.stderr)
        XCTAssertTrue(heard.stdout.contains("recorded what it played"), heard.stdout)
    }

    // MARK: 5. Themes and lists

    func testListOfAThemeThatIsNotInstalledIsOneLine() throws {
        let run = try sfx("list", "--theme", "NOSUCH")
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stdout, "")
        XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, run.stderr)
        XCTAssertTrue(run.stderr.hasPrefix("sfx: sound theme 'NOSUCH' is not installed"), run.stderr)
    }

    func testAFreedesktopSoundKeepsItsOwnDescription() throws {
        let run = try sfx("list", "--theme", "freedesktop", "--json")
        XCTAssertEqual(run.status, 0, run.stderr)
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])
        let bell = try XCTUnwrap(rows.first { $0["name"] as? String == "bell" })
        XCTAssertEqual(bell["theme"] as? String, "freedesktop")
        XCTAssertTrue((bell["file"] as? String)?.hasSuffix("bell.oga") == true)
        XCTAssertNil(bell["description"], "sfx's description of its own bell is not freedesktop's")
        let own = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(try sfx("list", "--json").stdout.utf8)) as? [[String: Any]])
        XCTAssertNotNil(own.first { $0["name"] as? String == "tock" }?["description"])
    }

    func testDevicesListsCardsAsJSON() throws {
        let run = try sfx("devices", "--json")
        XCTAssertEqual(run.status, 0, run.stderr)
        let listing = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let devices = try XCTUnwrap(listing["devices"] as? [[String: Any]])
        XCTAssertTrue(devices.contains { $0["name"] as? String == "null" })
        // The kernel's cards, as aplay -l lists them (none on a machine without a sound card).
        let cards = try XCTUnwrap(listing["cards"] as? [[String: Any]])
        let kernel = (try? String(contentsOfFile: "/proc/asound/cards", encoding: .utf8)) ?? ""
        let expected = kernel.split(separator: "\n").filter { $0.contains("]:") }.count
        XCTAssertEqual(cards.count, expected)
        let text = try sfx("devices")
        XCTAssertTrue(text.stdout.contains("SOUND CARDS (as aplay -l):"), text.stdout)
    }

    // MARK: 6. Errors that name the cause

    func testAVibrationCommandThatIsMissingOrNotExecutableIsNamed() throws {
        let missing = try sfx("vibrate", "--command", "/nonexistent/buzz now")
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("program '/nonexistent/buzz' was not found"), missing.stderr)
        XCTAssertFalse(missing.stderr.contains("no vibration backend"), missing.stderr)
        let script = scratch.appending(path: "buzz")
        try Data("#!/bin/sh\n".utf8).write(to: script)
        let notExecutable = try sfx("vibrate", "--command", script.path)
        XCTAssertEqual(notExecutable.status, 1)
        XCTAssertTrue(notExecutable.stderr.contains("\(script.path) is not an executable file"), notExecutable.stderr)
        // Words after the program are its arguments, as in the settings file.
        let echo = try sfx("vibrate", "--command", "/bin/echo buzz")
        XCTAssertEqual(echo.status, 0, echo.stderr)
    }

    func testSettingsWarnByLineAndABadValueFailsOnlyTheCommandsThatUseIt() throws {
        let directory = scratch.appending(path: "config/sfx")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let conf = directory.appending(path: "sfx.conf")
        try Data("[alert]\nvibrate-with-alert = bogus\nvolume = 3\n[haptics]\nled = vibrator\n".utf8).write(to: conf)
        let play = try sfx("play", "tock")
        XCTAssertEqual(play.status, 0, play.stderr)
        XCTAssertTrue(play.stderr.contains("warning: \(conf.path):3: unknown key 'volume' in [alert]"), play.stderr)
        XCTAssertTrue(play.stderr.contains("warning: \(conf.path):2: vibrate-with-alert = bogus is not valid"), play.stderr)
        XCTAssertEqual(try sfx("play", "tock", "-q").stderr, "")
        let alert = try sfx("alert", "bell")
        XCTAssertEqual(alert.status, 1)
        XCTAssertTrue(alert.stderr.hasPrefix("sfx: \(conf.path):2: vibrate-with-alert = bogus is not valid; use never, when-muted, always"), alert.stderr)
    }

    // MARK: 7. Help and completion

    func testHelpRendersCleanlyWithAnExampleForEverySubcommand() throws {
        let main = try sfx("--help")
        let names = main.stdout.components(separatedBy: "SUBCOMMANDS:\n")[1].components(separatedBy: "\n\n")[0]
            .split(separator: "\n").filter { !$0.hasPrefix("   ") }.compactMap { $0.split(separator: " ").first.map(String.init) }
        XCTAssertEqual(names, ["play", "alert", "vibrate", "list", "info", "render", "devices", "haptics", "mute", "completion",
                               "record", "meter", "recordings", "upload",
                               "serve", "status", "stop", "load", "bank"])
        for name in names {
            let help = try sfx(name, "--help")
            XCTAssertEqual(help.status, 0, name)
            XCTAssertFalse(help.stdout.contains("\\"), "\(name): a stray backslash\n\(help.stdout)")
            for line in (help.stdout + main.stdout).split(separator: "\n") {
                XCTAssertLessThanOrEqual(line.count, 80, "\(name): \(line)")
            }
            XCTAssertTrue(help.stdout.contains("\nEXAMPLES:\n  sfx \(name)"), "\(name): \(help.stdout)")
        }
    }

    func testCompletionScriptsComeFromTheOptionSpecs() throws {
        let bash = try sfx("completion", "bash")
        XCTAssertEqual(bash.status, 0, bash.stderr)
        for word in ["play)", "--volume", "--decibels", "-V", "--quiet", "completion)", "never when-muted always", "on off toggle status"] {
            XCTAssertTrue(bash.stdout.contains(word), word)
        }
        let zsh = try sfx("completion", "zsh")
        XCTAssertEqual(zsh.status, 0, zsh.stderr)
        XCTAssertTrue(zsh.stdout.hasPrefix("#compdef sfx\n"))
        XCTAssertTrue(zsh.stdout.contains("'--volume[A factor"), zsh.stdout)
        XCTAssertEqual(try sfx("completion", "fish").status, 64)
        // Each script is valid shell, as the shell parses it.
        for (shell, script) in [("/bin/bash", bash.stdout), ("/bin/zsh", zsh.stdout)] {
            XCTAssertTrue(FileManager.default.isExecutableFile(atPath: shell), "\(shell) is missing: script/test installs it")
            let file = scratch.appending(path: "completion")
            try Data(script.utf8).write(to: file)
            let check = Process()
            check.executableURL = URL(filePath: shell)
            check.arguments = ["-n", file.path]
            try check.run()
            check.waitUntilExit()
            XCTAssertEqual(check.terminationStatus, 0, shell)
        }
        // bash completes a subcommand's options from the script.
        let session = """
        source \(scratch.appending(path: "bash").path)
        COMP_WORDS=(sfx play --vol); COMP_CWORD=2; _sfx; echo "${COMPREPLY[@]}"
        COMP_WORDS=(sfx mute t); COMP_CWORD=2; _sfx; echo "${COMPREPLY[@]}"
        """
        try Data(bash.stdout.utf8).write(to: scratch.appending(path: "bash"))
        let run = Process()
        run.executableURL = URL(filePath: "/bin/bash")
        run.arguments = ["-c", session]
        let out = Pipe()
        run.standardOutput = out
        try run.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        run.waitUntilExit()
        XCTAssertTrue(text.hasPrefix("--volume\ntoggle"), text)
    }

    // MARK: 8. Theme files as libcanberra reads them

    func testDisabledSoundMessagesNameTheFileAndTheTheme() throws {
        // A theme of the user's own named sfx, first in the chain, turns dialog-warning off.
        let sounds = scratch.appending(path: "data/sounds")
        let theme = sounds.appending(path: "sfx")
        try FileManager.default.createDirectory(at: theme.appending(path: "stereo"), withIntermediateDirectories: true)
        try Data("[Sound Theme]\nName=sfx\nInherits=freedesktop\nDirectories=stereo\n".utf8).write(to: theme.appending(path: "index.theme"))
        try Data().write(to: theme.appending(path: "stereo/dialog-warning.disabled"))
        try Data().write(to: sounds.appending(path: "lonely.disabled"))
        let environment = ["XDG_DATA_HOME": scratch.appending(path: "data").path]
        let shortened = try sfx(["play", "dialog-warning-foo"], environment: environment)
        XCTAssertEqual(shortened.status, 1)
        XCTAssertTrue(shortened.stderr.contains("system sound 'dialog-warning-foo' is disabled by theme 'sfx' (it has dialog-warning.disabled)"), shortened.stderr)
        let unthemed = try sfx(["play", "lonely"], environment: environment)
        XCTAssertEqual(unthemed.status, 1)
        XCTAssertTrue(unthemed.stderr.contains("system sound 'lonely' is disabled by the unthemed file \(sounds.path)/lonely.disabled"), unthemed.stderr)
        XCTAssertFalse(unthemed.stderr.contains("theme ''"), unthemed.stderr)
    }
}
