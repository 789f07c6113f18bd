import Foundation
import XCTest
import SFXMedia

/// The `sfx` program as a user runs it: exit codes, one-line errors, list/info/render output.
final class CommandLineTests: CommandTestCase {
    func testVersionAndHelp() throws {
        let version = try sfx("--version")
        XCTAssertEqual(version.status, 0)
        XCTAssertTrue(version.stdout.hasPrefix("sfx "))
        for command in ["list", "info", "render", "play"] {
            let help = try sfx(command, "--help")
            XCTAssertEqual(help.status, 0, command)
            XCTAssertTrue(help.stdout.contains("USAGE: sfx \(command)"), help.stdout)
        }
        XCTAssertTrue(try sfx("--help").stdout.contains("SUBCOMMANDS:"))
    }

    func testUsageErrorsExit64OnStderr() throws {
        for arguments in [["frobnicate"], ["info"], ["list", "--bogus"], ["render", "tock"], ["render", "tock", "-o"],
                          ["render", "tock", "-o", "x.wav", "--volume", "5"], []] {
            let run = try sfx(arguments)
            XCTAssertEqual(run.status, 64, "\(arguments): \(run.stderr)")
            XCTAssertTrue(run.stdout.isEmpty, "\(arguments)")
            XCTAssertTrue(run.stderr.hasPrefix("sfx: ") || arguments.isEmpty, run.stderr)
        }
    }

    func testListShowsTheBundledAndFreedesktopSounds() throws {
        let run = try sfx("list")
        XCTAssertEqual(run.status, 0, run.stderr)
        let lines = run.stdout.split(separator: "\n")
        XCTAssertGreaterThanOrEqual(lines.filter { $0.contains(" sfx ") }.count, 16)
        XCTAssertTrue(lines.contains { $0.hasPrefix("1000  tock ") })
        XCTAssertTrue(lines.contains { $0.contains("phone-incoming-call") && $0.contains("freedesktop") })

        let json = try sfx("list", "--json")
        let rows = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        XCTAssertEqual(rows?.count, lines.count - 1)
        XCTAssertEqual(rows?.first?["name"] as? String, "tock")
    }

    func testInfoNamesTheMimeTypeOfTheContent() throws {
        // An Ogg Opus file named .bin: the content decides.
        let opus = scratch.appending(path: "recording.bin")
        let tone = (0..<24_000).map { Float(0.3 * sin(Double($0) * 0.05)) }
        try AudioFileWriter.write(tone, sampleRate: 48_000, channels: 1, to: opus, as: .oggOpus)
        let opusInfo = try sfx("info", opus.path)
        XCTAssertEqual(opusInfo.status, 0, opusInfo.stderr)
        XCTAssertTrue(opusInfo.stdout.contains("audio/ogg  .opus"), opusInfo.stdout)

        try AudioFileWriter.write(tone, sampleRate: 48_000, channels: 1, to: scratch.appending(path: "tone.wav"), as: .wavPCM16)
        let render = try sfx("render", scratch.appending(path: "tone.wav").path, "-o", scratch.appending(path: "mix.wav").path)
        XCTAssertEqual(render.status, 0, render.stderr)
        let info = try sfx("info", scratch.appending(path: "mix.wav").path, "--json")
        XCTAssertEqual(info.status, 0, info.stderr)
        let fields = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [[String: Any]]).first
        XCTAssertEqual(fields?["mimeType"] as? String, "audio/wav")
        XCTAssertEqual(fields?["sampleRate"] as? Int, 48_000)
        XCTAssertEqual(fields?["frames"] as? Int, 24_000)

