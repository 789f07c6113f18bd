import CSFXProtocol
import Foundation
import Glibc
import XCTest

/// Malformed frames of every kind, each answered with an error reply naming the problem, and
/// the daemon serving on afterwards.
final class ProtocolFuzzTests: DaemonTestCase {
    func testEveryMalformedFrameGetsAnErrorAndTheDaemonKeepsServing() throws {
        try startDaemon()
        let fd = try connect()
        defer { close(fd) }
        var generator = SystemRandomNumberGenerator()
        var sent = 0
        var kinds: [String: Int] = [:]
        func send(_ bytes: [UInt8], _ kind: String) throws {
            let result = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            XCTAssertEqual(result, bytes.count, "\(kind): \(String(cString: strerror(errno)))")
            sent += 1
            kinds[kind, default: 0] += 1
            let answer = try reply(fd)
            XCTAssertEqual(answer.type, 0x82, "\(kind) \(bytes.prefix(16)) got \(answer)")
            XCTAssertFalse(answer.text.isEmpty, kind)
        }
        func header(version: UInt8 = 1, type: UInt8 = 1, id: UInt32 = 7, length: UInt32) -> [UInt8] {
            [0x53, 0x58, version, type] + withUnsafeBytes(of: id.littleEndian, Array.init) + withUnsafeBytes(of: length.littleEndian, Array.init)
        }
        for round in 0..<500 {
            // Random bytes (never a valid frame by chance: the magic is forced wrong).
            var random = (0..<Int.random(in: 1...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            random[0] = 0
            try send(random, "random bytes")
            // Truncated: the length says more than follows.
            let body = Array("name=tock\n".utf8)
            try send(header(length: UInt32(body.count + 1 + round % 50)) + body, "truncated")
            // Shorter than a header.
            try send(Array(header(length: 0).prefix(round % 12 + 1)), "short")
            // A huge length prefix.
            try send(header(length: UInt32.random(in: 65_525...UInt32.max, using: &generator)) + body, "huge length")
            // Wrong versions.
            try send(header(version: UInt8.random(in: 2...255, using: &generator), length: UInt32(body.count)) + body, "wrong version")
            // Unknown types.
            try send(header(type: UInt8.random(in: 8...255, using: &generator), length: UInt32(body.count)) + body, "unknown type")
            // A valid frame whose payload is not key=value text.
            let junk: [UInt8] = [0xff, 0xfe, 0x00, 0x41]
            try send(header(length: UInt32(junk.count)) + junk, "bad payload")
        }
        // Larger than any frame: the rest is cut off and the frame refused.
        try send([UInt8](repeating: 0x53, count: 70_000), "oversized")
        print("fuzz: \(sent) frames sent, every one answered with an error: \(kinds.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))")
        // Still serving, this connection and a new one.
        XCTAssertEqual(try request(fd, 1, id: 99, "name=tock\n").type, 0x81)
        let other = try connect()
        defer { close(other) }
        XCTAssertEqual(try request(other, 7, id: 1, "").type, 0x80)
        XCTAssertEqual(stopDaemon(), 0)
    }

    func testUnknownSoundsAndBadNumbersAreErrorsNamingThem() throws {
        try startDaemon()
        let fd = try connect()
        defer { close(fd) }
        let unknown = try request(fd, 1, id: 5, "name=no-such-sound\n")
        XCTAssertEqual(unknown.type, 0x82)
        XCTAssertEqual(unknown.id, 5)
        XCTAssertTrue(unknown.text.contains("no-such-sound"), unknown.text)
        let loud = try request(fd, 1, id: 6, "name=tock\nvolume=99\n")
        XCTAssertEqual(loud.type, 0x82)
        XCTAssertTrue(loud.text.contains("volume"), loud.text)
        let orphan = try request(fd, 1, id: 7, "file=1\n")
        XCTAssertEqual(orphan.type, 0x82)
        XCTAssertTrue(orphan.text.contains("descriptor"), orphan.text)
        XCTAssertEqual(stopDaemon(), 0)
    }
}
