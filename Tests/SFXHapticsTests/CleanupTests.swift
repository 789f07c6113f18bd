import Foundation
import SFXTestSupport
import Glibc
import XCTest

/// The haptics tests leave nothing in the temporary directory: this bundle run again with the
/// classes that make directories selected and TMPDIR pointing at an empty private directory,
/// which must still be empty when that run ends.
final class CleanupTests: XCTestCase {
    static let classesThatMakeDirectories = [
        "CommandBackendTests", "CommandSignalTests", "DetectionTests", "EvdevRumbleTests",
        "SysfsVibratorTests", "SignalCleanupTests",
    ]

    func testTestsRemoveTheirTemporaryDirectories() throws {
        var template = Array((NSTemporaryDirectory() + "sfx-haptics-cleanup-XXXXXX").utf8CString)
        let made = try XCTUnwrap(mkdtemp(&template), "mkdtemp: errno \(errno)")
        let temporary = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: temporary) }

        let process = Process()
        process.executableURL = BuildProducts.testExecutable
        process.arguments = [Self.classesThatMakeDirectories.map { "SFXHapticsTests.\($0)" }.joined(separator: ",")]
        process.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": temporary + "/"]) { _, new in new }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "the selected tests passed")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: temporary), [], "left behind in TMPDIR")
    }
}
