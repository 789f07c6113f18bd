/// A mono sound under construction: 64-bit samples at 48 kHz, built from small pieces.
///
/// Every bundled sound is a short function that makes a few `Signal`s — struck or sustained
/// tones (`tone`), filtered noise bursts (`click`, `noise`) — shapes them with an `Envelope`,
/// and mixes them into one at given times. `mastered(peak:)` then turns the result into what ships:
/// band-limited, free of DC, faded in and out to exact zero, its peak scaled to a given level.
///
/// ```swift
/// var chime = Signal(seconds: 0.6)
/// chime.mix(.tone(.glass, note: 88, seconds: 0.5), at: 0)          // E6
/// chime.mix(.tone(.glass, note: 93, seconds: 0.5), at: 0.11)       // A6, a fourth above
/// let samples = chime.mastered(peak: -12)
/// ```
struct Signal {
    static let sampleRate = 48_000.0
    /// The highest partial a tone may have: well below Nyquist, so nothing aliases.
    static let highestPartial = 16_000.0

    var samples: [Double]

    init(_ samples: [Double]) { self.samples = samples }

    /// Silence lasting `seconds`.
    init(seconds: Double) { samples = Array(repeating: 0, count: Signal.frames(seconds)) }

    static func frames(_ seconds: Double) -> Int { Int((seconds * sampleRate).rounded()) }

    /// The time in seconds of sample `index`.
    static func time(_ index: Int) -> Double { Double(index) / sampleRate }

    /// Adds `other`, scaled by `gain`, starting `seconds` in; whatever runs past the end is dropped.
    mutating func mix(_ other: Signal, at seconds: Double = 0, gain: Double = 1) {
        let start = Signal.frames(seconds)
        for (i, sample) in other.samples.enumerated() where start + i < samples.count {
            samples[start + i] += gain * sample
        }
    }

    /// This signal multiplied by `envelope`, sample by sample.
    func shaped(_ envelope: Envelope) -> Signal {
        Signal(samples.enumerated().map { i, sample in sample * envelope.level(at: Signal.time(i)) })
    }

    func filtered(_ filter: Biquad) -> Signal { Signal(filter.process(samples)) }
}

// MARK: - Sources

extension Signal {
    /// A tone of `timbre` at MIDI `note`, optionally gliding to `glideTo` over `glide` seconds
    /// (evenly in pitch, so an octave takes as long at any register). Each partial rises with a
    /// raised-cosine `attack` and decays on its own time; `ring` stretches every decay.
    /// Partials above `highestPartial` are left out.
    static func tone(
        _ timbre: Timbre, note: Double, glideTo: Double? = nil, glide: Double = 0,
        seconds: Double, attack: Double = 0.002, ring: Double = 1
    ) -> Signal {
        let target = glideTo ?? note
        let notes = (0..<frames(seconds)).map { i in
            glide > 0 ? note + (target - note) * min(time(i) / glide, 1) : note
        }
        let fundamentals = notes.map(ExactMath.hertz(note:))
        var result = Signal(seconds: seconds)
        for partial in timbre.partials where partial.ratio * max(fundamentals[0], fundamentals.last ?? 0) <= highestPartial {
            let envelope = Envelope.struck(attack: attack, t60: partial.t60 * ring)
            var phase = 0.0
            for i in result.samples.indices {
                result.samples[i] += partial.gain * ExactMath.sine(turns: phase) * envelope.level(at: time(i))
                phase += partial.ratio * fundamentals[i] / sampleRate
                phase -= phase.rounded(.down)
            }
        }
        return result
    }

    /// White noise in [−1, 1) from a fixed seed.
    static func noise(seconds: Double, seed: UInt64) -> Signal {
        var random = SplitMix64(seed: seed)
        return Signal((0..<frames(seconds)).map { _ in random.nextUnit() * 2 - 1 })
    }

    /// A mechanical click: a burst of noise in a band around `center` hertz that strikes in
    /// two milliseconds (sharp, yet round rather than harsh) and dies away in `t60` seconds.
    static func click(center: Double, q: Double = 1, t60: Double, seed: UInt64) -> Signal {
        noise(seconds: t60 + 0.005, seed: seed)
            .filtered(.bandpass(center: center, q: q))
            .filtered(.lowpass(cutoff: min(center * 2, 12_000)))
            .shaped(.struck(attack: 0.002, t60: t60))
    }
}

// MARK: - Mastering

extension Signal {
    /// The finished sound: a 4th-order Butterworth lowpass at 16 kHz (a guard against anything
    /// near Nyquist), a 20 Hz highpass (no subsonic rumble), a 2 ms fade-in from exact zero and
    /// a 10 ms fade-out to exact zero, the remaining mean removed, then a gain that puts the
    /// sample peak at `peak` dBFS (each sound's constant, which sets its loudness).
    func mastered(peak level: Double) -> [Float] {
        let banded = filtered(.lowpass(cutoff: 16_000, q: 0.541))
            .filtered(.lowpass(cutoff: 16_000, q: 1.307))
            .filtered(.highpass(cutoff: 20))
        var faded = banded.samples
        let fadeInFrames = Signal.frames(0.002)
        let fadeOutFrames = Signal.frames(0.01)
        // Ramps counted in samples from each end, so the first and last samples are exactly zero.
        for i in 0..<min(fadeInFrames, faded.count) {
            faded[i] *= Envelope.rise(Double(i), over: Double(fadeInFrames))
        }
        for i in 0..<min(fadeOutFrames, faded.count) {
            faded[faded.count - 1 - i] *= Envelope.rise(Double(i), over: Double(fadeOutFrames))
        }
        // A short transient keeps a small mean even after the highpass. Subtracting it in the
        // shape of one Hann window (zero at both ends) makes the mean zero and leaves the ends at zero.
        let window = faded.indices.map { i in
            let s = ExactMath.sine(turns: Double(i) / Double(2 * max(faded.count - 1, 1)))
            return s * s
        }
        let mean = faded.reduce(0, +) / max(window.reduce(0, +), 1)
        faded = zip(faded, window).map { $0 - mean * $1 }
        let peak = faded.reduce(0) { max($0, abs($1)) }
        let gain = peak > 0 ? ExactMath.gain(dB: level) / peak : 0
        return faded.map { Float($0 * gain) }
    }
}
