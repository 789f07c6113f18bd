import Foundation
import Glibc
import SFXCardSupport
import XCTest

/// What `sfx serve` preloads: the system sounds for events (those the bundled theme classes);
/// the theme chain's others are decoded at their first play, and kept.
final class PreloadTests: DaemonTestCase {
    func testEventSoundsArePreloadedAndTheOthersPlayAtTheirFirstUse() throws {
        let list = try run(["list"])
        XCTAssertEqual(list.status, 0, list.stderr)
        // ID NAME THEME CLASS DURATION DESCRIPTION, a row a sound.
        let rows = list.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        let classed = rows.filter { $0.count >= 4 && $0[3] != "-" }
        let unclassed = rows.filter { $0.count >= 4 && $0[3] == "-" }.map { String($0[1]) }
        XCTAssertGreaterThan(classed.count, 20, list.stdout)
        // freedesktop's theme (sound-theme-freedesktop, which script/common.sh installs) has them.
        let other = try XCTUnwrap(unclassed.first(where: { $0.hasPrefix("audio-channel-") }),
                                  "no audio-channel-* sound outside the event classes: \(list.stdout)")

        try startDaemon()
        let status = try run(["status"])
        XCTAssertTrue(status.stdout.contains("sounds loaded: \(classed.count) system"), status.stdout)

        // Decoded at its first play and heard; the second play takes the kept cue.
        let fd = try connect()
        defer { close(fd) }
        for id in 1...2 {
            let before = try onsets().count
            let reply = try request(fd, 1, id: UInt32(id), "name=\(other)\nvolume=0.01\n")
            XCTAssertEqual(reply.type, 0x81, "play \(id) of \(other): \(reply.text)")
            let deadline = Date().addingTimeInterval(5)
            while try onsets().count == before, Date() < deadline { usleep(20_000) }
            XCTAssertGreaterThan(try onsets().count, before, "play \(id) of \(other) was not heard")
            // Let it end (and the device close) so the next play has an onset of its own.
            usleep(1_800_000)
        }
        XCTAssertEqual(stopDaemon(), 0)
    }
}
