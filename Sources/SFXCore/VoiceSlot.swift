import Glibc
import CSFXKernels

/// One slot of the mixer's preallocated voice table: a cue (or a stream ring) being read, with its
/// smoothed channel gains, its fade envelope, its pause ramp and its rate. Plain data only, so the
/// table can live in raw memory, be rendered without reference counting, and be copied whole
/// (rewind mode restores an earlier copy and renders again: a streaming voice's read cursor is
/// `position`, here, so the copy re-reads the same ring frames). (The public handle to a play is
/// SFX's `Voice`.)
struct VoiceSlot {
    enum Phase: UInt8 {
        /// The slot is empty.
        case free
        /// Sounding, and counted against `maxVoices`.
        case playing
        /// Fading out after a stop or a steal; occupies one of the tail slots.
        case fading
    }

    var phase = Phase.free
    var id = VoiceID(0)
    var cueKey: UInt32 = 0
    var samples: UnsafePointer<Float>?
    var frameCount = 0
    var cueChannels = 1
    /// The next frame of the cue to read.
    var position = 0
    /// Repeats still to come; negative loops forever.
    var loopsLeft = 0
    var group = 0
    var priority = VoicePriority.normal
    /// When the voice started, as a count of plays: smaller is older.
    var order: UInt64 = 0
    var gain: Float = 1
    var pan: Float = 0
    /// Gain × pan law for the left (or only) and right output channels.
    var left = Ramp(0)
    var right = Ramp(0)
    /// The start and stop fades, 0…1.
    var envelope = Ramp(0)
    /// The envelope is heard as sin(π/2 · envelope) (a stream's equal-power crossfade): with one
    /// voice's envelope rising over the same frames as the other's falls, the two sum to 1 frame by
    /// frame, so the gains are sin and cos of the same angle and the power stays constant.
    var equalPower = false
    /// The terminal event a fading voice reports when it falls silent.
    var fadeEnd = MixerEvent.stopped(VoiceID(0))
    /// The ring a streaming voice reads (nil for a cue); `position` is its read cursor, in the
    /// ring's frame numbering.
    var stream: Unmanaged<StreamRing>?
    /// Frames of the source advanced per output frame, 0.5…2; `fraction` is the position between
    /// frame `position` and the next, 0..<1.
    var rate: Double = 1
    var fraction: Double = 0
    /// Why the voice is paused (`pausedByVoice`, `pausedByGroup`, `pausedByAll`), 0 when it is
    /// not: while any is set `hold` glides to 0, and once there the voice keeps its position.
    var pauses: UInt8 = 0
    var hold = Ramp(1)
    var paused: Bool { pauses != 0 }

    /// A positional voice: its gains, pan and pitch come from `source` and the listener, at
    /// every spatial update (see `Mixer` on positional voices).
    var positional = false
    var source = Source()
    /// The last spatial update's distance × cone × listener gain, its pan and its doppler pitch
    /// (the rate is multiplied by it).
    var spatialGain: Float = 1
    var spatialPan: Float = 0
    /// Toward the source in the listener's head (x right, y up, z ahead), for the HRTF.
    var spatialDirection = Vector3.zero
    var pitch: Double = 1
    /// Inaudible: the voice keeps its place in time without being mixed.
    var isVirtual = false
    /// Made virtual while still heard: mixed until the next spatial update, its gains gliding to 0.
    var fadingToVirtual = false

    /// Source frames per output frame: the rate times the doppler pitch.
    var step: Double { rate * pitch }

    static let pausedByVoice: UInt8 = 1
    static let pausedByGroup: UInt8 = 2
    static let pausedByAll: UInt8 = 4

    /// The per-channel gains for `gain` and `pan`; see `Mixer` for the laws.
    static func channelGains(gain: Float, pan: Float, cueChannels: Int, outputChannels: Int) -> (Float, Float) {
        if outputChannels == 1 {
            return cueChannels == 1 ? (gain, 0) : (gain * 0.5, gain * 0.5)
        }
        if cueChannels == 1 {
            let angle = Double(pan + 1) * Double.pi / 4
            return (gain * Float(cos(angle)), gain * Float(sin(angle)))
        }
        return (gain * min(1, 1 - pan), gain * min(1, 1 + pan))
    }

