import Foundation
import XCTest
import SFXMedia

/// Loudness in the `sfx` command: `info` shows it, `list` shows each sound's class, and
/// `play --normalize` brings a file to a loudness before it plays.
final class LoudnessCommandTests: CommandTestCase {
    /// A mono 997 Hz sine of `amplitude` (it reads 20·log10(amplitude) LUFS, mono counting on both speakers).
    func writeTone(_ name: String, seconds: Double, amplitude: Double) throws -> URL {
        let url = scratch.appending(path: name)
        let samples = (0..<Int(seconds * 48_000)).map { Float(amplitude * sin(2 * .pi * 997 * Double($0) / 48_000)) }
        try AudioFileWriter.write(samples, sampleRate: 48_000, channels: 1, to: url, as: .wavFloat32)
        return url
    }

    func testInfoShowsLoudnessAndTruePeak() throws {
        let tone = try writeTone("tone.wav", seconds: 1, amplitude: 0.1)
        let run = try sfx("info", tone.path)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.hasSuffix("1.000 s  -20.0 LUFS  -20.0 dBTP\n"), run.stdout)

        let click = try writeTone("click.wav", seconds: 0.1, amplitude: 0.1)
        let short = try sfx("info", click.path)
        XCTAssertTrue(short.stdout.hasSuffix("0.100 s  -26.0 LUFS (momentary max)  -20.0 dBTP\n"), short.stdout)

        let json = try sfx("info", "--json", tone.path)
        let fields = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]).first
        XCTAssertEqual(try XCTUnwrap(fields?["lufs"] as? Double), -20, accuracy: 0.1)
        XCTAssertEqual(try XCTUnwrap(fields?["truePeak"] as? Double), -20, accuracy: 0.1)
        XCTAssertEqual(fields?["loudnessMethod"] as? String, "integrated")
        XCTAssertEqual(fields?["mimeType"] as? String, "audio/wav", "the file's other fields stay")

        let silence = scratch.appending(path: "silence.wav")
        try AudioFileWriter.write([Float](repeating: 0, count: 4800), sampleRate: 48_000, channels: 1, to: silence, as: .wavPCM16)
        XCTAssertTrue(try sfx("info", silence.path).stdout.hasSuffix("0.100 s  silent\n"))
    }

    func testInfoOfASystemSoundShowsItsClassLevel() throws {
        let run = try sfx("info", "alarm")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.contains("  -14.0 LUFS  "), run.stdout)
    }

    func testListShowsEachSystemSoundsClass() throws {
        let run = try sfx("list")
        XCTAssertEqual(run.status, 0, run.stderr)
        let lines = run.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        XCTAssertEqual(Array(lines.first?.prefix(5) ?? []), ["ID", "NAME", "THEME", "CLASS", "DURATION"])
        func row(_ name: String) -> [String]? { lines.first { $0.count > 1 && $0[1] == name } }
        XCTAssertEqual(row("tock")?[3], "input-feedback")
        XCTAssertEqual(row("sent")?[3], "notification")
        XCTAssertEqual(row("dialog-warning")?[3], "dialog")
        XCTAssertEqual(row("alarm")?[3], "alarm")
        XCTAssertEqual(row("window-attention")?[2], "freedesktop")
        XCTAssertEqual(row("window-attention")?[3], "dialog", "inherited events have their class too")
        XCTAssertEqual(row("audio-channel-front-left")?[3], "-")

        let json = try sfx("list", "--json")
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(rows.first { $0["name"] as? String == "low-power" }?["loudnessClass"] as? String, "alarm")
    }

    func testPlayNormalizeBringsAFileToTheTarget() throws {
        let quiet = try writeTone("quiet.wav", seconds: 1, amplitude: 0.01)      // −40 LUFS
        let recording = scratch.appending(path: "sfx/card/playback.wav")
        for (arguments, expected) in [([String](), -40.0), (["--normalize"], -23.0), (["--normalize-to", "-30"], -30.0)] {
            let run = try sfx(["play"] + arguments + [quiet.path])
            XCTAssertEqual(run.status, 0, "\(arguments): \(run.stderr)")
            // What reached the card: the sound with a little silence around it (gated out).
            let played = try Loudness(contentsOf: recording)
            XCTAssertEqual(try XCTUnwrap(played.lufs), expected, accuracy: 0.5, "\(arguments)")
        }
    }

    func testPlayNormalizeOfSilenceFailsInOneLine() throws {
        let silence = scratch.appending(path: "hush.wav")
        try AudioFileWriter.write([Float](repeating: 0, count: 24_000), sampleRate: 48_000, channels: 1, to: silence, as: .wavPCM16)
        let run = try sfx("play", "--normalize", silence.path)
        XCTAssertEqual(run.status, 1)
        let errors = run.stderr.split(separator: "\n").filter { !$0.contains("virtual card") }
        XCTAssertEqual(errors, ["sfx: \(silence.path): is silent (nothing above −70 LUFS), so it cannot be normalised to a loudness; load it without normalising, or give it sound"])
        XCTAssertEqual(try sfx("play", "--normalize-to", "5", silence.path).status, 64, "a target above 0 LUFS is a usage error")
    }
}
