/// One effect bus's processor: a reverb or an echo, wet only. Voices send part of their signal
/// into a bus; the bus's processor reads the sum and adds its wet output into a group's bus.
///
/// ```swift
/// let bus = EffectProcessor(.reverb(.hall), sampleRate: 48_000, rewindHeadroomFrames: 2048)  // off the RT thread
/// bus.process(input: sends, inputChannels: 2, frames: 256, addingInto: groupBus, outputChannels: 2)
/// bus.processSilence(frames: 256, addingInto: groupBus, outputChannels: 2)  // no sends this block
/// ```
///
/// ## Real time
/// `init` allocates every ring and writes it once (zeros), so no page is first touched on the
/// audio thread. `process`, `processSilence`, `saveState`, `restoreState` and `reset` never
/// allocate, lock, log or retain: the processor's memory lives behind pointers allocated in
/// `init`, and its settings are constants. Settings never change: a new preset is a new
/// processor, made off the real-time thread and swapped in.
///
/// ## Rewind
/// Every ring is a power of two frames long, at least its longest delay plus
/// `rewindHeadroomFrames` plus one, and all rings are indexed by one frame counter. So what the
/// last `rewindHeadroomFrames` frames wrote never overwrote anything still to be read, and a
/// rewind only has to keep the small state (`stateByteCount` bytes: the frame counter, the idle
/// detection, the reverb's 16 filter memories or the echo's 2): save it, process up to
/// `rewindHeadroomFrames` frames, restore it and process the same input again, and the output is
/// the same bit for bit. The same input and the same state always give the same output.
///
/// ## Input and output
/// A stereo input is read as one signal, (left + right)/2, by the reverb; the echo keeps its two
/// channels. The output is added, never written: stereo output is two decorrelated channels,
/// mono output is the reverb's (left + right)/√2 (the same energy) or the echo's left + right.
///
/// ## Reverb (a feedback delay network, after Jot)
/// - **Pre-delay** of round(preDelay·fs) frames, then three Schroeder allpasses in series
///   (5.3, 3.7 and 2.9 ms) and one more each for left (1.3 ms) and right (1.7 ms):
///   w[n] = a[n] + g·w[n−d], out[n] = w[n−d] − g·w[n], with g = 0.62·diffusion. The first
///   output frame is exactly `preDelay` after the input.
/// - **Eight lines** of m = 23.3 … 51.1 ms, each rounded up to a distinct prime number of frames
///   (so mutually prime). Each line's output passes an absorption filter and the eight are mixed
///   by the 8×8 Hadamard matrix ÷ √8 (orthogonal: lossless) back into the lines; the left
///   allpass feeds the even lines and the right one the odd lines, each with 1/√8.
/// - **Decay**: a line of m frames has the gain g = 10^(−3m / (decayTime·fs)) at DC, so every
///   path through the network loses 60 dB in `decayTime` seconds, and g·ρ at 5 kHz, where
///   ρ = 10^(−3m/fs · (1/(decayTime·highFrequencyRatio) − 1/decayTime)): a first-order high
///   shelf (bilinear) of gain 1 at DC and ρ² at Nyquist with its corner at Ωc = ρ·Ω5
///   (Ω = tan(π·f/fs)), which makes |H|² = (ρ⁴Ω² + Ωc²)/(Ω² + Ωc²) exactly ρ² at 5 kHz. For
///   ρ > 1, ρ is capped so that the loop gain at Nyquist, g·ρ², stays ≤ 0.995. RT60 is
///   `decayTime` at low and mid frequencies (measured in the 1 kHz octave: within 3 % for room,
///   hall and cave); for HF ratios far below 1 (0.1) one first-order shelf cannot keep the mids
///   and the corner falls below 1 kHz, shortening the mids too.
/// - **Output**: left and right are two orthogonal ±1 patterns of the eight filtered line
///   outputs, plus 0.5 × the left or right diffused input (the early part), all times
///   gain / √E, where E ≈ 0.25 + mean over frequency of ḡ²/(1 − ḡ²) (ḡ² the lines' mean power
///   gain) is the energy per channel of a unit impulse's response before scaling. So the tail of
///   a unit impulse carries about gain² of energy in each channel.
///
/// ## Echo (ping-pong)
/// Two lines of D = max(1, round(delay·fs)) frames. The left input enters the left line, the
/// right input (if any) the right one; what leaves each line is output (× wet) on its side and,
/// low-passed (y = (1 − damping)·x + damping·y[−1]) and times feedback, enters the other line.
/// A mono impulse gives taps at D, 2D, 3D, … frames, alternately left and right, of amplitude
/// wet·feedback^(k−1) (damping 0); feedback 0 gives one tap.
///
/// ## Idle
/// A bus with no input costs almost nothing once its tail is silent: after a block without
/// input, if every value read from the lines (and, for the reverb, the diffused input; for the
/// echo, the loop filters) stayed below the level that keeps each output sample under −96 dBFS,
/// for as long as a signal takes to pass through the whole effect (reverb: pre-delay + allpasses
/// + the longest line; echo: D + 1 frames), `isSounding` turns false and `processSilence` (or
/// `process` with all-zero input) adds nothing and only advances the frame counter. A reverb tail
/// that starts near full scale takes about (its slowest RT60) × 96/60 to get there — decayTime,
/// or for HF ratios above 1 the longer RT60 at Nyquist, 1/(2/(decayTime·ratio) − 1/decayTime):
/// the hall after a second of full-scale noise 6.2 s, cave 9.0 s. An impulse's tail starts far
/// below full scale and gets there sooner (hall 3.9 s). The rings keep what they held (all of it
/// below that level); the next input carries on from them.
public final class EffectProcessor: @unchecked Sendable {
    /// The effect and its settings, as given (values out of range are brought into range in use).
    public let effect: Effect
    /// Frames per second.
    public let sampleRate: Int
    /// The longest rewind, frames: what the rings hold beyond the longest delay.
    public let rewindHeadroomFrames: Int
    private let reverb: ReverbKernel?
    private let echo: EchoKernel?
    private let memory: EffectMemory