        let ogg = try sfx("info", "/usr/share/sounds/freedesktop/stereo/bell.oga")
        XCTAssertEqual(ogg.status, 0, ogg.stderr)
        XCTAssertTrue(ogg.stdout.contains("audio/ogg  .ogg"), ogg.stdout)
    }

    func testInfoOnACorruptFileIsOneLineAndFails() throws {
        let corrupt = scratch.appending(path: "corrupt.wav")
        var bytes = Array("RIFF\u{24}\u{0}\u{0}\u{0}WAVEfmt ".utf8)
        bytes += [UInt8](repeating: 0xFF, count: 40)
        try Data(bytes).write(to: corrupt)
        let run = try sfx("info", corrupt.path)
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stdout.isEmpty)
        XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, run.stderr)
        XCTAssertTrue(run.stderr.hasPrefix("sfx: \(corrupt.path):"), run.stderr)

        let missing = try sfx("info", scratch.appending(path: "missing.wav").path)
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.stderr.split(separator: "\n").count, 1, missing.stderr)
    }

    func testRenderMixesAtTheGivenTimes() throws {
        let out = scratch.appending(path: "out.wav")
        let run = try sfx("render", "tock", "tink", "-o", out.path, "--at", "0", "--at", "0.5")
        XCTAssertEqual(run.status, 0, run.stderr)
        // tink (250 ms) starts at 0.5 s: the mix lasts 0.75 s.
        XCTAssertTrue(run.stdout.contains("36000 frames"), run.stdout)
        let tooMany = try sfx("render", "tock", "-o", out.path, "--at", "0", "--at", "1")
        XCTAssertEqual(tooMany.status, 64)
    }

    /// WAV under another audio format's name would not play as the name promises: refused, with
    /// the names render writes; a name without an extension still gets WAV.
    func testRenderRefusesAnAudioExtensionItDoesNotWrite() throws {
        let wma = scratch.appending(path: "out.wma")
        let refused = try sfx("render", "tock", "-o", wma.path)
        XCTAssertEqual(refused.status, 64, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("sfx render does not write .wma files; name the output .wav, .flac"), refused.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: wma.path), "nothing is written")
        let plain = scratch.appending(path: "out")
        let written = try sfx("render", "tock", "-o", plain.path)
        XCTAssertEqual(written.status, 0, written.stderr)
        XCTAssertTrue(written.stdout.contains("(wav)"), written.stdout)
        let forced = try sfx("render", "tock", "-o", wma.path, "--format", "flac")
        XCTAssertEqual(forced.status, 0, forced.stderr)
    }

    func testPlayPlaysThroughTheVirtualCard() throws {
        let run = try sfx("play", "tock")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("playing through sfx's virtual card"), run.stderr)
        let path = try XCTUnwrap(run.stdout.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines))
        let recording = try AudioDecoder(format: .standard).decode(contentsOf: URL(filePath: path))
        XCTAssertGreaterThanOrEqual(recording.frameCount, 3840, "tock reached the card")
    }

    func testPlayOnAnAbsentDeviceIsOneLine() throws {
        let run = try sfx("play", "tock", "--device", "hw:9,0")
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("'hw:9,0'") && run.stderr.contains("sfx devices"), run.stderr)
        XCTAssertEqual(try sfx("play", "no-such-sound").status, 1)
    }

    func testMuteFlagIsSharedThroughItsFile() throws {
        XCTAssertTrue(try sfx("mute").stdout.hasPrefix("sfx mute flag: off"))
        XCTAssertTrue(try sfx("mute", "on").stdout.hasPrefix("sfx mute flag: on"))
        let flag = scratch.appending(path: "state/sfx/muted")
        XCTAssertEqual(try String(contentsOf: flag, encoding: .utf8), "1\n")
        XCTAssertTrue(try sfx("mute", "toggle").stdout.hasPrefix("sfx mute flag: off"))
        XCTAssertEqual(try sfx("mute", "sideways").status, 64)
    }

    func testHapticsSaysWhyEachBackendIsMissing() throws {
        let run = try sfx("haptics")
        XCTAssertEqual(run.status, 0, run.stderr)
        for backend in ["evdev", "gpio", "sysfs", "command", "callback"] {
            XCTAssertTrue(run.stdout.contains("\n\(backend) ") || run.stdout.hasPrefix(backend), "\(backend): \(run.stdout)")
        }
        XCTAssertTrue(run.stdout.contains("FF_RUMBLE"), run.stdout)
    }

    func testVibrateWithNothingToVibrateIsOneLine() throws {
        let run = try sfx("vibrate", "--backend", "evdev", "--input-device", "/dev/input/event99")
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, run.stderr)
        XCTAssertEqual(try sfx("vibrate", "--pattern", "200,-1").status, 64)
        XCTAssertEqual(try sfx("vibrate", "--effect", "wobble").status, 64)
    }

    func testAlertWhileMutedWithoutHapticsSaysItWasUnheard() throws {
        XCTAssertEqual(try sfx("mute", "on").status, 0)
        let run = try sfx("alert", "bell")
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stdout.contains("not played") && run.stdout.contains("could not vibrate"), run.stdout)
        XCTAssertEqual(try sfx("mute", "off").status, 0)
        let heard = try sfx("alert", "bell")
        XCTAssertEqual(heard.status, 0, heard.stderr)
        XCTAssertTrue(heard.stdout.contains("played"), heard.stdout)
    }
}
