import Foundation
import SFXTestSupport
import SFXCore
import XCTest
@testable import SFXMedia

/// Damaged files must load or throw `MediaError`, never trap. A quick pass in the suite; the
/// `sfx-fuzz` program (Tests/Fuzz) runs the same kind of damage for as long as you like, with
/// crashes caught in a child process.
final class FuzzTests: XCTestCase {
    /// A small deterministic generator (xorshift64*), so every run mutates the same bytes.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return state &* 2_685_821_657_736_338_717
        }
    }

    func testMutatedAndTruncatedFilesNeverTrap() throws {
        let directory = try TemporaryDirectory()
        let decoder = AudioDecoder(format: .standard)
        var generator = Generator(state: 0x5EED_5EED_5EED_5EED)
        let sine = Signal.sine(frequency: 330, sampleRate: 48_000, frames: 4_800, channels: 2)
        var outcomes = (loaded: 0, refused: 0)
        for encoding in AudioFileEncoding.allCases {
            let original = directory.file("original-\(encoding)")
            try AudioFileWriter.write(sine, sampleRate: 48_000, channels: 2, to: original, as: encoding)
            let bytes = [UInt8](try Data(contentsOf: original))
            for trial in 0..<60 {
                var damaged = bytes
                if trial % 3 == 0 {
                    damaged = Array(damaged.prefix(Int.random(in: 0..<bytes.count, using: &generator)))
                } else {
                    // Headers matter most: aim half of the mutations at the first 64 bytes.
                    for _ in 0..<Int.random(in: 1...8, using: &generator) {
                        let limit = Bool.random(using: &generator) ? min(64, damaged.count) : damaged.count
                        damaged[Int.random(in: 0..<limit, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                    }
                }
                let url = directory.file("damaged-\(encoding)-\(trial)")
                try Data(damaged).write(to: url)
                do {
                    let cue = try decoder.decode(contentsOf: url)
                    XCTAssertTrue(cue.sampleArray.allSatisfy(\.isFinite))
                    outcomes.loaded += 1
                } catch let error as MediaError {
                    XCTAssertFalse(error.description.contains("\n"))
                    outcomes.refused += 1
                }
                _ = try? AudioFileInfo(contentsOf: url)
            }
        }
        XCTAssertEqual(outcomes.loaded + outcomes.refused, 60 * AudioFileEncoding.allCases.count)
        XCTAssertGreaterThan(outcomes.refused, 0)
    }

    /// The `sfx-fuzz` program beside this test binary (swift build makes both).
    private func runFuzzHarness(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let harness = BuildProducts.product("sfx-fuzz")
        guard FileManager.default.isExecutableFile(atPath: harness.path) else {
            throw MissingDependency(description: "\(harness.path) is missing; build it with `swift build --product sfx-fuzz`")
        }
        let directory = try TemporaryDirectory()
        let run = try runToEnd(harness, arguments + ["--keep", directory.file("findings").path], directory: directory.url, errors: .discarded)
        return (run.status, run.output)
    }

    /// A short run of the harness, a seventh of its inputs with the sample rate or the channel
    /// count at or past the limits: no crash, hang, bad message, or input whose decode takes the
    /// child over 400 MB at its peak (a 20-frame WAV at 1 Hz took 1.6 GB).
    func testTheFuzzHarnessFindsNothingWithRatesAndChannelsAtTheLimits() throws {
        let run = try runFuzzHarness(["--iterations", "700", "--seed", "11", "--batch", "350", "--memory-limit", "400"])
        XCTAssertEqual(run.status, 0, run.output)
        XCTAssertTrue(run.output.contains(" 0 crashes, 0 hangs, 0 bad messages, 0 over 400 MB"), run.output)
    }

    /// The memory ceiling is a finding that fails the run: with a ceiling below what any decode
    /// needs, every input is one.
    func testTheFuzzHarnessReportsAnInputOverItsMemoryCeiling() throws {
        let run = try runFuzzHarness(["--iterations", "3", "--memory-limit", "1"])
        XCTAssertEqual(run.status, 1, run.output)
        XCTAssertTrue(run.output.contains("  memory ("), run.output)
    }
}
