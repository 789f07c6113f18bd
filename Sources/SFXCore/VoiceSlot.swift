import Foundation

/// One slot of the mixer's preallocated voice table: a cue being read, with its smoothed channel
/// gains and its fade envelope. Plain data only, so the table can live in raw memory and be
/// rendered without reference counting. (The public handle to a play is SFX's `Voice`.)
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
    /// The terminal event a fading voice reports when it falls silent.
    var fadeEnd = MixerEvent.stopped(VoiceID(0))

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
    /// the voice ended (cue over and no loops left, or fade-out complete), nil if it goes on.
    mutating func mix(into bus: UnsafeMutablePointer<Float>, frames: Int, outputChannels: Int) -> Int? {
        guard let samples else { return 0 }
        var done = 0
        while done < frames {
            if left.isSettled && right.isSettled && envelope.isSettled {
                let span = min(frames - done, frameCount - position)
                addSteady(
                    from: samples + position * cueChannels, into: bus + done * outputChannels,
                    frames: span, outputChannels: outputChannels)
                done += span
                position += span
            } else {
                let e = envelope.next()
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
        }
        return nil
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

    /// `addFrame` over a run of frames whose gains do not change; the same arithmetic per sample
    /// (a settled ramp yields its target, and the envelope's target here is 1), with the branch
    /// on the channel layout taken once.
    private func addSteady(
        from p: UnsafePointer<Float>, into o: UnsafeMutablePointer<Float>, frames: Int, outputChannels: Int
    ) {
        let l = left.target * envelope.target
        let r = right.target * envelope.target
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
