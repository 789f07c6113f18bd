import Foundation
import SFXMedia
import XCTest

/// `sfx play --at`, `sfx render --at-position`, the filter options and `--hrtf`: what reaches the
/// file or the card, the one-line errors, the completions and the manual.
final class WorldCommandTests: CommandTestCase {
    /// A mono sine of amplitude 0.5, as a 32-bit float WAV in the scratch directory.
    func writeTone(_ name: String, frequency: Double, seconds: Double = 0.5) throws -> URL {
        let url = scratch.appending(path: name)
        let tone = (0..<Int(48_000 * seconds)).map { Float(0.5 * sin(2 * Double.pi * frequency * Double($0) / 48_000)) }
        try AudioFileWriter.write(tone, sampleRate: 48_000, channels: 1, to: url, as: .wavFloat32)
        return url
    }

    /// The RMS of each channel of a stereo file.
    func levels(_ url: URL) throws -> (left: Double, right: Double) {
        let cue = try AudioDecoder(format: .standard).decode(contentsOf: url)
        return withExtendedLifetime(cue) {
            let samples = Array(cue.samples)
            func rms(_ channel: Int) -> Double {
                var sum = 0.0
                var n = 0
                for i in stride(from: channel, to: samples.count, by: 2) {
                    sum += Double(samples[i]) * Double(samples[i])
                    n += 1
                }
                return (sum / Double(max(1, n))).squareRoot()
            }
            return (rms(0), rms(1))
        }
    }

    /// At (5, 0, 0) the sound is straight to the listener's right: by the equal-power law (pan
    /// 1: left cos(π/2) = 0, right sin(π/2) = 1) all of it is in the right channel, at 1/5 of
    /// its level (inverse clamped distance from 1 unit); at (−5, 0, 0) the mirror image.
    func testRenderAtAPositionToTheRightIsInTheRightChannelAtOneOverTheDistance() throws {
        let tone = try writeTone("tone.wav", frequency: 440)
        let plain = scratch.appending(path: "plain.wav"), right = scratch.appending(path: "right.wav"), left = scratch.appending(path: "left.wav")
        for (output, extra) in [(plain, [String]()), (right, ["--at-position", "5,0,0"]), (left, ["--at-position", "-5,0,0"])] {
            let run = try sfx(["render", tone.path, "-o", output.path, "-q"] + extra)
            XCTAssertEqual(run.status, 0, "\(extra): \(run.stderr)")
        }
        let centre = try levels(plain)
        // A mono file is played as recorded on both channels when not positional.
        XCTAssertEqual(centre.left, 0.5 / 2.0.squareRoot(), accuracy: 0.005)
        let r = try levels(right), l = try levels(left)
        XCTAssertLessThan(r.left, 1e-4 * r.right, "right: \(r)")
        XCTAssertEqual(r.right / centre.right, 0.2, accuracy: 0.004, "right: \(r), centre \(centre)")
        XCTAssertLessThan(l.right, 1e-4 * l.left, "left: \(l)")
        XCTAssertEqual(l.left / centre.left, 0.2, accuracy: 0.004, "left: \(l), centre \(centre)")
    }

