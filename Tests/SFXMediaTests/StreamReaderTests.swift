// The streaming reader against the whole-file decode: the frames it puts in the ring must be the
// ones AudioDecoder gives for the whole file (bit for bit at equal rates, within 1e-4 after
// libsoxr, which then sees the same stream in other blocks), from the exact frame asked for,
// looping without a gap, with memory bounded by the ring whatever the file's length.
import Foundation
import XCTest
@testable import SFXCore
@testable import SFXMedia

final class StreamReaderTests: TemporaryDirectoryTestCase {
    /// Reads everything the reader produces, releasing frames as a voice would, as fast as it comes.
    func drain(_ reader: StreamReader, step: Int = 1000, each: () -> Void = {}) -> [Float] {
        let ring = reader.ring
        var out: [Float] = []
        var cursor = 0
        reader.start()
        while true {
            let written = ring.writtenFrames
            if written > cursor {
                let count = min(step, written - cursor)
                for frame in cursor..<(cursor + count) {
                    let at = (frame & (ring.capacity - 1)) * ring.channels
                    for c in 0..<ring.channels { out.append(ring.storage[at + c]) }
                }
                cursor += count
                ring.released.store(cursor, ordering: .releasing)
                each()
            } else if let end = ring.endFrame, cursor >= end {
                return out
            } else {
                usleep(200)
            }
        }
    }

    func writeWAV(_ name: String, rate: Int, channels: Int, frames: Int) throws -> URL {
        let url = directory.file(name)
        let samples = Signal.sixteenBitRamp(frames: frames, channels: channels)
        try AudioFileWriter.write(samples, sampleRate: rate, channels: channels, to: url, as: .wavPCM16)
        return url
    }

    /// At the widest ratio the limits allow (1 kHz into 384 kHz: a block of input makes 192
    /// blocks of output, converted a fixed block at a time) the stream is still the whole-file
    /// conversion.
    func testAStreamAtTheWidestRatioEqualsTheWholeConversion() throws {
        let url = try writeWAV("low.wav", rate: 1_000, channels: 1, frames: 6_000)
        let format = AudioFormat(sampleRate: 384_000, channels: 1)
        let whole = try AudioDecoder(format: format).decode(contentsOf: url).sampleArray
        let reader = try StreamReader(file: RawFilePath(url), format: format)
        let streamed = drain(reader, step: 50_000)
        XCTAssertNil(reader.error)
        XCTAssertEqual(streamed.count, whole.count)
        XCTAssertLessThan(zip(streamed, whole).map { abs($0 - $1) }.max() ?? 1, 1e-4)
    }

    func testTheStreamEqualsTheWholeFileDecodeAtEqualRatesBitForBit() throws {
        let url = try writeWAV("a.wav", rate: 48_000, channels: 2, frames: 300_000)
        let whole = try AudioDecoder(format: .standard).decode(contentsOf: url)
        let reader = try StreamReader(file: RawFilePath(url), format: .standard, ringFrames: 8192)
        XCTAssertTrue(drain(reader) == whole.sampleArray)
        XCTAssertNil(reader.error)
    }

    func testTheStreamEqualsTheWholeFileDecodeAfterResamplingWithinTolerance() throws {
        let url = directory.file("b.wav")
        try AudioFileWriter.write(Signal.sine(frequency: 997, sampleRate: 44_100, frames: 200_000, channels: 1),
                                  sampleRate: 44_100, channels: 1, to: url, as: .wavFloat32)
        let whole = try AudioDecoder(format: .standard).decode(contentsOf: url).sampleArray
        let streamed = drain(try StreamReader(file: RawFilePath(url), format: .standard, ringFrames: 8192))
        XCTAssertEqual(streamed.count, whole.count, "exactly round(n · 48000 / 44100) frames")
        let worst = zip(streamed, whole).map { abs($0 - $1) }.max() ?? 1
        XCTAssertLessThan(worst, 1e-4)
    }

    /// The source frame the reader puts at ring frame r, from the file's length, the region and
    /// the loops (the region 1 + loops times, between the intro and the tail).
    func expectedSourceFrame(_ r: Int, region: Range<Int>, loops: Int) -> Int {
        let length = region.count
        if r < region.upperBound { return r }
        let looped = r - region.upperBound
        if looped < length * loops { return region.lowerBound + looped % length }
        return region.upperBound + looped - length * loops
    }

