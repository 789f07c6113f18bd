/// The filters on one voice's (or one group's) signal: the one it was given (`setFilter`) and,
/// for a positional voice, air absorption (a high shelf at 5 kHz that falls with distance).
/// Each runs only while it is on, so an unfiltered voice costs nothing here. Taking a filter off
/// first glides it to an open low-pass (0.45 × the sample rate), then stops running it: no
/// click. Plain data, in a mixer array that snapshots copy.
struct VoiceFilters {
    var filter: Biquad
    var air: Biquad
    var filterOn = false
    /// Gliding to open, to be turned off once there.
    var filterClosing = false
    var airOn = false

    var isActive: Bool { filterOn || airOn }

    init(sampleRate: Int, smoothingFrames: Int) {
        filter = Biquad(Self.open(sampleRate), sampleRate: sampleRate, smoothingFrames: smoothingFrames)
        air = Biquad(.highShelf(cutoff: AirAbsorption.referenceFrequency, gain: 1), sampleRate: sampleRate, smoothingFrames: smoothingFrames)
    }

    /// The low-pass a filter glides to before it is turned off.
    static func open(_ sampleRate: Int) -> FilterSettings { .lowPass(cutoff: 0.45 * Float(sampleRate)) }

    /// Puts on, changes or (nil) takes off the voice's filter.
    mutating func setFilter(_ settings: FilterSettings?) {
        if let settings {
            if filterOn {
                filter.set(settings)
            } else {
                filter = Biquad(settings, sampleRate: filter.sampleRate, smoothingFrames: filter.smoothingFrames)
                filterOn = true
            }
            filterClosing = false
        } else if filterOn {
            filter.set(Self.open(filter.sampleRate))
            filterClosing = true
        }
    }

    /// Air absorption's high-frequency gain now (1 takes it off once it has glided there).
    mutating func setAirGain(_ gain: Float) {
        let settings = FilterSettings.highShelf(cutoff: AirAbsorption.referenceFrequency, gain: gain * gain)
        if airOn {
            air.set(settings)
        } else if gain < 1 {
            air = Biquad(settings, sampleRate: air.sampleRate, smoothingFrames: air.smoothingFrames)
            airOn = true
        }
    }

    /// Forgets the filters' histories (a voice heard again after being virtual).
    mutating func reset() {
        filter.reset()
        air.reset()
    }

    /// Filters `samples` in place. A filter being taken off stops at the frame its glide ends,
    /// whatever the blocks, so the output does not depend on how rendering was split.
    mutating func process(_ samples: UnsafeMutablePointer<Float>, frames: Int, channels: Int) {
        if filterOn {
            if filterClosing && filter.framesUntilSettled < frames {
                filter.process(samples, frames: filter.framesUntilSettled, channels: channels)
                filterOn = false
                filterClosing = false
            } else {
                filter.process(samples, frames: frames, channels: channels)
            }
        }
        if airOn {
            if air.settings.gain >= 1 && air.framesUntilSettled < frames {
                air.process(samples, frames: air.framesUntilSettled, channels: channels)
                airOn = false
            } else {
                air.process(samples, frames: frames, channels: channels)
            }
        }
    }
}
