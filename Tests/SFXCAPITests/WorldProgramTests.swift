import Foundation
import XCTest
import SFXCardSupport

/// Sound in a game's world from C (Tests/SFXCAPITests/C/world_check.c): the listener, the world,
/// sources, filters and HRTF through their errors, then one positional scene on the card.
extension CProgramTests {
    /// Builds world_check.c for `scene`, runs it on the card and returns its output and the
    /// recording of its last engine (the scene's; the HRTF check opens one before it).
    func runWorldScene(_ scene: Int, file: StaticString = #filePath, line: UInt = #line) throws -> (String, WAVAudio) {
        let program = try build(Installed.checkout.appending(path: "Tests/SFXCAPITests/C/world_check.c"), "world_check_\(scene)",
                                flags: "-std=c11 -Wall -Wextra -Werror -DSCENE=\(scene)")
        let run = try runOnCard(program)
        XCTAssertEqual(run.status, 0, run.output + run.errors, file: file, line: line)
        XCTAssertTrue(run.output.hasSuffix("ok\n"), run.output, file: file, line: line)
        let recording = try WAVAudio(contentsOf: try XCTUnwrap(card.recordingURLs().last, "nothing was recorded", file: file, line: line))
        XCTAssertEqual(recording.channels, 2, file: file, line: line)
        return (run.output, recording)
    }

    /// A tone 2 units to the right of the listener (inverse clamped from 1 unit: gain 0.5, panned
    /// fully right by equal power) reaches the right channel at a quarter of full scale and the
    /// left not at all; every error along the way is one line that names the setting.
    func testASourceToTheRightIsHeardOnTheRightChannel() throws {
        let (output, recording) = try runWorldScene(1)
        let left = recording.channel(0), right = recording.channel(1)
        func rms(_ samples: [Float]) -> Float { (samples.reduce(0) { $0 + $1 * $1 } / Float(max(samples.count, 1))).squareRoot() }
        let peakRight = right.map(abs).max() ?? 0, peakLeft = left.map(abs).max() ?? 0
        print("right: peak \(peakRight), rms \(rms(right)); left: peak \(peakLeft), rms \(rms(left))")
        XCTAssertEqual(peakRight, 0.25, accuracy: 0.02, "0.5 × the distance gain 0.5 at 2 units")
        XCTAssertGreaterThan(rms(right), 100 * rms(left), "left rms \(rms(left)), right rms \(rms(right))")
        XCTAssertLessThan(peakLeft, 0.01)

        // The cutoff's range error, as sfx's settings give it.
        let message = try XCTUnwrap(output.split(separator: "\n").first { $0.hasPrefix("filter error: ") }?.dropFirst("filter error: ".count))
        XCTAssertEqual(String(message), "filter.cutoff 5.0 is out of range: use a number from 10.0 to 96000.0")
        XCTAssertTrue(output.contains("hrtf: default.sofa, "), output)
    }

    /// A linear clamped source 50 units away with a maximum distance of 10 is silent (OpenAL's
    /// gain 1 − (10 − 1) / (10 − 1) = 0), yet plays to its end.
    func testALinearClampedSourceBeyondItsMaximumDistanceIsSilent() throws {
        let (_, recording) = try runWorldScene(2)
        XCTAssertGreaterThan(recording.frameCount, 0)
        XCTAssertEqual(recording.samples.map(abs).max() ?? 0, 0, "a source beyond its maximum distance was heard")
    }
}

extension CProgramTests {
    /// docs/c-api.md's example of sound in a game's world, its ```c block as the page gives it,
    /// builds as C99 with warnings as errors and runs on the card to its end.
    func testTheCAPIPagesWorldExampleBuildsAndRuns() throws {
        let page = try String(contentsOf: Installed.checkout.appending(path: "docs/c-api.md"), encoding: .utf8)
        let world = try XCTUnwrap(page.components(separatedBy: "## Sound in a game's world").dropFirst().first)
        let block = try XCTUnwrap(world.components(separatedBy: "\n```c\n").dropFirst().first?.components(separatedBy: "\n```\n").first,
                                  "the section has no ```c block")
        let source = scratch.appending(path: "world_example.c")
        try (block + "\n").write(to: source, atomically: true, encoding: .utf8)
        let program = try build(source, "world_example", flags: "-std=c99 -Wall -Wextra -Werror")
        let run = try runOnCard(program)
        XCTAssertEqual(run.status, 0, run.output + run.errors)
        XCTAssertEqual(run.errors, "")
        let recording = try WAVAudio(contentsOf: try XCTUnwrap(card.recordingURLs().last, "nothing was recorded"))
        XCTAssertGreaterThan(recording.samples.map(abs).max() ?? 0, 0.01, "the example played nothing")
    }
}

extension CProgramTests {
    /// The tone (0.4 s, centred) sending all of itself to bus 0's echo of one tap (delay 0.5 s,
    /// feedback 0, wet 0.5): silence between the tone's end and the tap, then the tap at half
    /// the tone's level.
    func testAVoiceSendingToAnEchoBusIsHeardAgainAfterTheDelay() throws {
        let (_, recording) = try runWorldScene(3)
        let rate = Float(recording.sampleRate)
        func frame(_ seconds: Float) -> Int { Int(seconds * rate) }
        let loudest = (0..<recording.frameCount).map { max(abs(recording.samples[2 * $0]), abs(recording.samples[2 * $0 + 1])) }
        let onset = try XCTUnwrap(loudest.firstIndex { $0 > 0.001 }, "nothing was heard")
        func peak(_ from: Float, _ to: Float) -> Float {
            let range = min(onset + frame(from), loudest.count)..<min(onset + frame(to), loudest.count)
            return loudest[range].max() ?? 0
        }
        let dry = peak(0.05, 0.35), gap = peak(0.42, 0.48), tap = peak(0.55, 0.85)
        print("echo: dry peak \(dry), between \(gap), tap \(tap)")
        XCTAssertEqual(dry, 0.5, accuracy: 0.02, "the tone as loaded (made stereo at load, so centred is unity)")
        XCTAssertLessThan(gap, 0.001, "something between the tone and its echo")
        XCTAssertEqual(tap, 0.25, accuracy: 0.02, "the tap: wet 0.5 × the tone")
    }
}
