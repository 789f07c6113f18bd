// The rewrite of a finished fragmented M4A as a standard one (MPEG4Remux), through the
// recorder's encoder: lengths down to nothing, and a rewrite that fails halfway.
import Foundation
import Glibc
import XCTest
import SFXTestSupport
@testable import SFXMedia

final class MPEG4RemuxTests: TemporaryDirectoryTestCase {
    static let childKey = "SFX_TEST_REMUX_UNDER_LIMIT"

    /// Encodes `frames` frames of a tone at 48 kHz, mono, to `url`.
    private func write(_ url: URL, frames: Int, container: RecordingContainer) throws {
        let encoder = try RecordingFile.create(url, encoding: RecordingEncoding(format: .m4a, sampleRate: 48_000, channels: 1, container: container))
        let samples = Signal.sine(frequency: 440, sampleRate: 48_000, frames: frames)
        try samples.withUnsafeBufferPointer { try encoder.append($0) }
        try encoder.finish()
    }

    /// Top-level box types, in order, and the `mvhd` duration in seconds.
    private func layout(_ url: URL) throws -> (boxes: [String], seconds: Double) {
        let bytes = [UInt8](try Data(contentsOf: url))
        func number(_ at: Int, _ count: Int) -> Int { bytes[at..<(at + count)].reduce(0) { $0 << 8 | Int($1) } }
        var boxes: [String] = []
        var seconds = -1.0
        var offset = 0
        while offset + 8 <= bytes.count {
            let size = number(offset, 4)
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            guard size >= 8 else { break }
            boxes.append(type)
            if type == "moov" {
                // mvhd comes first in the moov this muxer writes (version 0: timescale, duration).
                let mvhd = offset + 8
                XCTAssertEqual(String(decoding: bytes[(mvhd + 4)..<(mvhd + 8)], as: UTF8.self), "mvhd")
                seconds = Double(number(mvhd + 24, 4)) / Double(number(mvhd + 20, 4))
            }
            offset += size
        }
        return (boxes, seconds)
    }

    /// Every length, down to none and to less than one AAC frame, comes out standard, with its
    /// length in `mvhd` to the millisecond (its timescale).
    func testEveryLengthComesOutStandardWithItsLength() throws {
        for frames in [0, 500, 1_024, 1_500, 48_000, 100_001] {
            let url = directory.file("take-\(frames).m4a")
            try write(url, frames: frames, container: .standard)
            let (boxes, seconds) = try layout(url)
            XCTAssertFalse(boxes.contains("moof"), "\(frames): \(boxes)")
            XCTAssertLessThan(try XCTUnwrap(boxes.firstIndex(of: "moov")), boxes.firstIndex(of: "mdat") ?? .max, "\(frames): \(boxes)")
            XCTAssertEqual(seconds, Double(frames) / 48_000, accuracy: 0.001, "\(frames)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix(".") }, [])
    }

    /// A file-size limit (RLIMIT_FSIZE, set by prlimit on a child process) that the new file
    /// reaches halfway: its write fails with EFBIG, it is removed, and the fragmented recording
    /// is left byte for byte as it was, with one line that says so and names the limit.
    func testARewriteStoppedByTheFileSizeLimitLeavesTheFragmentedFile() throws {
        if let path = ProcessInfo.processInfo.environment[Self.childKey] {
            // The child, under the limit: the rewrite alone (the file was written by the parent).
            signal(SIGXFSZ, SIG_IGN)
            do {
                try MPEG4Remux.makeStandard(path: path, frames: 480_000, priming: 1_024, sampleRate: 48_000)
                XCTFail("the rewrite went through under a 16 kB file-size limit")
            } catch {
                print("rewrite failed: \(error)")
            }
            return
        }
        // 10 s: some 80 kB, more than the muxer's 64 kB buffer, so the failure comes among the packets.
        let url = directory.file("memo.m4a")
        try write(url, frames: 480_000, container: .fragmented)
        let before = try Data(contentsOf: url)
        XCTAssertGreaterThan(before.count, 70_000)
        var environment = ProcessInfo.processInfo.environment
        environment[Self.childKey] = url.path
        let test = "SFXMediaTests.MPEG4RemuxTests/testARewriteStoppedByTheFileSizeLimitLeavesTheFragmentedFile"
        let run = try runToEnd(URL(filePath: "/usr/bin/prlimit"), ["--fsize=16384", "--", CommandLine.arguments[0], test],
                               environment: environment, errors: .merged, timeout: 120)
        XCTAssertEqual(run.status, 0, run.output)
        XCTAssertTrue(run.output.contains("Executed 1 test, with 0 failures"), run.output)
        let lines = run.output.split(separator: "\n").filter { $0.hasPrefix("rewrite failed: ") }
        XCTAssertEqual(lines, ["rewrite failed: \(url.path): kept as fragmented MPEG-4 (complete and readable, but with no duration in its header): "
                               + "it could not be rewritten as a standard M4A: the new file cannot be written (File too large); "
                               + "raise the file-size limit (ulimit -f)"], run.output)
        XCTAssertTrue(try Data(contentsOf: url) == before, "the fragmented recording as it was")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.url.path), ["memo.m4a"], "the new file removed")
        XCTAssertEqual(try XCTUnwrap(RecordingProbe(url)?.duration), 10, accuracy: 0.05, "still readable")
    }
}
