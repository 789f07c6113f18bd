import CEBUR128
import FoundationEssentials
import Glibc

/// How loud a sound is, by EBU R128 (ITU-R BS.1770-4), measured by libebur128: the K-weighted,
/// gated loudness in LUFS, the loudest 400 ms window, and the true peak in dBTP.
///
/// ```swift
/// let loudness = try Loudness(contentsOf: URL(filePath: "coin.ogg"))
/// loudness.lufs        // -18.4: the figure to compare and normalise by
/// loudness.truePeak    // -1.2 dBTP
/// ```
///
/// The laws (what every figure means):
/// - `integrated`: libebur128's integrated loudness (400 ms blocks every 100 ms, absolute gate
///   −70 LUFS, relative gate −10 LU). A sound shorter than one block has none (nil).
/// - `momentaryMax`: the loudest momentary loudness (a 400 ms window) over windows ending every
///   10 ms, from the sound's first 10 ms to 400 ms after its end. Silence stands before and after
///   the sound, so for a click under 400 ms this is its energy spread over 400 ms: the sound as
///   heard once, alone. This is the short-sound method.
/// - `lufs`: the figure sfx uses, `integrated` for sounds of 400 ms or more and `momentaryMax`
///   for shorter ones (at 400 ms the two agree: both are one window holding the whole sound).
///   nil when the sound is silent (below the −70 LUFS absolute gate).
/// - `truePeak`: the highest true peak of any channel (libebur128's 4× oversampling below
///   96 kHz, never below the sample peak), in dBTP; nil for digital silence.
/// - Channels count as libebur128's default map counts them, by position: L, R, C, LFE (not
///   counted), Ls, Rs, and none after the sixth. A mono sound counts twice (`EBUR128_DUAL_MONO`),
///   because sfx plays it on both speakers: it measures the same as its stereo cue.
public struct Loudness: Sendable, Hashable, Codable {
    /// The shortest sound that is measured by its integrated loudness: one gating block.
    public static let blockSeconds = 0.4
    /// BS.1770's absolute gate: anything quieter counts as silence.
    public static let silenceLUFS = -70.0

    /// Integrated loudness in LUFS; nil when the sound is shorter than 400 ms or silent.
    public var integrated: Double?
    /// The loudest 400 ms window in LUFS; nil when silent.
    public var momentaryMax: Double?
    /// The highest true peak of any channel in dBTP; nil for digital silence.
    public var truePeak: Double?
    /// Seconds measured.
    public var duration: Double

    /// The loudness sfx compares and normalises by: `integrated` for sounds of 400 ms or more,
    /// `momentaryMax` for shorter ones; nil when silent.
    public var lufs: Double? {
        let value = duration >= Loudness.blockSeconds ? integrated : momentaryMax
        guard let value, value >= Loudness.silenceLUFS else { return nil }
        return value
    }

    /// Which method gave `lufs`: "integrated" or "momentary max" (under 400 ms).
    public var method: String { duration >= Loudness.blockSeconds ? "integrated" : "momentary max" }

    public init(integrated: Double?, momentaryMax: Double?, truePeak: Double?, duration: Double) {
        self.integrated = integrated
        self.momentaryMax = momentaryMax
        self.truePeak = truePeak
        self.duration = duration
    }

    /// Measures interleaved float samples (full scale ±1). `subject` names them in errors.
    public init(interleaved samples: UnsafeBufferPointer<Float>, sampleRate: Int, channels: Int,
                subject: String = "buffer") throws {
        guard channels > 0, samples.count % channels == 0 else {
            throw MediaError(.invalidBuffer(detail: "\(samples.count) samples is not a whole number of \(channels)-channel frames; pass complete frames"), subject: subject)
        }
        let meter = try LoudnessMeter(sampleRate: sampleRate, channels: channels, subject: subject)
        meter.add(samples)
        self = meter.finish()
    }

    /// `init(interleaved:…)` for an array.
    public init(interleaved samples: [Float], sampleRate: Int, channels: Int, subject: String = "buffer") throws {
        self = try samples.withUnsafeBufferPointer {
            try Loudness(interleaved: $0, sampleRate: sampleRate, channels: channels, subject: subject)
        }
    }

    /// Measures the file at `url` (anything libsndfile reads), read a second at a time.
    /// Throws `MediaError` as `AudioDecoder` does.
    public init(contentsOf url: URL) throws {
        try self.init(file: RawFilePath(url))
    }

