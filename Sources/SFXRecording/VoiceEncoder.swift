import SFXPlayback
import CSFXVoice
import FoundationEssentials
import Glibc
import SFXCore
import SFXMedia

/// The encoder a `Recorder` writes through when `voiceProcessing` or `trimSilence` is on: it
/// gathers the writer thread's frames into 10 ms frames, processes them (high-pass, then
/// speexdsp's noise suppression and gain, each channel on its own state), leaves out leading and
/// trailing silence, and hands the rest to the file's encoder. It runs on the writer thread
/// alone; the capture thread never sees it.
///
/// Timing: speexdsp's output lags its input by one frame (its overlap-add); that frame is dropped
/// at the start and pushed out with silence at the end, so the file's frames line up with the
/// captured ones and there are as many (before trimming). Sound reaches the file up to two
/// frames (20 ms) later than without processing: `Recorder.processingLatency`.
///
/// Trimming: nothing is written until speech starts (three active frames running: 30 ms), and
/// then `margin` of what came before it; silence after speech is held back (up to
/// `VoiceEncoder.heldSilenceLimit`, 30 s: older silence is written) and written when speech
/// comes again; at the end all but `margin` of it is dropped. A recording with no speech at all
/// ends empty (and `minDuration` discards it). `framesWritten` is what the file holds.
final class VoiceEncoder: RecordingEncoder {
    let inner: any RecordingEncoder
    var encoding: RecordingEncoding { inner.encoding }
    var framesWritten: Int64 { inner.framesWritten }

    /// The most silence held back while trimming, in seconds.
    static let heldSilenceLimit = 30.0
    /// Active frames in a row that start speech.
    static let onsetFrames = 3

    let channels: Int
    /// Frames (of `channels` samples) in a 10 ms processing frame.
    let frameSize: Int
    private var gathered: [Float]
    private var gatheredFrames = 0
    private var highPass: Biquad?
    private var voices: [OpaquePointer] = []
    private var shorts: [Int16]
    /// Captured frames in the frame the library holds (its output lags by one frame).
    private var previousReal = 0
    private var frame: [Float]

    private let trim: Bool
    private let marginFrames: Int
    private var activity = VoiceActivity()
    private var speechStarted = false
    private var activeRun = 0
    /// While trimming: before speech, the last frames (for the margin); after, the silence since
    /// the last speech.
    private var held: [Float] = []
    private var flushed = false

