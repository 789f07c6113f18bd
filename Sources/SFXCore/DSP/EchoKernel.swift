/// The echo's two lines (laws in `EffectProcessor`'s header). Plain data: pointers into an
/// `EffectMemory` and constants computed in `init`; `run` writes only through the pointers.
struct EchoKernel {
    let memory: EffectMemory
    let left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, mask: Int
    let delay: Int
    let feedback: Float, wet: Float, damping: Float
    let monitorThreshold: Float
    let quietWindow: Int

    init(_ s: EchoSettings, sampleRate: Int, headroom: Int) {
        let fs = Double(max(1, sampleRate))
        let seconds = Double(min(max(s.delay.isFinite ? s.delay : 0.001, 0.001), EchoSettings.maximumDelay))
        delay = max(1, Int((seconds * fs).rounded()))
        feedback = min(max(s.feedback.isFinite ? s.feedback : 0, 0), 0.95)
        wet = min(max(s.wet.isFinite ? s.wet : 0, 0), 1)
        damping = min(max(s.damping.isFinite ? s.damping : 0, 0), 0.99)
        let size = EffectMemory.ringSize(delay + max(0, headroom) + 1)
        memory = EffectMemory(ringFloats: 2 * size, floatCount: 2)
        left = memory.rings
        right = memory.rings + size
        mask = size - 1
        // Idle: every line read and both filter memories below −96 dB ÷ wet for one round trip
        // (then everything still in the lines is below it too, and only shrinks).
        monitorThreshold = wet > 0 ? Float(1.5848931924611108e-5) / wet : .infinity
        quietWindow = delay + 1
    }

    /// Processes `frames` frames: `input` nil is silence. Adds into `output`. Written with
    /// scalars, pointers and a `while` loop, which stay fast in debug builds too.
    func run(input: UnsafePointer<Float>?, inputChannels: Int, frames: Int,
             output: UnsafeMutablePointer<Float>, outputChannels: Int) {
        let ints = memory.ints, floats = memory.floats
        var t = Int(ints[EffectMemory.frameCounter])
        var lowL = floats[0], lowR = floats[1]
        let d = delay, m = mask, fb = feedback, k = damping, pass = 1 - damping
        var inputPeak: Float = 0
        var signalPeak: Float = 0
        var n = 0
        while n < frames {
            var inL: Float = 0, inR: Float = 0
            if let input {
                if inputChannels >= 2 { inL = input[2 &* n]; inR = input[2 &* n &+ 1] } else { inL = input[n] }
                if !inL.isFinite { inL = 0 }   // a NaN or ∞ would sound for ever
                if !inR.isFinite { inR = 0 }
            }
            let il = inL < 0 ? -inL : inL, ir = inR < 0 ? -inR : inR
            if il > inputPeak { inputPeak = il }
            if ir > inputPeak { inputPeak = ir }
            let outL = left[(t &- d) & m], outR = right[(t &- d) & m]
            if outputChannels >= 2 {
                output[2 &* n] += wet * outL
                output[2 &* n &+ 1] += wet * outR
            } else {
                output[n] += wet * (outL + outR)
            }
            lowL = pass * outL + k * lowL
            lowR = pass * outR + k * lowR
            let ol = outL < 0 ? -outL : outL, or = outR < 0 ? -outR : outR
            let ll = lowL < 0 ? -lowL : lowL, lr = lowR < 0 ? -lowR : lowR
            if ol > signalPeak { signalPeak = ol }
            if or > signalPeak { signalPeak = or }
            if ll > signalPeak { signalPeak = ll }
            if lr > signalPeak { signalPeak = lr }
            // Ping-pong: what left the left line enters the right one, and back.
            left[t & m] = inL + fb * lowR
            right[t & m] = inR + fb * lowL
            t &+= 1
            n &+= 1
        }
        ints[EffectMemory.frameCounter] = Int64(t)
        floats[0] = lowL; floats[1] = lowR
        memory.endBlock(frames: frames, inputPeak: inputPeak, signalPeak: signalPeak,
                        threshold: monitorThreshold, window: quietWindow)
    }
}