    func testRenderWithHRTFFiltersLowPassAndALength() throws {
        let tone = try writeTone("high.wav", frequency: 8_000)
        let plain = scratch.appending(path: "plain.wav"), low = scratch.appending(path: "low.wav")
        XCTAssertEqual(try sfx(["render", tone.path, "-o", plain.path, "-q"]).status, 0)
        let filtered = try sfx(["render", tone.path, "-o", low.path, "--lowpass", "500", "--seconds", "2"])
        XCTAssertEqual(filtered.status, 0, filtered.stderr)
        XCTAssertTrue(filtered.stdout.contains("96000 frames"), filtered.stdout)
        // 500 Hz Butterworth at 8 kHz: −48 dB (the tone lasts a quarter of the 2 s render).
        let before = try levels(plain).left, after = try levels(low).left * 2
        XCTAssertLessThan(after, before * 0.01, "before \(before), after \(after)")
        XCTAssertGreaterThan(after, 0, "the filtered tone is silent")
        // Band-pass and high-pass at the tone's frequency pass it; a high-pass above cuts it.
        for (options, passes) in [(["--bandpass", "8000", "--q", "2"], true), (["--highpass", "16000"], false)] {
            let out = scratch.appending(path: "f.wav")
            XCTAssertEqual(try sfx(["render", tone.path, "-o", out.path, "-q"] + options).status, 0)
            let level = try levels(out).left
            XCTAssertTrue(passes ? level > before * 0.8 : level < before * 0.5, "\(options): \(level), unfiltered \(before)")
        }
        guard FileManager.default.fileExists(atPath: "/usr/share/libmysofa/default.sofa") else { return XCTFail("libmysofa1's default SOFA set is not installed (script/common.sh installs libmysofa-dev, which brings it)") }
        let hrtf = scratch.appending(path: "hrtf.wav")
        let run = try sfx(["render", try writeTone("tone.wav", frequency: 440).path, "-o", hrtf.path, "--at-position", "5,0,0", "--hrtf", "-q"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let ears = try levels(hrtf)
        XCTAssertGreaterThan(ears.right, 1.5 * ears.left, "\(ears)")
        XCTAssertGreaterThan(ears.left, 0, "an HRTF reaches the far ear too: \(ears)")
    }

    /// `--reverb` renders the preset's tail after the sound: the mix lasts until it has decayed.
    func testRenderWithAReverbHasItsTail() throws {
        let tone = try writeTone("tone.wav", frequency: 440, seconds: 0.2)
        let out = scratch.appending(path: "room.wav")
        let run = try sfx(["render", tone.path, "-o", out.path, "--reverb", "room"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let cue = try AudioDecoder(format: .standard).decode(contentsOf: out)
        try withExtendedLifetime(cue) {
            let samples = Array(cue.samples)
            // 0.2 s of tone, then room's 0.40 s RT60 × 96/60 and its pre-delay.
            XCTAssertEqual(samples.count / 2, Int((0.2 + 0.002 + 0.40 * 96 / 60) * 48_000), accuracy: 2)
            let after = samples[(Int(0.25 * 48_000) * 2)...].map(abs).max() ?? 0
            XCTAssertGreaterThan(after, 0.001, "no tail after the tone")
            let bad = try sfx(["render", tone.path, "-o", out.path, "--reverb", "nope"])
            XCTAssertEqual(bad.status, 64)
            XCTAssertTrue(bad.stderr.contains("'--reverb'") && bad.stderr.contains("hall"), bad.stderr)
        }
    }

    /// `sfx play --at` on the virtual card, in-process: the recording's right channel only.
    func testPlayAtAPointInProcess() throws {
        let tone = try writeTone("tone.wav", frequency: 440, seconds: 0.3)
        let run = try sfx(["play", "--no-daemon", tone.path, "--at", "4,0,0", "--highpass", "100"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let recording = try XCTUnwrap(run.recording, run.stdout)
        let (left, right) = try levels(URL(filePath: recording))
        XCTAssertGreaterThan(right, 0.01, "not heard")
        XCTAssertLessThan(left, right * 0.001, "left \(left), right \(right)")
    }

    /// `sfx play --reverb` waits for the tail, which the engine's idle does not count: the
    /// recording goes on after the tone by room's decay (0.40 s × 96/60).
    func testPlayWithAReverbEndsAfterItsTail() throws {
        let tone = try writeTone("tone.wav", frequency: 440, seconds: 0.2)
        let run = try sfx(["play", "--no-daemon", tone.path, "--reverb", "room"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let cue = try AudioDecoder(format: .standard).decode(contentsOf: URL(filePath: try XCTUnwrap(run.recording, run.stdout)))
        try withExtendedLifetime(cue) {
            let left = stride(from: 0, to: cue.samples.count, by: 2).map { cue.samples[$0] }
            let onset = try XCTUnwrap(left.firstIndex { abs($0) > 0.01 }, "the tone was not heard")
            let after = left.dropFirst(onset + Int(0.3 * 48_000))
            XCTAssertGreaterThanOrEqual(after.count, Int(0.5 * 48_000), "the recording ends before the tail")
            XCTAssertGreaterThan(after.map(abs).max() ?? 0, 0.001, "no tail after the tone")
        }
    }

    func testBadValuesAreOneLineUsageErrorsNamingTheOptionAndTheForm() throws {
        let cases: [([String], [String])] = [
            (["play", "tock", "--at", "1,2"], ["'--at'", "X,Y,Z"]), (["play", "tock", "--at", "1,2,x"], ["'--at'", "X,Y,Z"]),
            (["play", "tock", "--at", "1,2,3,4"], ["'--at'", "X,Y,Z"]), (["play", "tock", "--at", "nan,0,0"], ["'--at'", "X,Y,Z"]),
            (["render", "tock", "-o", "o.wav", "--at-position", "1,2"], ["'--at-position'", "X,Y,Z"]),
            (["render", "tock", "-o", "o.wav", "--at-position", "1,0,0", "--at-position", "2,0,0"], ["--at-position", "than sounds"]),
            (["play", "tock", "--lowpass", "5"], ["--lowpass"]), (["play", "tock", "--lowpass", "100", "--bandpass", "200"], ["--lowpass", "--bandpass"]),
            (["play", "tock", "--q", "2"], ["--q", "--lowpass"]), (["play", "tock", "--lowpass", "100", "--q", "0"], ["--q"]),
            (["play", "tock", "--hrtf"], ["--hrtf", "--at"]), (["render", "tock", "-o", "o.wav", "--hrtf"], ["--hrtf", "--at-position"]),
            (["render", "tock", "-o", "o.wav", "--seconds", "0"], ["--seconds"]),
        ]
        for (arguments, words) in cases {
            let run = try sfx(arguments)
            XCTAssertEqual(run.status, 64, "\(arguments): \(run.stderr)")
            XCTAssertTrue(run.stderr.hasPrefix("sfx: "), "\(arguments): \(run.stderr)")
            XCTAssertEqual(run.stderr.split(separator: "\n").filter { $0.hasPrefix("sfx: ") }.count, 1, "\(arguments): \(run.stderr)")
            for word in words { XCTAssertTrue(run.stderr.split(separator: "\n")[0].contains(word), "\(arguments): \(run.stderr)") }
        }
        // -q is still --quiet where --q exists.
        let quiet = try sfx(["render", "tock", "-o", scratch.appending(path: "q.wav").path, "-q", "--lowpass", "1000", "--q", "2"])
        XCTAssertEqual(quiet.status, 0, quiet.stderr)
        XCTAssertEqual(quiet.stdout, "")
    }

    /// The new options are completed (bash and zsh), and sfx.1 and docs/cli.md describe them;
    /// every option of play, render, serve and alert is in sfx.1.
    func testCompletionsAndTheManualKnowTheNewOptions() throws {
        let bash = try sfx("completion", "bash").stdout
        let zsh = try sfx("completion", "zsh").stdout
        let added = ["play": ["--at", "--lowpass", "--highpass", "--bandpass", "--q", "--reverb", "--hrtf"],
                     "render": ["--at-position", "--lowpass", "--highpass", "--bandpass", "--q", "--reverb", "--hrtf", "--seconds"],
                     "serve": ["--hrtf"], "alert": ["--follow"]]
        for (command, options) in added {
            let bashCase = bash.components(separatedBy: "\n        \(command))\n")[1].components(separatedBy: "\n            ;;\n")[0]
            let zshCase = zsh.components(separatedBy: "\n        \(command))\n")[1].components(separatedBy: "\n            ;;\n")[0]
            for option in options {
                XCTAssertTrue(bashCase.contains(" \(option) ") || bashCase.contains(" \(option)\""), "bash, \(command): \(option)")
                XCTAssertTrue(zshCase.contains("'\(option)[") || zshCase.contains("'*\(option)["), "zsh, \(command): \(option)")
            }
        }
        XCTAssertTrue(bash.contains("--reverb) COMPREPLY=($(compgen -W \"room hall cave"), "bash: --reverb's presets")
        let checkout = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let manual = try String(contentsOf: checkout.appending(path: "docs/sfx.1"), encoding: .utf8)
        let cli = try String(contentsOf: checkout.appending(path: "docs/cli.md"), encoding: .utf8)
        for options in added.values {
            for option in options { XCTAssertTrue(cli.contains(option + " ") || cli.contains(option + "`"), "docs/cli.md: \(option)") }
        }
        for command in ["play", "render", "serve", "alert"] {
            let help = try sfx(command, "--help").stdout
            let lines = help.components(separatedBy: "OPTIONS:\n")[1].components(separatedBy: "\n\n")[0].split(separator: "\n")
            for line in lines {
                guard let long = line.range(of: #"--[a-z][a-z-]*"#, options: .regularExpression).map({ String(line[$0]) }) else { continue }
                let short = line.range(of: #"^ +-[a-zA-Z],"#, options: .regularExpression).map { String(line[$0]).trimmingCharacters(in: .whitespaces).dropLast() }
                let written = [long.replacingOccurrences(of: "-", with: "\\-")] + (short.map { [$0.replacingOccurrences(of: "-", with: "\\-")] } ?? [])
                XCTAssertTrue(written.contains { manual.contains($0) }, "sfx.1 does not describe \(command) \(long)")
            }
        }
    }
}