    /// Loads speexdsp when `processing` is not off; throws `.voiceProcessing` when it cannot.
    init(wrapping inner: any RecordingEncoder, processing: VoiceProcessing, trimSilence: Bool, margin: Duration) throws(RecorderError) {
        self.inner = inner
        let rate = inner.encoding.sampleRate
        channels = inner.encoding.channels
        frameSize = max(rate / 100, 1)
        gathered = [Float](repeating: 0, count: frameSize * channels)
        frame = gathered
        shorts = [Int16](repeating: 0, count: frameSize)
        trim = trimSilence
        marginFrames = Int((margin.seconds * Double(rate)).rounded())
        if processing.highPass {
            highPass = Biquad(.highPass(cutoff: Float(processing.highPassCutoff)), sampleRate: rate, smoothingFrames: 0)
        }
        if processing.noiseSuppression != .off || processing.automaticGainControl {
            var error = [CChar](repeating: 0, count: 512)
            for _ in 0..<channels {
                guard let voice = sfx_voice_open(Int32(rate), Int32(frameSize), Int32(processing.noiseSuppression.attenuation),
                                                 processing.automaticGainControl ? 1 : 0, processing.speexLevel,
                                                 Int32(processing.maxGain.rounded()), &error, error.count) else {
                    voices.forEach { sfx_voice_close($0) }
                    throw .voiceProcessing(error.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
                }
                voices.append(voice)
            }
        }
    }

    deinit { voices.forEach { sfx_voice_close($0) } }

    func append(_ samples: UnsafeBufferPointer<Float>) throws {
        var offset = 0
        while offset < samples.count {
            let n = min(samples.count - offset, (frameSize - gatheredFrames) * channels)
            gathered.withUnsafeMutableBufferPointer { g in
                for i in 0..<n { g[gatheredFrames * channels + i] = samples[offset + i] }
            }
            offset += n
            gatheredFrames += n / channels
            if gatheredFrames == frameSize {
                try processGathered(real: frameSize)
                gatheredFrames = 0
            }
        }
    }

    func checkpoint() throws { try inner.checkpoint() }

    /// Writes what is held (the last partial frame, the library's lag, the trimmer's margin) so
    /// that `framesWritten` is the file's length; the recorder calls it before taking that length.
    func flush() throws {
        guard !flushed else { return }
        flushed = true
        if gatheredFrames > 0 {
            for i in gatheredFrames * channels ..< gathered.count { gathered[i] = 0 }
            try processGathered(real: gatheredFrames)
            gatheredFrames = 0
        }
        if !voices.isEmpty, previousReal > 0 {
            // The lagged frame: silence pushes it out.
            for i in gathered.indices { gathered[i] = 0 }
            try processGathered(real: 0)
        }
        if trim, speechStarted {
            try write(held, count: min(held.count, marginFrames * channels))
        }
        held.removeAll()
    }

    func finish() throws {
        try flush()
        try inner.finish()
    }

    func abandon() { inner.abandon() }

    // MARK: Private

    /// Processes the gathered frame, of which `real` frames were captured (the rest is padding),
    /// and passes on the captured frames that come out: the library's output is the frame before.
    private func processGathered(real: Int) throws {
        if highPass != nil {
            gathered.withUnsafeMutableBufferPointer { highPass!.process($0.baseAddress!, frames: frameSize, channels: channels) }
        }
        guard !voices.isEmpty else { return try emit(gathered, frames: real) }
        for c in 0..<channels {
            for i in 0..<frameSize {
                let s = gathered[i * channels + c] * 32768
                shorts[i] = Int16(max(-32768, min(32767, s.rounded())))
            }
            shorts.withUnsafeMutableBufferPointer { sfx_voice_run(voices[c], $0.baseAddress!) }
            for i in 0..<frameSize { frame[i * channels + c] = Float(shorts[i]) / 32768 }
        }
        let out = previousReal
        previousReal = real
        try emit(frame, frames: out)
    }

    /// Passes `frames` frames of `samples` on, through the trimmer when on.
    private func emit(_ samples: [Float], frames: Int) throws {
        let count = frames * channels
        guard count > 0 else { return }
        guard trim else { return try write(samples, count: count) }
        let speech = samples.withUnsafeBufferPointer { activity.isSpeech(UnsafeBufferPointer(rebasing: $0[..<count])) }
        activeRun = speech ? activeRun + 1 : 0
        held.append(contentsOf: samples[..<count])
        if activeRun >= Self.onsetFrames {
            if !speechStarted {
                // The margin before the first of the active frames.
                speechStarted = true
                let onset = held.count - activeRun * frameSize * channels
                let from = max(0, onset - marginFrames * channels)
                held.removeFirst(from)
            }
            try write(held, count: held.count)
            held.removeAll(keepingCapacity: true)
        } else if !speechStarted {
            let keep = (marginFrames + Self.onsetFrames * frameSize) * channels
            if held.count > keep { held.removeFirst(held.count - keep) }
        } else {
            let limit = Int(Self.heldSilenceLimit * Double(encoding.sampleRate)) * channels
            if held.count > limit {
                let over = held.count - limit
                try write(held, count: over)
                held.removeFirst(over)
            }
        }
    }

    private func write(_ samples: [Float], count: Int) throws {
        guard count > 0 else { return }
        try samples.withUnsafeBufferPointer { try inner.append(UnsafeBufferPointer(rebasing: $0[..<count])) }
    }
}

extension Recorder {
    /// How much later sound reaches the file with `settings.voiceProcessing` on than without: the
    /// 10 ms frame the processing gathers plus speexdsp's one-frame lag (20 ms; 0 when off). The
    /// file's timeline is not shifted by it: see `VoiceEncoder`. Uses the device's rate once
    /// recording, else the rate asked for.
    public var processingLatency: Duration {
        guard !settings.voiceProcessing.isOff else { return .zero }
        let rate = parameters?.sampleRate ?? settings.sampleRate
        return .seconds(Double(2 * max(rate / 100, 1)) / Double(rate))
    }
}
