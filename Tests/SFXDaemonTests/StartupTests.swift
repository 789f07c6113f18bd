import Foundation
import SFXCardSupport
import XCTest

/// Without the daemon, `sfx play` queues the sound before the stream starts: the first period
/// the card takes holds it, with no buffer of silence ahead.
final class StartupTests: DaemonTestCase {
    func testInProcessPlayStartsInTheFirstPeriod() throws {
        for round in 0..<5 {
            let run = try self.run(["play", "--no-daemon", "--device", card.pcmName, "--period", "128", "tock"])
            XCTAssertEqual(run.status, 0, run.stderr)
            let starts = try card.events().compactMap { event -> Int? in
                if case .onset(let frame, _, _) = event.kind { return Int(frame) }
                return nil
            }
            // Each run appends to the log: the last onset is this run's.
            let frame = try XCTUnwrap(starts.last, "round \(round): no onset logged")
            XCTAssertLessThan(frame, 128, "round \(round): the sound started at frame \(frame), behind \(frame / 128) periods of silence")
        }
    }
}