    /// Adds up to `frames` frames of this voice to `bus`. Returns how many frames it produced if
    /// the voice ended (cue over and no loops left, stream at its end, or fade-out complete), nil
    /// if it goes on. A paused voice whose ramp has reached 0 adds nothing and keeps its position
    /// (a stopped one ends at once).
    mutating func mix(into bus: UnsafeMutablePointer<Float>, frames: Int, outputChannels: Int) -> Int? {
        if paused && hold.isSettled { return phase == .fading ? 0 : nil }
        if let stream { return mixStream(stream, into: bus, frames: frames, outputChannels: outputChannels) }
        guard let samples else { return 0 }
        if step != 1 || fraction != 0 {
            return mixInterpolated(samples, into: bus, frames: frames, outputChannels: outputChannels)
        }
        var done = 0
        while done < frames {
            if left.isSettled && right.isSettled && envelope.isSettled && hold.isSettled {
                let span = min(frames - done, frameCount - position)
                addSteady(
                    from: samples + position * cueChannels, into: bus + done * outputChannels,
                    frames: span, outputChannels: outputChannels)
                done += span
                position += span
            } else if envelope.isSettled && hold.isSettled && envelope.target == 1 && hold.target == 1 {
                // Only the channel gains glide (a moving positional voice): the same arithmetic
                // as frame by frame below (× an envelope of exactly 1), in one run.
                let span = min(frames - done, frameCount - position)
                addGliding(
                    from: samples + position * cueChannels, into: bus + done * outputChannels,
                    frames: span, outputChannels: outputChannels)
                done += span
                position += span
            } else {
                let e = envelope.next() * hold.next()
                addFrame(
                    from: samples + position * cueChannels, into: bus + done * outputChannels,
                    left: left.next() * e, right: right.next() * e, outputChannels: outputChannels)
                done += 1
                position += 1
                if phase == .fading && envelope.isSettled { return done }
            }
            if position == frameCount {
                if loopsLeft == 0 { return done }
                if loopsLeft > 0 { loopsLeft -= 1 }
                position = 0
            }
            if paused && hold.isSettled { return nil }
        }
        return nil
    }

    /// A cue at a rate other than 1: each output frame is the straight line between source frames
    /// `position` and `position + 1` at `fraction` (the frame after the last is frame 0 when the
    /// cue loops, silence when it ends), then the position moves on by `rate`.
    private mutating func mixInterpolated(
        _ samples: UnsafePointer<Float>, into bus: UnsafeMutablePointer<Float>, frames: Int, outputChannels: Int
    ) -> Int? {
        var done = 0
        while done < frames {
            if positional && cueChannels == 1 && envelope.isSettled && hold.isSettled && envelope.target == 1
                && hold.target == 1 && position + 2 < frameCount && left.isBlockable && right.isBlockable {
                done += addPositional(samples, into: bus + done * outputChannels, frames: frames - done,
                                      outputChannels: outputChannels)
                if !wrapAtEnd() { return done }
                continue
            }
            if cueChannels == 1 && outputChannels == 2 && envelope.isSettled && hold.isSettled
                && envelope.target == 1 && hold.target == 1 && position + 2 < frameCount {
                // A mono cue away from its end with nothing fading (a positional voice under
                // doppler): the same arithmetic as below, in one run while the next frame exists.
                // The state in locals: the output may alias memory the compiler cannot rule out.
                let o = bus + done * 2
                var k = 0
                let limit = frames - done
                var at = position, phase = fraction, l = left, r = right
                let by = step
                while k < limit && at + 1 < frameCount {
                    let a = samples[at], b = samples[at + 1]
                    let s0 = a + (b - a) * Float(phase)
                    o[2 * k] += s0 * l.next()
                    o[2 * k + 1] += s0 * r.next()
                    k += 1
                    Self.advance(&phase, &at, by: by)
                }
                position = at
                fraction = phase
                left = l
                right = r
                done += k
                if !wrapAtEnd() { return done }
                continue
            }
            let e = envelope.next() * hold.next()
            let next = position + 1 < frameCount ? position + 1 : (loopsLeft != 0 ? 0 : -1)
            addInterpolated(
                samples + position * cueChannels, next >= 0 ? samples + next * cueChannels : nil, Float(fraction),
                into: bus + done * outputChannels, left: left.next() * e, right: right.next() * e,
                channels: cueChannels, outputChannels: outputChannels)
            done += 1
            advance()
            if phase == .fading && envelope.isSettled { return done }
            if !wrapAtEnd() { return done }
            if paused && hold.isSettled { return nil }
        }
        return nil
    }

