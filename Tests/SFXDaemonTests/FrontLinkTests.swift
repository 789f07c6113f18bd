import Foundation
import XCTest

/// The front (bin/sfx) is what every `sfx` command starts with, and all a play through the
/// daemon runs: it must load no more than the C library, or loading the Swift runtime (about
/// 2 ms) is most of its round trip to the daemon.
final class FrontLinkTests: XCTestCase {
    func testTheFrontLoadsOnlyTheCLibrary() throws {
        let readelf = Process()
        readelf.executableURL = URL(filePath: "/usr/bin/readelf")
        readelf.arguments = ["-d", DaemonTestCase.front.path]
        let output = Pipe()
        readelf.standardOutput = output
        try readelf.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        readelf.waitUntilExit()
        XCTAssertEqual(readelf.terminationStatus, 0, "readelf -d \(DaemonTestCase.front.path)")
        // "0x0000000000000001 (NEEDED)   Shared library: [libc.so.6]"
        let needed = text.split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap { line -> String? in
            guard let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]"), open < close else { return nil }
            return String(line[line.index(after: open)..<close])
        }
        XCTAssertTrue(needed.contains("libc.so.6"), "\(needed)")
        XCTAssertEqual(Set(needed).subtracting(["libc.so.6", "libm.so.6"]), [], "the front needs \(needed)")
    }
}
