import Foundation
import XCTest
import SFXCore
import SFX
@testable import SFXPlayback

/// The offline mix equals the cue, placed at its start frame, through the constant-power pan law,
/// computed here from the cue's own samples.
final class OfflineMixTests: XCTestCase {
    func testSoundsStartAtTheirFramesThroughThePanLaw() throws {
        let library = try SoundLibrary()
        let tock = try library.systemSound(named: "tock")
        let cue = try XCTUnwrap(library.cue(for: tock))
        let mix = try OfflineMix.render([OfflineMix.Play(sound: tock, at: 0.25, volume: 0.5, pan: -1)], library: library)
        let start = 12_000
        XCTAssertEqual(mix.count, 2 * (start + cue.frameCount))
        XCTAssertTrue(mix[0..<(2 * start)].allSatisfy { $0 == 0 }, "silence before the start")
        // Hard left: L = gain · x, R = 0; the mono cue is `cue.samples[2i]` (both channels equal).
        // The first 0.3 ms is the declick fade-in; compare after it.
        withExtendedLifetime(cue) {
            for frame in stride(from: 100, to: cue.frameCount, by: 7) {
                XCTAssertEqual(mix[2 * (start + frame)], 0.5 * cue.samples[2 * frame], accuracy: 1e-6)
                XCTAssertEqual(mix[2 * (start + frame) + 1], 0, accuracy: 1e-6)
            }
        }
    }

    func testStartsOutsideTheMixAreRefusedWithOneLineNotTrapped() throws {
        let library = try SoundLibrary()
        let tock = try library.systemSound(named: "tock")
        for at in [Double.infinity, -.infinity, .nan, -0.5, 1e300, Double(OfflineMix.maximumSeconds) + 0.001] {
            XCTAssertThrowsError(try OfflineMix.render([OfflineMix.Play(sound: tock, at: at)], library: library), "\(at)") { error in
                let line = "\(error)"
                XCTAssertTrue(line.contains("outside the mix") && line.contains("between 0 and \(OfflineMix.maximumSeconds) s"), line)
                XCTAssertFalse(line.contains("\n"), line)
            }
        }
    }

    func testUnknownSoundsAreRefused() throws {
        let library = try SoundLibrary()
        XCTAssertThrowsError(try OfflineMix.render([OfflineMix.Play(sound: SoundID(rawValue: 70_000))], library: library))
    }
}