    /// `init(contentsOf:)` for a path given as raw bytes (names that are not UTF-8 too). Only
    /// regular files are opened.
    public init(file sound: RawFilePath) throws {
        let file = try AudioSources.open(sound)   // libsndfile, else FFmpeg
        let meter = try LoudnessMeter(sampleRate: file.sampleRate, channels: file.channels, subject: file.path)
        // A second at a time, into one buffer: memory stays flat however long the file is.
        let chunk = file.sampleRate
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: chunk * file.channels)
        defer { buffer.deallocate() }
        var framesRead = 0
        while true {
            let got = file.read(into: buffer, frames: chunk)
            if got == 0 { break }
            let samples = UnsafeBufferPointer(start: buffer, count: got * file.channels)
            guard samples.allSatisfy(\.isFinite) else {
                throw MediaError(.corrupt(detail: "NaN or infinite samples"), subject: file.path)
            }
            meter.add(samples)
            framesRead += got
        }
        try file.finishReading(framesRead: framesRead)
        guard meter.frames > 0 else { throw MediaError(.noFrames, subject: file.path) }
        self = meter.finish()
    }
}

/// One libebur128 measurement in progress: frames go in 10 ms at a time, tracking the loudest
/// momentary window; `finish()` reads the integrated loudness, then runs 400 ms of silence
/// through (the last windows and the true-peak interpolator's tail) and reads the peaks.
final class LoudnessMeter {
    private let state: UnsafeMutablePointer<ebur128_state>
    private let channels: Int
    private let sampleRate: Int
    private let step: Int
    private var momentaryMax = -Double.infinity
    private(set) var frames = 0

    init(sampleRate: Int, channels: Int, subject: String) throws {
        let mode = Int32(EBUR128_MODE_I.rawValue | EBUR128_MODE_TRUE_PEAK.rawValue)
        guard channels > 0, sampleRate > 0,
              let state = ebur128_init(UInt32(channels), UInt(sampleRate), mode) else {
            throw MediaError(.failed(detail: "libebur128 cannot measure \(channels) channels at \(sampleRate) Hz; "
                + "convert it to 1–64 channels at a usual rate, e.g. `sox \(subject) -r 48000 out.wav`"), subject: subject)
        }
        self.state = state
        self.channels = channels
        self.sampleRate = sampleRate
        step = max(sampleRate / 100, 1)
        if channels == 1 { ebur128_set_channel(state, 0, Int32(EBUR128_DUAL_MONO.rawValue)) }
    }

    deinit {
        var state: UnsafeMutablePointer<ebur128_state>? = self.state
        ebur128_destroy(&state)
    }

    /// Adds interleaved frames, reading the momentary loudness after every 10 ms of the sound
    /// (counted from its start, so how callers split it does not matter).
    func add(_ samples: UnsafeBufferPointer<Float>) {
        guard let base = samples.baseAddress else { return }
        let total = samples.count / channels
        var done = 0
        while done < total {
            // Steps stay aligned to 10 ms from the sound's start, whatever the callers' chunks.
            let count = min(step - frames % step, total - done)
            ebur128_add_frames_float(state, base + done * channels, count)
            done += count
            frames += count
            if frames % step == 0 { readMomentary() }
        }
    }

    func finish() -> Loudness {
        if frames % step != 0 { readMomentary() }     // the window ending with the sound's last frame
        var integrated = -Double.infinity
        ebur128_loudness_global(state, &integrated)
        let duration = Double(frames) / Double(sampleRate)
        let silence = [Float](repeating: 0, count: step * channels)
        let measured = frames
        for _ in 0..<(Int((Loudness.blockSeconds * Double(sampleRate)).rounded(.up)) + step - 1) / step {
            silence.withUnsafeBufferPointer { add($0) }
        }
        frames = measured
        var peak = 0.0
        for channel in 0..<channels {
            var value = 0.0
            ebur128_true_peak(state, UInt32(channel), &value)
            peak = max(peak, value)
        }
        func finite(_ value: Double) -> Double? { value.isFinite ? value : nil }
        return Loudness(integrated: finite(integrated), momentaryMax: finite(momentaryMax),
                        truePeak: peak > 0 ? 20 * log10(peak) : nil, duration: duration)
    }

    private func readMomentary() {
        var value = -Double.infinity
        if ebur128_loudness_momentary(state, &value) == Int32(EBUR128_SUCCESS.rawValue), value.isFinite {
            momentaryMax = max(momentaryMax, value)
        }
    }
}
