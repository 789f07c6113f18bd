import Foundation
import SFXTestSupport
import XCTest
import SFXMedia

/// Audio piped to `sfx play -` as aplay and sox users pipe it: a WAV whose header has a
/// placeholder length (a pipe cannot be rewound to fill it in), and raw PCM with
/// `--format/--rate/--channels`. Each plays on the virtual card, and the card's recording holds
/// the input, sample for sample.
final class PipedInputTests: CommandTestCase {
    /// Runs `program` with `arguments` and returns its standard output (it must succeed).
    func output(of program: String, _ arguments: [String]) throws -> Data {
        let run = try runToEnd(URL(filePath: program), arguments, errors: .discarded)
        XCTAssertEqual(run.status, 0, "\(program) \(arguments)")
        return run.stdout
    }

    /// Frames of the mixer's start fade at 48 kHz (0.3 ms: frame k of a voice gets (k+1)/14,
    /// Mixer.swift's envelope law), the only change a played sound goes through at unity gain.
    static let startFadeFrames = 14

    /// Checks that the card's recording (48 kHz stereo) holds `left` and `right` from the voice's
    /// first frame: each sample as given, times the start fade. The voice starts where the
    /// recording's first sound is, less the silent frames that open the input.
    func assertRecording(_ run: Run, holds left: [Float], _ right: [Float], file: StaticString = #filePath, line: UInt = #line) throws {
        let path = try XCTUnwrap(run.recording, "no recording named: \(run.stdout) \(run.stderr)", file: file, line: line)
        let cue = try AudioDecoder(format: .standard).decode(contentsOf: URL(filePath: path))
        let samples = withExtendedLifetime(cue) { Array(cue.samples) }
        let frames = samples.count / 2
        let firstSound = try XCTUnwrap((0..<frames).first { samples[2 * $0] != 0 || samples[2 * $0 + 1] != 0 }, "the recording is silent", file: file, line: line)
        let silentLead = (0..<left.count).first { left[$0] != 0 || right[$0] != 0 } ?? 0
        let start = firstSound - silentLead
        XCTAssertGreaterThanOrEqual(frames - start, left.count, "the recording is shorter than the input", file: file, line: line)
        var worst: Float = 0
        for k in 0..<min(left.count, frames - start) {
            let fade = min(1, Float(k + 1) / Float(Self.startFadeFrames))
            worst = max(worst, abs(samples[2 * (start + k)] - left[k] * fade), abs(samples[2 * (start + k) + 1] - right[k] * fade))
        }
        // The card records 32-bit integers, 2^-31 apart: anything more is a changed sample.
        XCTAssertLessThan(worst, 1e-6, "largest difference from the input", file: file, line: line)
        // And nothing follows it.
        XCTAssertTrue(samples[min(samples.count, 2 * (start + left.count))...].allSatisfy { $0 == 0 }, "sound after the input's end", file: file, line: line)
    }

    /// The example of `sfx play --help`, as a shell runs it: the header sox writes to a pipe
    /// promises 536869888 frames, and the sound plays to its real end.
    func testTheSoxPipeOfTheHelpPlays() throws {
        let sfx = CommandTestCase.program.path
        let run = try self.sfx(["-c", "set -o pipefail; sox -n -t wav - synth 0.2 sine 880 gain -6 | '\(sfx)' play -"],
                               program: URL(filePath: "/bin/bash"))
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertFalse(run.stderr.contains("truncated"), run.stderr)
        // sox renders the same tone to a file, with a true length: the reference.
        let reference = scratch.appending(path: "reference.wav")
        _ = try output(of: "/usr/bin/sox", ["-n", reference.path, "synth", "0.2", "sine", "880", "gain", "-6"])
        // Decoded at 48 kHz stereo, as the card records: mono is copied to both sides.
        let expected = try AudioDecoder(format: .standard).decode(contentsOf: reference)
        let tone = withExtendedLifetime(expected) { stride(from: 0, to: expected.samples.count, by: 2).map { expected.samples[$0] } }
        XCTAssertEqual(tone.count, 9_600)
        try assertRecording(run, holds: tone, tone)
    }

    /// The same bytes through `sfx info -`: the length is what the pipe held.
    func testInfoOfAPipedWAVGivesItsRealLength() throws {
        let piped = try output(of: "/usr/bin/sox", ["-n", "-t", "wav", "-", "synth", "0.2", "sine", "880"])
        let info = try sfx("info", "-", input: piped)
        XCTAssertEqual(info.status, 0, info.stderr)
        XCTAssertTrue(info.stdout.contains("48000 Hz  1 ch  9600 frames"), info.stdout)
    }

    /// 16-bit little-endian stereo, interleaved: a different signal on each side.
    func rawStereo(frames: Int) -> (bytes: Data, left: [Float], right: [Float]) {
        var bytes = Data()
        var left: [Float] = [], right: [Float] = []
        for i in 0..<frames {
            let l = Int16((sin(Double(i) * 2 * .pi * 440 / 48_000) * 12_000).rounded())
            let r = Int16(i % 2 == 0 ? 4_096 : -4_096)
            for sample in [l, r] { withUnsafeBytes(of: sample.littleEndian) { bytes.append(contentsOf: $0) } }
            left.append(Float(l) / 32_768)
            right.append(Float(r) / 32_768)
        }
        return (bytes, left, right)
    }

    func testRawPCMOnStandardInputPlaysAsItsFormatSays() throws {
        let (bytes, left, right) = rawStereo(frames: 4_800)
        let run = try sfx(["play", "-", "--format", "S16_LE", "--rate", "48000", "--channels", "2"], input: bytes)
        XCTAssertEqual(run.status, 0, run.stderr)
        try assertRecording(run, holds: left, right)
    }

    func testARawFileNeedsItsFormatAndPlaysWithIt() throws {
        let (bytes, left, right) = rawStereo(frames: 4_800)
        try bytes.write(to: scratch.appending(path: "take.raw"))
        let without = try sfx("play", "take.raw")
        XCTAssertEqual(without.status, 64)
        XCTAssertTrue(without.stderr.hasPrefix("sfx: take.raw: raw PCM has no header to say its layout; give --format SAMPLE"), without.stderr)
        let run = try sfx("play", "take.raw", "--format", "s16_le", "-c", "2")   // --rate: 48000 by default
        XCTAssertEqual(run.status, 0, run.stderr)
        try assertRecording(run, holds: left, right)
        // Bad layouts are usage errors naming the option.
        for (arguments, words) in [(["--format", "S17_LE"], "--format: unknown raw sample format 'S17_LE'"),
                                   (["--format", "S24_LE"], "S24_3LE"),
                                   (["--channels", "2"], "--channels says how raw PCM is laid out: give --format"),
                                   (["--format", "S16_LE", "--start", "1"], "--start streams a sound file with a header"),
                                   (["https://127.0.0.1:9/a.wav", "--format", "S16_LE"], "a URL is played with the header it carries")] {
            let bad = try sfx(["play", "take.raw"] + arguments)
            XCTAssertEqual(bad.status, 64, "\(arguments): \(bad.stderr)")
            XCTAssertTrue(bad.stderr.contains(words), "\(arguments): \(bad.stderr)")
        }
    }
}