    /// One run of a positional mono cue at a rate other than 1 (doppler), its envelope and
    /// pause gain at 1, while the frame after the read position exists: returns the frames
    /// added (at least 1). The read position is fixed point, 32 bits of fraction: each frame
    /// moves it on by the step rounded to 2⁻³² (`fixedStep`), exactly, so the positions are
    /// the same however rendering is split, and `fraction` stays a multiple of 2⁻³² (exact in
    /// Double). Each sample is a + (b − a)·f, f the fraction's top 24 bits; the gains are the
    /// ramps' values for each frame (`Ramp.value(after:)`, as `next` gives them).
    private mutating func addPositional(
        _ samples: UnsafePointer<Float>, into o: UnsafeMutablePointer<Float>, frames: Int, outputChannels: Int
    ) -> Int {
        let inc = Self.fixedStep(step)
        let start = UInt64(position) << 32 | Self.fixedFraction(fraction)
        // The last position whose next frame exists: frame frameCount − 2, any fraction.
        let last = UInt64(frameCount - 2) << 32 | 0xFFFF_FFFF
        let n = min(frames, Int((last - start) / inc) + 1)
        let l = left, r = right
        let scale: Float = 1 / 16_777_216
        // Eight frames at a time where the processor has AVX2 (the same samples, bit for bit).
        let first = outputChannels == 2 && sfx_kernels_have_avx2() != 0
            ? sfx_positional_mono_stereo_avx2(samples, Int64(frameCount), o, n, start, inc, l.kernelState, r.kernelState) : 0
        // Then four frames at a time: the reads are scalar (each frame's pair of source frames),
        // the rest is SIMD; the frames left over take the same arithmetic one at a time.
        let groups = (n - first) / 4
        var at = start &+ UInt64(first) &* inc
        var out = o + first * outputChannels
        // The four frames' fractions are the low 32 bits of their positions: they move on by
        // 4 × the step modulo 2³², as the positions do.
        let lowStep = UInt32(truncatingIfNeeded: inc)
        var fractions = SIMD4(repeating: UInt32(truncatingIfNeeded: at)) &+ SIMD4(0, 1, 2, 3) &* lowStep
        let groupStep = SIMD4(repeating: lowStep &* 4)
        for g in 0..<groups {
            let p0 = at, p1 = at &+ inc, p2 = p1 &+ inc, p3 = p2 &+ inc
            at = p3 &+ inc
            let i0 = Int(truncatingIfNeeded: p0 >> 32), i1 = Int(truncatingIfNeeded: p1 >> 32)
            let i2 = Int(truncatingIfNeeded: p2 >> 32), i3 = Int(truncatingIfNeeded: p3 >> 32)
            let a = SIMD4(samples[i0], samples[i1], samples[i2], samples[i3])
            let b = SIMD4(samples[i0 &+ 1], samples[i1 &+ 1], samples[i2 &+ 1], samples[i3 &+ 1])
            let f = SIMD4<Float>(SIMD4<Int32>(truncatingIfNeeded: fractions &>> 8)) * scale
            fractions &+= groupStep
            let s = a + (b - a) * f
            let k = first + 4 * g + 1
            let raw = UnsafeMutableRawPointer(out)
            if outputChannels == 2 {
                let x = s * l.values(after: k), y = s * r.values(after: k)
                raw.storeBytes(of: raw.loadUnaligned(as: SIMD4<Float>.self) + SIMD4(x[0], y[0], x[1], y[1]), as: SIMD4<Float>.self)
                raw.storeBytes(of: raw.loadUnaligned(fromByteOffset: 16, as: SIMD4<Float>.self) + SIMD4(x[2], y[2], x[3], y[3]),
                               toByteOffset: 16, as: SIMD4<Float>.self)
                out += 8
            } else {
                raw.storeBytes(of: raw.loadUnaligned(as: SIMD4<Float>.self) + s * l.values(after: k), as: SIMD4<Float>.self)
                out += 4
            }
        }
        for k in (first + 4 * groups)..<n {
            let i = Int(truncatingIfNeeded: at >> 32)
            let f = Float(Int32(truncatingIfNeeded: (at & 0xFFFF_FFFF) >> 8)) * scale
            at = at &+ inc
            let a = samples[i], b = samples[i &+ 1]
            let s = a + (b - a) * f
            if outputChannels == 2 {
                out[0] += s * l.value(after: k + 1)
                out[1] += s * r.value(after: k + 1)
                out += 2
            } else {
                out[0] += s * l.value(after: k + 1)
                out += 1
            }
        }
        let end = start &+ UInt64(n) &* inc
        position = Int(truncatingIfNeeded: end >> 32)
        fraction = Double(end & 0xFFFF_FFFF) * (1 / 4_294_967_296.0)
        left.advance(by: n)
        right.advance(by: n)
        return n
    }

