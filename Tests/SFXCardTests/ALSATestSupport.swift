import CALSA
import Foundation
import SFXCardSupport
import XCTest

/// A negative ALSA return code, named.
struct ALSAError: Error, CustomStringConvertible, Equatable {
    let code: Int32
    var description: String { "ALSA error \(code): \(String(cString: snd_strerror(code)))" }
}

@discardableResult
func check(_ code: Int32) throws -> Int32 {
    guard code >= 0 else { throw ALSAError(code: code) }
    return code
}

/// A PCM on the card, opened and configured through the real alsa-lib.
final class PCM {
    let handle: OpaquePointer
    let stream: snd_pcm_stream_t
    private(set) var format = SND_PCM_FORMAT_FLOAT_LE
    private(set) var rate = 48_000
    private(set) var channels = 2
    private(set) var periodFrames = 0
    private(set) var bufferFrames = 0

    init(_ name: String, stream: snd_pcm_stream_t = SND_PCM_STREAM_PLAYBACK) throws {
        var pcm: OpaquePointer?
        try check(snd_pcm_open(&pcm, name, stream, 0))
        handle = pcm!
        self.stream = stream
    }

    deinit {
        snd_pcm_close(handle)
    }

    /// Sets the hardware parameters exactly (nothing "near"): the card must take them as given.
    func configure(format: snd_pcm_format_t = SND_PCM_FORMAT_FLOAT_LE, rate: Int = 48_000, channels: Int = 2,
                   access: snd_pcm_access_t = SND_PCM_ACCESS_RW_INTERLEAVED, periodFrames: Int = 960, periods: Int = 4) throws {
        var params: OpaquePointer?
        try check(snd_pcm_hw_params_malloc(&params))
        defer { snd_pcm_hw_params_free(params) }
        try check(snd_pcm_hw_params_any(handle, params))
        try check(snd_pcm_hw_params_set_access(handle, params, access))
        try check(snd_pcm_hw_params_set_format(handle, params, format))
        try check(snd_pcm_hw_params_set_channels(handle, params, UInt32(channels)))
        try check(snd_pcm_hw_params_set_rate(handle, params, UInt32(rate), 0))
        try check(snd_pcm_hw_params_set_period_size(handle, params, snd_pcm_uframes_t(periodFrames), 0))
        try check(snd_pcm_hw_params_set_periods(handle, params, UInt32(periods), 0))
        try check(snd_pcm_hw_params(handle, params))
        self.format = format
        self.rate = rate
        self.channels = channels
        self.periodFrames = periodFrames
        self.bufferFrames = periodFrames * periods
    }

    /// Changes the software parameters given; the others keep alsa-lib's defaults.
    func setSoftware(startThreshold: Int? = nil, availMin: Int? = nil) throws {
        var params: OpaquePointer?
        try check(snd_pcm_sw_params_malloc(&params))
        defer { snd_pcm_sw_params_free(params) }
        try check(snd_pcm_sw_params_current(handle, params))
        if let startThreshold { try check(snd_pcm_sw_params_set_start_threshold(handle, params, snd_pcm_uframes_t(startThreshold))) }
        if let availMin { try check(snd_pcm_sw_params_set_avail_min(handle, params, snd_pcm_uframes_t(availMin))) }
        try check(snd_pcm_sw_params(handle, params))
    }

    var state: snd_pcm_state_t { snd_pcm_state(handle) }

    func delay() throws -> Int {
        var frames: snd_pcm_sframes_t = 0
        try check(snd_pcm_delay(handle, &frames))
        return frames
    }

    /// Writes interleaved samples (converted to the configured format), blocking until all are queued.
    func write(_ samples: [Float]) throws {
        let bytes = encode(samples)
        let frameBytes = bytes.count / (samples.count / channels)
        var done = 0
        let frames = samples.count / channels
        while done < frames {
            let written = bytes.withUnsafeBytes { snd_pcm_writei(handle, $0.baseAddress! + done * frameBytes, snd_pcm_uframes_t(frames - done)) }
            guard written >= 0 else { throw ALSAError(code: Int32(written)) }
            done += written
        }
    }

