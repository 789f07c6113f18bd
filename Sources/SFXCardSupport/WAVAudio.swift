import FoundationEssentials
import SFXSystem
import Glibc

/// Interleaved audio in a RIFF WAVE file: what the card records, and what tests give it to
/// capture.
///
/// Reading accepts 16- and 32-bit integer PCM and 32-bit float (plain or WAVE_FORMAT_EXTENSIBLE),
/// which covers the card's recordings and files from aplay/arecord; samples come back as Float
/// in -1 … 1 (integers divided by 2^15 or 2^31, as libsndfile does). Writing produces 32-bit
/// float with a complete fmt chunk (sox reads it without a warning).
///
///     let recording = try WAVAudio(contentsOf: card.recordingURL)
///     let tone = WAVAudio(sampleRate: 48_000, channels: 1, samples: (0..<4_800).map { sin(Float($0) * 0.06) })
///     try tone.write(to: url)
public struct WAVAudio: Sendable, Equatable {
    public var sampleRate: Int
    public var channels: Int
    /// `frameCount * channels` samples, frame by frame.
    public var samples: [Float]

    public var frameCount: Int { channels > 0 ? samples.count / channels : 0 }

    public init(sampleRate: Int, channels: Int, samples: [Float]) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.samples = samples
    }

    /// The samples of one channel.
    public func channel(_ index: Int) -> [Float] {
        stride(from: index, to: samples.count, by: channels).map { samples[$0] }
    }

    public init(contentsOf url: URL) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw CardError("cannot read \(url.path) (\(errorText(error))); check the path")
        }
        let bytes = [UInt8](data)
        func fail(_ problem: String) -> CardError {
            CardError("\(url.path) \(problem); give a WAV file with 16/32-bit integer or 32-bit float samples")
        }
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8) else {
            throw fail("is not a RIFF WAVE file")
        }
        var format: (tag: Int, channels: Int, rate: Int, bits: Int)?
        var offset = 12
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = u32(offset + 4)
            let body = offset + 8
            if id == "fmt " && body + 16 <= bytes.count {
                var tag = u16(body)
                if tag == 0xFFFE && size >= 40 && body + 26 <= bytes.count {
                    tag = u16(body + 24)  // the sub-format GUID starts with the plain tag
                }
                format = (tag, u16(body + 2), u32(body + 4), u16(body + 14))
            } else if id == "data" {
                guard let format else { throw fail("has its data before its fmt chunk") }
                let end = min(bytes.count, body + size)
                self.init(sampleRate: format.rate, channels: format.channels,
                          samples: try WAVAudio.decode(bytes[body..<end], tag: format.tag, bits: format.bits, fail: fail))
                return
            }
            offset = body + size + (size & 1)
        }
        throw fail("has no data chunk")
    }

    private static func decode(_ bytes: ArraySlice<UInt8>, tag: Int, bits: Int,
                               fail: (String) -> CardError) throws -> [Float] {
        let raw = Data(bytes)
        switch (tag, bits) {
        case (1, 16):
            return raw.withUnsafeBytes { buffer in
                (0..<raw.count / 2).map { Float(Int16(littleEndian: buffer.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self))) / 32_768 }
            }
        case (1, 32):
            return raw.withUnsafeBytes { buffer in
                (0..<raw.count / 4).map { Float(Double(Int32(littleEndian: buffer.loadUnaligned(fromByteOffset: $0 * 4, as: Int32.self))) / 2_147_483_648) }
            }
        case (3, 32):
            return raw.withUnsafeBytes { buffer in
                (0..<raw.count / 4).map { Float(bitPattern: UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) }
            }
        default:
            throw fail("holds format \(tag) with \(bits)-bit samples")
        }
    }

    /// Writes a 32-bit float WAV file: WAVE_FORMAT_IEEE_FLOAT with the fmt chunk's extension
    /// size (0) and a `fact` chunk, as the WAV specification asks of a format other than PCM,
    /// so sox reads it without a warning.
    public func write(to url: URL) throws {
        var out = Data()
        func append(_ text: String) { out.append(contentsOf: Array(text.utf8)) }
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) } }
        let dataBytes = samples.count * 4
        append("RIFF"); append(UInt32(4 + (8 + 18) + (8 + 4) + 8 + dataBytes)); append("WAVE")
        append("fmt "); append(UInt32(18)); append(UInt16(3)); append(UInt16(channels))
        append(UInt32(sampleRate)); append(UInt32(sampleRate * channels * 4)); append(UInt16(channels * 4)); append(UInt16(32))
        append(UInt16(0))
        append("fact"); append(UInt32(4)); append(UInt32(frameCount))
        append("data"); append(UInt32(dataBytes))
        for sample in samples { append(sample.bitPattern) }
        do {
            try out.write(to: url, options: .atomic)
        } catch {
            throw CardError("cannot write \(url.path) (\(errorText(error))); choose a writable directory")
        }
    }
}