    /// A step in source frames as a 32.32 fixed-point increment (at least 2⁻³²).
    @inline(__always)
    private static func fixedStep(_ step: Double) -> UInt64 {
        max(1, UInt64((step * 4_294_967_296).rounded()))
    }

    /// A fraction 0..<1 as 32 bits of fixed point (truncated: exact for a multiple of 2⁻³²).
    @inline(__always)
    private static func fixedFraction(_ fraction: Double) -> UInt64 {
        min(0xFFFF_FFFF, UInt64(fraction * 4_294_967_296))
    }

    /// Brings a position past the cue's end back into it for each loop left; false when the
    /// cue is over (no loop left).
    @inline(__always)
    private mutating func wrapAtEnd() -> Bool {
        while position >= frameCount {
            if loopsLeft == 0 { return false }
            if loopsLeft > 0 { loopsLeft -= 1 }
            position -= frameCount
        }
        return true
    }

    /// A streaming voice: reads the ring at `position` (interpolating as above at other rates).
    /// A frame the producer has not written yet plays as silence, the position waits for it, and
    /// the ring counts an underrun; the voice never waits. It finishes at the ring's end.
    private mutating func mixStream(
        _ stream: Unmanaged<StreamRing>, into bus: UnsafeMutablePointer<Float>, frames: Int, outputChannels: Int
    ) -> Int? {
        let (base, mask, channels, written, end) = stream._withUnsafeGuaranteedRef {
            ($0.storage, $0.mask, $0.channels, $0.written.load(ordering: .acquiring), $0.end.load(ordering: .acquiring))
        }
        var short = 0
        defer {
            if short > 0 {
                stream._withUnsafeGuaranteedRef {
                    $0.underrunCount.wrappingAdd(1, ordering: .relaxed)
                    $0.underrunFrameCount.wrappingAdd(short, ordering: .relaxed)
                }
            }
        }
        var done = 0
        while done < frames {
            if position >= end { return done }
            let needsNext = fraction != 0 && position + 1 < end
            let v = envelope.next()
            let e = (equalPower ? sin(v * (Float.pi / 2)) : v) * hold.next()
            let l = left.next() * e, r = right.next() * e
            if position >= written || (needsNext && position + 1 >= written) {
                short += 1
            } else {
                addInterpolated(
                    base + (position & mask) * channels,
                    needsNext ? base + ((position + 1) & mask) * channels : (fraction != 0 ? nil : base + (position & mask) * channels),
                    Float(fraction), into: bus + done * outputChannels, left: l, right: r,
                    channels: channels, outputChannels: outputChannels)
                advance()
            }
            done += 1
            if phase == .fading && envelope.isSettled { return done }
            if paused && hold.isSettled { return nil }
        }
        return nil
    }

    /// Advances a virtual voice by `frames` frames as `mix` would, without a sound: its position,
    /// loops, fades and pause ramp move exactly as if it had been mixed (frame by frame, so the
    /// result does not depend on how rendering was split). Returns what `mix` would.
    mutating func skip(frames: Int) -> Int? {
        if paused && hold.isSettled { return phase == .fading ? 0 : nil }
        var done = 0
        while done < frames {
            if step == 1 && fraction == 0 && left.isSettled && right.isSettled && envelope.isSettled && hold.isSettled {
                let span = min(frames - done, frameCount - position)
                done += span
                position += span
            } else {
                _ = envelope.next()
                _ = hold.next()
                _ = left.next()
                _ = right.next()
                done += 1
                advance()
                if phase == .fading && envelope.isSettled { return done }
            }
            if !wrapAtEnd() { return done }
            if paused && hold.isSettled { return nil }
        }
        return nil
    }

    @inline(__always)
    private mutating func advance() { Self.advance(&fraction, &position, by: step) }

    /// Moves a read position (whole frames and a fraction) on by `step` source frames. The
    /// fraction and the step are never negative: truncation is the floor, without a call to libm.
    @inline(__always)
    private static func advance(_ fraction: inout Double, _ position: inout Int, by step: Double) {
        fraction += step
        let whole = Int(fraction)
        fraction -= Double(whole)
        position += whole
    }

    /// Adds a + (b − a)·f of each channel (b nil counts as silence).
    @inline(__always)
    private func addInterpolated(
        _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>?, _ f: Float, into o: UnsafeMutablePointer<Float>,
        left l: Float, right r: Float, channels: Int, outputChannels: Int
    ) {
        let a0 = a[0], a1 = channels == 2 ? a[1] : 0
        let b0 = b?[0] ?? 0, b1 = channels == 2 ? (b?[1] ?? 0) : 0
        let s0 = a0 + (b0 - a0) * f
        let s1 = a1 + (b1 - a1) * f
        if channels == 1 {
            o[0] += s0 * l
            if outputChannels == 2 { o[1] += s0 * r }
        } else if outputChannels == 2 {
            o[0] += s0 * l
            o[1] += s1 * r
        } else {
            o[0] += s0 * l + s1 * r
        }
    }

