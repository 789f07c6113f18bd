import Foundation
import SFXMedia
import XCTest

/// What `sfx` loads before its first line runs (sfx-bench --exec measures the time): the Swift
/// runtime and Foundation are linked into the program, and libcurl (Sources/CSFXCurl) and libpulse
/// (Sources/CSFXPulse) are loaded at their first use, so neither is a dependency, while fetching a
/// URL (through libcurl) still works.
final class ProgramStartTests: CommandTestCase {
    /// The program's DT_NEEDED entries, as `readelf -d` prints them.
    func neededLibraries() throws -> [String] {
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/readelf")
        process.arguments = ["-d", Self.program.path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap { line in
            guard let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]"), open < close else { return nil }
            return String(line[line.index(after: open)..<close])
        }
    }

    func testTheProgramLinksNeitherTheSwiftRuntimeNorCurlNorPulse() throws {
        let needed = try neededLibraries()
        XCTAssertTrue(needed.contains("libasound.so.2"), "\(needed)")
        let shared = needed.filter {
            $0.hasPrefix("libswift") || $0.hasPrefix("libFoundation") || $0.hasPrefix("lib_Foundation") || $0.hasPrefix("libdispatch")
                || $0.hasPrefix("libcurl") || $0.hasPrefix("libpulse")
        }
        XCTAssertEqual(shared, [], "sfx loads these at every start")
    }

    /// An http URL goes through FoundationNetworking and libcurl, loaded at the first transfer.
    func testAURLPlaysThroughCurlLoadedOnFirstUse() throws {
        let served = scratch.appending(path: "served", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        let tone = (0..<9_600).map { 0.25 * sin(Float($0) * 2 * .pi * 440 / 48_000) }
        var wav = Data()
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { wav.append(contentsOf: $0) } }
        wav.append(contentsOf: Array("RIFF".utf8)); append(UInt32(36 + tone.count * 2)); wav.append(contentsOf: Array("WAVE".utf8))
        wav.append(contentsOf: Array("fmt ".utf8)); append(UInt32(16)); append(UInt16(1)); append(UInt16(1))
        append(UInt32(48_000)); append(UInt32(96_000)); append(UInt16(2)); append(UInt16(16))
        wav.append(contentsOf: Array("data".utf8)); append(UInt32(tone.count * 2))
        for sample in tone { append(Int16((sample * 32_767).rounded())) }
        try wav.write(to: served.appending(path: "tone.wav"))

        let server = Process()
        server.executableURL = URL(filePath: "/usr/bin/python3")
        server.arguments = [URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "http/stream-server.py").path, served.path]
        let input = Pipe(), output = Pipe()
        server.standardInput = input
        server.standardOutput = output
        try server.run()
        defer {
            try? input.fileHandleForWriting.close()
            server.terminate()
            server.waitUntilExit()
        }
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) { line.append(byte) }
        let port = try XCTUnwrap(Int(String(decoding: line, as: UTF8.self)), "the test server (Tests/http/stream-server.py) reported no port")

        let run = try sfx("play", "http://127.0.0.1:\(port)/normal/tone.wav")
        XCTAssertEqual(run.status, 0, run.stderr)
        // The card recorded the tone: its loudest sample is the tone's (0.25), give or take the
        // 16-bit quantisation.
        let recording = try AudioDecoder(format: .standard).decode(contentsOf: URL(filePath: try XCTUnwrap(run.recording, run.stdout)))
        XCTAssertGreaterThanOrEqual(recording.frameCount, tone.count, "the tone reached the card")
        XCTAssertEqual(recording.samples.map(abs).max() ?? 0, 0.25, accuracy: 0.001)
    }
}
