import Foundation
import SFXMedia
import XCTest

/// What `sfx load` says: that a name loaded again replaced the sound it held, and, for a file
/// longer than a loaded sound may be, what plays it from the shell (figures that differ).
final class LoadMessageTests: DaemonTestCase {
    func tone(_ name: String, seconds: Double) throws -> URL {
        let url = scratch.appending(path: name)
        try AudioFileWriter.write([Float](repeating: 0.1, count: Int(seconds * 8_000)), sampleRate: 8_000, channels: 1, to: url, as: .wavPCM16)
        return url
    }

    func testLoadingANameAgainSaysItReplacedTheSound() throws {
        try startDaemon()
        let first = try run(["load", "--daemon", "--name", "beep", try tone("a.wav", seconds: 0.1).path])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(first.stdout.hasPrefix("loaded beep (sound "), first.stdout)
        XCTAssertFalse(first.stdout.contains("replac"), first.stdout)
        let second = try run(["load", "--daemon", "--name", "beep", try tone("b.wav", seconds: 0.2).path])
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertTrue(second.stdout.contains(", replacing the sound loaded as beep before; play it with: sfx play beep"), second.stdout)
    }

    func testALongFileSaysHowToPlayItFromTheShell() throws {
        let long = try tone("long.wav", seconds: 30.02)
        try startDaemon()
        for route in ["--daemon", "--no-daemon"] {
            let run = try run(["load", route, "long.wav"])
            XCTAssertEqual(run.status, 1, "\(route): \(run.stdout)")
            XCTAssertEqual(run.stderr, "sfx: long.wav: is 30.02 s long, over the 30 s a loaded sound may last "
                           + "(loaded sounds are held whole in memory); play it with `sfx play long.wav`, which streams it\n", route)
        }
        _ = long
    }
}