    @inline(__always)
    private func addFrame(
        from p: UnsafePointer<Float>, into o: UnsafeMutablePointer<Float>,
        left l: Float, right r: Float, outputChannels: Int
    ) {
        if cueChannels == 1 {
            o[0] += p[0] * l
            if outputChannels == 2 { o[1] += p[0] * r }
        } else if outputChannels == 2 {
            o[0] += p[0] * l
            o[1] += p[1] * r
        } else {
            o[0] += p[0] * l + p[1] * r
        }
    }

    /// `addFrame` over a run of frames whose channel gains glide and whose envelope and pause
    /// gain rest at 1: each frame's gains are the ramps' values for that frame (`Ramp.value(after:)`,
    /// what `next` would return, so the samples are the same bit for bit), computed without a
    /// branch so that the loops vectorise; the ramps then move on by the run.
    private mutating func addGliding(
        from p: UnsafePointer<Float>, into o: UnsafeMutablePointer<Float>, frames: Int, outputChannels: Int
    ) {
        let left = self.left, right = self.right
        guard left.isBlockable && right.isBlockable else {
            for k in 0..<frames {
                addFrame(from: p + k * cueChannels, into: o + k * outputChannels,
                         left: self.left.next(), right: self.right.next(), outputChannels: outputChannels)
            }
            return
        }
        switch (cueChannels, outputChannels) {
        case (1, 1):
            for k in 0..<frames { o[k] += p[k] * left.value(after: k + 1) }
        case (1, _):
            // Four frames at a time in SIMD4, the same arithmetic lane by lane as the rest.
            let groups = frames / 4
            for g in 0..<groups {
                let k = 4 &* g
                let x = UnsafeRawPointer(p + k).loadUnaligned(as: SIMD4<Float>.self)
                let a = x * left.values(after: k &+ 1), b = x * right.values(after: k &+ 1)
                let out = UnsafeMutableRawPointer(o + 2 &* k)
                out.storeBytes(of: out.loadUnaligned(as: SIMD4<Float>.self) + SIMD4(a[0], b[0], a[1], b[1]), as: SIMD4<Float>.self)
                out.storeBytes(of: out.loadUnaligned(fromByteOffset: 16, as: SIMD4<Float>.self) + SIMD4(a[2], b[2], a[3], b[3]),
                               toByteOffset: 16, as: SIMD4<Float>.self)
            }
            for k in (4 * groups)..<frames {
                let l = left.value(after: k + 1), r = right.value(after: k + 1)
                o[2 * k] += p[k] * l
                o[2 * k + 1] += p[k] * r
            }
        case (_, 1):
            for k in 0..<frames {
                let l = left.value(after: k + 1), r = right.value(after: k + 1)
                o[k] += p[2 * k] * l + p[2 * k + 1] * r
            }
        default:
            for k in 0..<frames {
                let l = left.value(after: k + 1), r = right.value(after: k + 1)
                o[2 * k] += p[2 * k] * l
                o[2 * k + 1] += p[2 * k + 1] * r
            }
        }
        self.left.advance(by: frames)
        self.right.advance(by: frames)
    }

    /// `addFrame` over a run of frames whose gains do not change; the same arithmetic per sample
    /// (a settled ramp yields its target, and the envelope's target here is 1), with the branch
    /// on the channel layout taken once.
    private func addSteady(
        from p: UnsafePointer<Float>, into o: UnsafeMutablePointer<Float>, frames: Int, outputChannels: Int
    ) {
        let l = left.target * envelope.target * hold.target
        let r = right.target * envelope.target * hold.target
        switch (cueChannels, outputChannels) {
        case (1, 1):
            for k in 0..<frames { o[k] += p[k] * l }
        case (1, _):
            for k in 0..<frames {
                o[2 * k] += p[k] * l
                o[2 * k + 1] += p[k] * r
            }
        case (_, 1):
            for k in 0..<frames { o[k] += p[2 * k] * l + p[2 * k + 1] * r }
        default:
            for k in 0..<frames {
                o[2 * k] += p[2 * k] * l
                o[2 * k + 1] += p[2 * k + 1] * r
            }
        }
    }
}