    /// Reads `frames` frames, blocking, as Float.
    func read(frames: Int) throws -> [Float] {
        let bytesPerSample = Int(snd_pcm_format_physical_width(format)) / 8
        var bytes = [UInt8](repeating: 0, count: frames * channels * bytesPerSample)
        var done = 0
        while done < frames {
            let got = bytes.withUnsafeMutableBytes { snd_pcm_readi(handle, $0.baseAddress! + done * channels * bytesPerSample, snd_pcm_uframes_t(frames - done)) }
            guard got >= 0 else { throw ALSAError(code: Int32(got)) }
            done += got
        }
        return decode(bytes)
    }

    func drain() throws {
        try check(snd_pcm_drain(handle))
    }

    private func encode(_ samples: [Float]) -> [UInt8] {
        var out: [UInt8] = []
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) } }
        for sample in samples {
            switch format {
            case SND_PCM_FORMAT_S16_LE: append(Int16(clamping: Int((Double(sample) * 32_768).rounded())))
            case SND_PCM_FORMAT_S32_LE: append(Int32(clamping: Int64((Double(sample) * 2_147_483_648).rounded())))
            default: append(sample.bitPattern)
            }
        }
        return out
    }

    private func decode(_ bytes: [UInt8]) -> [Float] {
        bytes.withUnsafeBytes { raw in
            switch format {
            case SND_PCM_FORMAT_S16_LE:
                return (0..<bytes.count / 2).map { Float(raw.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) / 32_768 }
            case SND_PCM_FORMAT_S32_LE:
                return (0..<bytes.count / 4).map { Float(Double(raw.loadUnaligned(fromByteOffset: $0 * 4, as: Int32.self)) / 2_147_483_648) }
            default:
                return (0..<bytes.count / 4).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: Float.self) }
            }
        }
    }
}

/// Deterministic test signals.
enum Signal {
    /// A sine at `frequency` Hz and amplitude 0.5, the same on every channel.
    static func tone(frames: Int, channels: Int, rate: Int = 48_000, frequency: Double = 440) -> [Float] {
        let step = 2 * Double.pi * frequency / Double(rate)
        return (0..<frames).flatMap { frame -> [Float] in
            let value = Float(0.5 * sin(step * Double(frame)))
            return Array(repeating: value, count: channels)
        }
    }

    /// Pseudo-random samples in -0.9 … 0.9, different on every channel.
    static func noise(frames: Int, channels: Int, seed: UInt32 = 1) -> [Float] {
        var x = seed
        return (0..<frames * channels).map { _ in
            x = x &* 1_664_525 &+ 1_013_904_223
            return Float(Int32(bitPattern: x)) / Float(Int32.max) * 0.9
        }
    }

    static func silence(frames: Int, channels: Int) -> [Float] {
        [Float](repeating: 0, count: frames * channels)
    }
}

/// Base class: every test gets a fresh card that this process's ALSA uses.
class CardTestCase: XCTestCase {
    var card: VirtualCard!

    override func setUpWithError() throws {
        card = try VirtualCard()
        card.makeCurrent()
    }

    override func tearDownWithError() throws {
        try card?.remove()
    }

    func elapsed(_ body: () throws -> Void) rethrows -> Double {
        let start = VirtualCard.monotonicNanoseconds()
        try body()
        return Double(VirtualCard.monotonicNanoseconds() - start) / 1e9
    }

    func onsets() throws -> [(frame: Int, dac: UInt64)] {
        try card.events().compactMap { if case .onset(let frame, let dac, _) = $0.kind { (frame, dac) } else { nil } }
    }

    func xruns() throws -> [CardEvent.XrunReason] {
        try card.events().compactMap { if case .xrun(_, let reason, _) = $0.kind { reason } else { nil } }
    }
}
