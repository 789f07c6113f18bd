// `sfx record` and `sfx meter` on a machine as a new user meets it: no sound card, and the
// machine's ALSA (pipewire-alsa makes `default` PipeWire's) with no sound server running.
// Without -D they record from sfx's virtual card, fed by SFX_VIRTUAL_INPUT; a server's device
// given by name fails with one line that says there is neither card nor server, and the fix.
import Foundation
import SFXTestSupport
import Glibc
import XCTest
import SFXCardSupport

final class VirtualInputTests: XCTestCase {
    /// A private directory (0700) holding the run's home, runtime directory, input and output.
    var directory: URL!

    override func setUpWithError() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else {
            throw XCTSkip("hiding the sound cards needs root and unshare(1)")
        }
        directory = try CardDirectory.makeTemporary(prefix: "sfx-virtual-input-")
    }

    override func tearDownWithError() throws {
        if let directory { try FileManager.default.removeItem(at: directory) }
    }

    /// With SFX_VIRTUAL_INPUT and no device given: a notice on standard error, and the saved
    /// file holds exactly the fed input.
    func testRecordWithoutADeviceSavesTheVirtualInput() throws {
        let source = Signal.music(seconds: 1.5, channels: 1)
        let input = directory.appending(path: "input.wav")
        try WAVAudio(sampleRate: 48_000, channels: 1, samples: source).write(to: input)
        let take = directory.appending(path: "take.wav")
        let run = try run(["record", "--max", "1", "-o", take.path], input: input)
        XCTAssertEqual(run.status, 0, run.stderr)
        let card = directory.appending(path: "runtime/sfx/card").path
        XCTAssertTrue(run.stderr.hasPrefix("sfx: no sound card here: recording from sfx's virtual card (\(card)), which plays SFX_VIRTUAL_INPUT=\(input.path) into its input\n"), run.stderr)
        XCTAssertTrue(run.stdout.hasPrefix("saved \(take.path) (1.00 s, wav, "), run.stdout)
        let saved = try Decoded.soundFile(take)
        XCTAssertEqual(saved.frames, 48_000)
        assertSamplesEqual(saved.samples, Array(source.prefix(48_000)))
    }

    /// Without SFX_VIRTUAL_INPUT: the notice says the card records silence and how to feed it;
    /// `sfx meter` takes the same way; an unreadable SFX_VIRTUAL_INPUT is one line with the fix.
    func testWithoutAnInputTheCardRecordsSilenceAndSaysSo() throws {
        let take = directory.appending(path: "silence.wav")
        let run = try run(["record", "--max", "0.5", "-o", take.path], input: nil)
        XCTAssertEqual(run.status, 0, run.stderr)
        let notice = "sfx: no sound card here: recording from sfx's virtual card (\(directory.appending(path: "runtime/sfx/card").path)), which records silence: set SFX_VIRTUAL_INPUT to a sound file to record that instead\n"
        XCTAssertTrue(run.stderr.hasPrefix(notice), run.stderr)
        let saved = try Decoded.soundFile(take)
        XCTAssertEqual(saved.frames, 24_000)
        XCTAssertTrue(saved.samples.allSatisfy { $0 == 0 })

        let meter = try self.run(["meter", "--seconds", "0.5", "--channels", "1"], input: nil)
        XCTAssertEqual(meter.status, 0, meter.stderr)
        XCTAssertTrue(meter.stderr.hasPrefix(notice), meter.stderr)
        XCTAssertTrue(meter.stderr.contains("1 -160.0 dBFS peak -160.0"), meter.stderr)

        let missing = directory.appending(path: "no-such.wav")
        let refused = try self.run(["record", "--max", "0.5", "-o", directory.appending(path: "x.wav").path], input: missing)
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(refused.stderr, "sfx: SFX_VIRTUAL_INPUT names \(missing.path), which cannot be read; point it at a sound file (WAV, FLAC, Ogg…) or unset it\n")
    }

    /// A sound server's device given by name, with no card and no server: one line, ending in a
    /// newline, that says so and names the device and the fix (EHOSTDOWN from PipeWire's plugin,
    /// ECONNREFUSED from Pulse's); no file.
    func testAServersDeviceWithoutCardOrServerIsOneLineWithTheFix() throws {
        for (device, code) in [("pipewire", "EHOSTDOWN"), ("pulse", "ECONNREFUSED")] {
            let take = directory.appending(path: "\(device).m4a")
            let run = try run(["record", "-D", device, "--max", "1", "-o", take.path], input: nil)
            XCTAssertEqual(run.status, 1, run.stderr)
            XCTAssertEqual(run.stderr, "sfx: no sound card here and no sound server running, so capture device '\(device)' cannot open (\(code)): "
                           + "start PipeWire or PulseAudio, pick another device with --device (`sfx devices` lists them), "
                           + "or leave out --device to record from sfx's virtual card\n")
            XCTAssertFalse(FileManager.default.fileExists(atPath: take.path))
            let meter = try self.run(["meter", "-D", device, "--seconds", "0.5"], input: nil)
            XCTAssertEqual(meter.status, 1, meter.stderr)
            XCTAssertEqual(meter.stderr, run.stderr)
        }
    }

    // MARK: Running sfx without sound cards

    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs the `sfx` beside this test bundle in a mount namespace where /dev/snd and
    /// /proc/asound are empty (as ServerChoiceTests do), with the machine's ALSA configuration,
    /// an empty private runtime directory (no sound server to reach) and a home in `directory`.
    func run(_ arguments: [String], input: URL?, program: URL = Sfx.program) throws -> Run {
        let runtime = directory.appending(path: "runtime")
        let home = directory.appending(path: "home")
        for made in [runtime, home] where !FileManager.default.fileExists(atPath: made.path) {
            try FileManager.default.createDirectory(at: made, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        }
        var environment = ProcessInfo.processInfo.environment
        for key in ["ALSA_CONFIG_PATH", "PULSE_SERVER", "PIPEWIRE_REMOTE", "PIPEWIRE_RUNTIME_DIR", "SFX_VIRTUAL_CARD", "SFX_VIRTUAL_INPUT",
                    "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"] {
            environment[key] = nil
        }
        environment["XDG_RUNTIME_DIR"] = runtime.path
        environment["HOME"] = home.path
        if let input { environment["SFX_VIRTUAL_INPUT"] = input.path }
        let hide = """
            for d in /dev/snd /proc/asound; do if [ -e "$d" ]; then mount -t tmpfs none "$d" || exit 97; fi; done
            exec "$0" "$@"
            """
        let run = try runToEnd(URL(filePath: "/usr/bin/unshare"),
                               ["--mount", "--propagation", "private", "--", "/bin/sh", "-c", hide, program.path] + arguments,
                               environment: environment, directory: directory, input: .none, errors: .captured, capture: .files(in: directory))
        return Run(status: run.status, stdout: run.output, stderr: run.errors)
    }
}