    /// Makes the processor and all its memory (zeroed): off the real-time thread.
    /// `sampleRate` > 0; `rewindHeadroomFrames` ≥ 0, at least the longest rewind the mixer makes.
    public init(_ effect: Effect, sampleRate: Int, rewindHeadroomFrames: Int) {
        self.effect = effect
        self.sampleRate = sampleRate
        self.rewindHeadroomFrames = max(0, rewindHeadroomFrames)
        switch effect {
        case .reverb(let settings):
            let kernel = ReverbKernel(settings, sampleRate: sampleRate, headroom: self.rewindHeadroomFrames)
            reverb = kernel; echo = nil; memory = kernel.memory
        case .echo(let settings):
            let kernel = EchoKernel(settings, sampleRate: sampleRate, headroom: self.rewindHeadroomFrames)
            echo = kernel; reverb = nil; memory = kernel.memory
        }
    }

    deinit { memory.deallocate() }

    /// Reads `frames` frames of `input` (interleaved, `inputChannels` 1 or 2) and ADDS the wet output
    /// into `output` (interleaved, `outputChannels` 1 or 2). Stereo output is decorrelated L/R.
    /// While silent (`isSounding` false) an all-zero input adds nothing and costs one scan of it.
    public func process(input: UnsafePointer<Float>, inputChannels: Int, frames: Int,
                        addingInto output: UnsafeMutablePointer<Float>, outputChannels: Int) {
        guard frames > 0 else { return }
        if !isSounding {
            var any = false
            for i in 0..<(frames * (inputChannels >= 2 ? 2 : 1)) where input[i] != 0 { any = true; break }
            if !any { advance(frames); return }
        }
        if let reverb {
            reverb.run(input: input, inputChannels: inputChannels, frames: frames, output: output, outputChannels: outputChannels)
        } else if let echo {
            echo.run(input: input, inputChannels: inputChannels, frames: frames, output: output, outputChannels: outputChannels)
        }
    }

    /// The same when the bus got no input this block (all zeros) — lets it skip work once its tail
    /// has decayed below −96 dB (then it adds nothing and costs almost nothing).
    public func processSilence(frames: Int, addingInto output: UnsafeMutablePointer<Float>, outputChannels: Int) {
        guard frames > 0 else { return }
        if !isSounding { advance(frames); return }
        if let reverb {
            reverb.run(input: nil, inputChannels: 1, frames: frames, output: output, outputChannels: outputChannels)
        } else if let echo {
            echo.run(input: nil, inputChannels: 1, frames: frames, output: output, outputChannels: outputChannels)
        }
    }

    /// True while a tail is still sounding (false once silent input has decayed it below −96 dB;
    /// false for a new processor).
    public var isSounding: Bool { memory.ints[EffectMemory.sounding] != 0 }

    /// Size of the small state a rewind saves (ring indices, filter memories, idle detection):
    /// 32 bytes of counters, then 4 bytes per filter memory (reverb 96 bytes, echo 40).
    public var stateByteCount: Int { memory.stateByteCount }

    /// Copies `stateByteCount` bytes of state to `to` (any alignment).
    public func saveState(to: UnsafeMutableRawPointer) {
        to.copyMemory(from: memory.state, byteCount: memory.stateByteCount)
    }

    /// Takes back a state saved by `saveState` of this processor, no more than
    /// `rewindHeadroomFrames` frames ago.
    public func restoreState(from: UnsafeRawPointer) {
        memory.state.copyMemory(from: from, byteCount: memory.stateByteCount)
    }

    /// Silences the memory (off the real-time thread or on it: memset only).
    public func reset() { memory.reset() }

    private func advance(_ frames: Int) {
        memory.ints[EffectMemory.frameCounter] &+= Int64(frames)
    }
}