    /// Where a ring frame is in the source, through loops back to a region's start: exact at
    /// equal rates, within a frame through the resampler; read as a voice plays (seams behind the
    /// played frame are let go).
    func testTheSourcePositionFollowsLoopsIntoTheRegion() throws {
        for rate in [48_000, 44_100] {
            let url = try writeWAV("loop-\(rate).wav", rate: rate, channels: 1, frames: 24_000)
            let reader = try StreamReader(file: RawFilePath(url), format: AudioFormat(sampleRate: 48_000, channels: 1),
                                          loops: 2, ringFrames: 8192)
            let region = 4_000..<10_000
            reader.setLoopRegion(Int64(region.lowerBound)..<Int64(region.upperBound))
            var worst = 0, readings = 0
            _ = drain(reader, step: 250) {
                let ringFrame = reader.ring.releasedFrames
                let (frame, sourceRate) = reader.sourcePosition(atRingFrame: ringFrame)
                XCTAssertEqual(sourceRate, rate)
                let r = Int((Double(ringFrame) * Double(rate) / 48_000).rounded())
                worst = max(worst, abs(Int(frame) - expectedSourceFrame(r, region: region, loops: 2)))
                readings += 1
            }
            XCTAssertNil(reader.error)
            XCTAssertGreaterThan(readings, 100)
            XCTAssertLessThanOrEqual(worst, rate == 48_000 ? 0 : 1, "at \(rate) Hz")
        }
    }

    func testAStartFrameIsExactAndLoopsRepeatWithoutAGap() throws {
        let url = try writeWAV("c.wav", rate: 48_000, channels: 1, frames: 10_000)
        let mono = AudioFormat(sampleRate: 48_000, channels: 1)
        let samples = try AudioDecoder(format: mono).decode(contentsOf: url).sampleArray
        let seeked = drain(try StreamReader(file: RawFilePath(url), format: mono, startFrame: 7_777))
        XCTAssertTrue(seeked == Array(samples[7_777...]), "from frame 7777: \(seeked.count) frames, first \(seeked.first ?? .nan)")
        let looped = drain(try StreamReader(file: RawFilePath(url), format: mono, startFrame: 9_000, loops: 2))
        let want = Array(samples[9_000...]) + samples + samples
        XCTAssertEqual(looped.count, want.count)
        let bad = zip(looped, want).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        XCTAssertNil(bad, "the first frame that differs")
    }

    func testATenMinuteFileStreamsWithMemoryBoundedByTheRing() throws {
        // 10 minutes at 8 kHz mono 16-bit (9.6 MB), streamed at 48 kHz stereo: decoded whole it
        // would take 10 × 60 × 48,000 × 2 × 4 bytes = 230 MB.
        let url = directory.file("ten-minutes.wav")
        let frames = 10 * 60 * 8000
        try AudioFileWriter.write(Signal.sine(frequency: 440, sampleRate: 8000, frames: frames, channels: 1),
                                  sampleRate: 8000, channels: 1, to: url, as: .wavPCM16)
        let reader = try StreamReader(file: RawFilePath(url), format: .standard)
        let ringBytes = reader.ring.capacity * 2 * 4
        let before = residentBytes()
        var peak = before
        var produced = 0
        let ring = reader.ring
        reader.start()
        while ring.endFrame.map({ produced < $0 }) ?? true {
            let written = ring.writtenFrames
            if written > produced {
                produced = written
                ring.released.store(produced, ordering: .releasing)
                if produced % 100 == 0 { peak = max(peak, residentBytes()) }
            } else {
                usleep(100)
            }
        }
        peak = max(peak, residentBytes())
        XCTAssertEqual(produced, 10 * 60 * 48_000)
        // Stated bound: the ring (1 MB) plus 16 MB for decoding blocks, libsoxr and the allocator.
        XCTAssertLessThan(peak - before, ringBytes + 16_000_000, "grew by \(peak - before) bytes")
    }

    func testADecodingErrorEndsTheStreamAndIsReported() throws {
        let url = try writeWAV("d.wav", rate: 48_000, channels: 1, frames: 100_000)
        let handle = try FileHandle(forUpdating: url)
        try handle.truncate(atOffset: 44 + 2 * 50_000)
        try handle.close()
        let reader = try StreamReader(file: RawFilePath(url), format: AudioFormat(sampleRate: 48_000, channels: 1))
        let frames = drain(reader)
        XCTAssertEqual(frames.count, 50_000)
        XCTAssertNotNil(reader.error, "the cut is reported")
    }

    /// VmRSS of this process, in bytes.
    func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
        return (Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) * 1024
    }
}
