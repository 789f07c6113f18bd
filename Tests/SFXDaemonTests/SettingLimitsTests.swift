import Foundation
import XCTest
import SFXCore

/// The daemon's messages take what `SettingLimits` says, no more and no less: each setting at
/// its bounds plays, and just beyond is an error that names it (the engine and the C API check
/// against the same table; a change to it changes every way in together).
final class SettingLimitsTests: DaemonTestCase {
    func testTheDaemonTakesTheTablesRanges() throws {
        try startDaemon()
        let fd = try connect()
        defer { close(fd) }
        var id: UInt32 = 0
        func play(_ fields: String) throws -> (type: UInt8, text: String) {
            id += 1
            let reply = try request(fd, 1, id: id, "name=tock\n" + fields)
            return (reply.type, reply.text)
        }
        let gain = SettingLimits.gain, pan = SettingLimits.pan, loops = SettingLimits.textLoops
        for within in ["volume=\(gain.lowerBound)", "volume=\(gain.upperBound)", "pan=\(pan.lowerBound)", "pan=\(pan.upperBound)",
                       "loops=\(loops.lowerBound)\nvolume=0", "loops=\(loops.upperBound)\nvolume=0"] {
            XCTAssertEqual(try play(within + "\n").type, 0x81, within)
        }
        for (beyond, field) in [("volume=\(gain.upperBound + 0.01)", "volume"), ("volume=-0.01", "volume"),
                                ("pan=\(pan.upperBound + 0.01)", "pan"), ("pan=\(pan.lowerBound - 0.01)", "pan"),
                                ("loops=\(loops.upperBound + 1)", "loops"), ("loops=\(loops.lowerBound - 1)", "loops")] {
            let reply = try play(beyond + "\n")
            XCTAssertEqual(reply.type, 0x82, beyond)
            XCTAssertTrue(reply.text.contains(field), "\(beyond): \(reply.text)")
        }
        let fade = SettingLimits.fadeMilliseconds
        id += 1
        XCTAssertEqual(try request(fd, 4, id: id, "fade=\(fade.upperBound)\n").type, 0x80)
        id += 1
        let long = try request(fd, 4, id: id, "fade=\(fade.upperBound + 1)\n")
        XCTAssertEqual(long.type, 0x82)
        XCTAssertTrue(long.text.contains("fade"), long.text)
        XCTAssertEqual(stopDaemon(), 0)
    }
}
