// The smallest-stable rule: consecutive clean full runs, a trial that can only reject.
import XCTest
@testable import SFXBenchMethod

final class StableSearchTests: XCTestCase {
    /// Scripted outcomes per candidate: the trial's, then each full run's (true: clean).
    struct Script {
        var trials: [String: Bool]
        var runs: [String: [Bool]]
        var calls: [String] = []

        mutating func run(_ candidate: String) -> Bool {
            let index = calls.filter { $0 == candidate }.count
            calls.append(candidate)
            return runs[candidate]![index]
        }
    }

    func testOneOrTwoCleanRunsAreNotStable() throws {
        var script = Script(trials: ["16x2": false, "32x2": true, "32x3": true, "64x2": true],
                            runs: ["32x2": [true, true, false], "32x3": [true, true, true], "64x2": [true, true, true]])
        let result = StableSearch.first(["16x2", "32x2", "32x3", "64x2"], needed: 3,
                                        trial: { script.trials[$0]! }, run: { script.run($0) }, clean: { $0 })
        let stable = try XCTUnwrap(result.stable)
        XCTAssertEqual(stable.candidate, "32x3")
        XCTAssertEqual(stable.runs.count, 3)
        // 16x2 never ran in full; 32x2 ran until its third run xrunned; 64x2 was never needed.
        XCTAssertEqual(script.calls, ["32x2", "32x2", "32x2", "32x3", "32x3", "32x3"])
        XCTAssertEqual(result.attempts.map(\.candidate), ["16x2", "32x2", "32x3"])
        XCTAssertEqual(result.attempts.map(\.trialRejected), [true, false, false])
        XCTAssertEqual(result.attempts.map(\.cleanRuns), [0, 2, 3])
        XCTAssertEqual(result.attempts.map(\.stable), [false, false, true])
    }

    func testNoneStable() {
        var script = Script(trials: ["a": true, "b": true], runs: ["a": [false], "b": [true, false]])
        let result = StableSearch.first(["a", "b"], needed: 3, trial: { script.trials[$0]! }, run: { script.run($0) }, clean: { $0 })
        XCTAssertNil(result.stable)
        XCTAssertEqual(result.attempts.map(\.cleanRuns), [0, 1])
    }
}
