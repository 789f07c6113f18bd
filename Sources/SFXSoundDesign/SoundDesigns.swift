/// The synthesis of each bundled sound: one short function per sound, returning the raw mix
/// (mastering — band limit, DC, fades, level — happens in `SystemSoundSpec.render()`).
///
/// Pitches are MIDI note numbers (60 = C4, 69 = A4 = 440 Hz) so intervals read as music:
/// +5 is a fourth, +7 a fifth, +12 an octave. Noise seeds are fixed, so every call returns the
/// same samples.
enum SoundDesigns {
    // MARK: Taps and mechanical sounds

    static func tock() -> Signal {
        var s = Signal(seconds: 0.08)
        s.mix(.tone(.wood, note: 74.5, seconds: 0.08, attack: 0.001))                    // ~ D5
        s.mix(.click(center: 2_400, q: 0.8, t60: 0.008, seed: 1000), gain: 0.25)
        return s
    }

    static func tink() -> Signal {
        var s = Signal(seconds: 0.25)
        s.mix(.tone(.glass, note: 98, seconds: 0.25, attack: 0.0015, ring: 0.2))          // D7
        return s
    }

    static func keyClick() -> Signal {
        var s = Signal(seconds: 0.07)
        s.mix(.click(center: 3_200, q: 0.9, t60: 0.012, seed: 1002))
        s.mix(.tone(.wood, note: 54, seconds: 0.07, attack: 0.001, ring: 0.4), gain: 0.3) // body thump ~ F#3
        return s
    }

    static func buttonPressed() -> Signal {
        var s = Signal(seconds: 0.06)
        s.mix(.tone(.chime, note: 95, seconds: 0.06, attack: 0.001, ring: 0.04))          // B6
        s.mix(.click(center: 5_000, q: 1.5, t60: 0.004, seed: 1027), gain: 0.3)
        return s
    }

    /// A latch: a sharp click, the body's knock, then a smaller click as it seats.
    static func latch(firstBand: Double, secondBand: Double, bodyNote: Double, seed: UInt64) -> Signal {
        var s = Signal(seconds: 0.15)
        s.mix(.click(center: firstBand, q: 1.2, t60: 0.015, seed: seed))
        s.mix(.tone(.wood, note: bodyNote, seconds: 0.1, attack: 0.001), gain: 0.5)
        s.mix(.click(center: secondBand, q: 1.2, t60: 0.02, seed: seed + 1), at: 0.035, gain: 0.6)
        return s
    }

    static func lock() -> Signal {
        latch(firstBand: 1_600, secondBand: 1_100, bodyNote: 58, seed: 1003)             // firm, low: body ~ A#3
    }

    static func unlock() -> Signal {
        latch(firstBand: 2_200, secondBand: 3_400, bodyNote: 65, seed: 1004)             // lighter, rising: ~ F4
    }

    /// A focal-plane shutter: the first curtain's click, a faint whir, the second curtain's click.
    static func shutter(gap: Double, brightness: Double, seed: UInt64) -> Signal {
        var s = Signal(seconds: gap + 0.06)
        s.mix(.click(center: 4_000 * brightness, q: 0.8, t60: 0.025, seed: seed))
        s.mix(.tone(.glass, note: 85, seconds: 0.06, attack: 0.001, ring: 0.04), gain: 0.25)   // metal ping ~ C#6
        let whir = Signal.noise(seconds: gap, seed: seed + 1)
            .filtered(.bandpass(center: 6_000 * brightness, q: 2))
            .shaped(.gate(attack: gap / 3, hold: 0, release: gap * 2 / 3))
        s.mix(whir, at: 0.004, gain: 0.12)
        s.mix(.click(center: 2_800 * brightness, q: 0.8, t60: 0.04, seed: seed + 2), at: gap, gain: 0.8)
        return s
    }

    static func cameraShutter() -> Signal { shutter(gap: 0.07, brightness: 1, seed: 1005) }

    static func screenCapture() -> Signal { shutter(gap: 0.045, brightness: 1.1, seed: 1021) }

    /// Paper crumpling: a thinning shower of small crackles over a soft low rush.
    static func trashEmpty() -> Signal {
        var s = Signal(seconds: 0.6)
        var random = SplitMix64(seed: 1025)
        for k in 0..<18 {
            let at = 0.45 * random.nextUnit() * random.nextUnit()                         // crowded at the start
            let center = 1_500 + 3_500 * random.nextUnit()
            let t60 = 0.005 + 0.012 * random.nextUnit()
            s.mix(.click(center: center, q: 1.5, t60: t60, seed: 2000 + UInt64(k)), at: at, gain: 1 - at)
        }
        let rush = Signal.noise(seconds: 0.5, seed: 1025)
            .filtered(.bandpass(center: 350, q: 0.7))
            .filtered(.lowpass(cutoff: 1_500))
            .shaped(.gate(attack: 0.05, hold: 0.1, release: 0.35))
        s.mix(rush, gain: 0.5)
        return s
    }

    // MARK: Messages

    static func sent() -> Signal {
        var s = Signal(seconds: 0.3)
        let envelope = Envelope.gate(attack: 0.06, hold: 0.04, release: 0.18)
        s.mix(Signal.tone(.beep, note: 72, glideTo: 91, glide: 0.22, seconds: 0.28).shaped(envelope))   // C5 up to G6
        let air = Signal.noise(seconds: 0.28, seed: 1006)
            .filtered(.bandpass(center: 2_500, q: 0.7))
            .filtered(.lowpass(cutoff: 6_000))
            .shaped(envelope)
        s.mix(air, gain: 0.15)
        return s
    }

    static func received() -> Signal {
        var s = Signal(seconds: 0.55)
        let swoop = Signal.tone(.beep, note: 91, glideTo: 84, glide: 0.1, seconds: 0.12)  // G6 down to C6
            .shaped(.gate(attack: 0.03, hold: 0.04, release: 0.05))
        s.mix(swoop, gain: 0.5)
        s.mix(.tone(.chime, note: 84, seconds: 0.45, ring: 0.6), at: 0.09)                // lands on C6
        s.mix(.tone(.glass, note: 96, seconds: 0.3, ring: 0.3), at: 0.09, gain: 0.15)     // C7 shimmer
        return s
    }

    static func messageNewInstant() -> Signal {
        var s = Signal(seconds: 0.6)
        s.mix(.tone(.glass, note: 88, seconds: 0.5, ring: 0.5))                           // E6
        s.mix(.tone(.glass, note: 93, seconds: 0.49, ring: 0.6), at: 0.11)                // A6: a fourth up
        return s
    }

    static func messageNewEmail() -> Signal {
        var s = Signal(seconds: 0.8)
        s.mix(.tone(.chime, note: 93, seconds: 0.5, ring: 0.5), gain: 0.8)                // A6
        s.mix(.tone(.chime, note: 86, seconds: 0.65, ring: 0.8), at: 0.14)               // D6: a fifth down
        return s
    }

    // MARK: Dialogs and events

    static func dialogInformation() -> Signal {
        var s = Signal(seconds: 0.5)
        s.mix(.tone(.marimba, note: 79, seconds: 0.5, ring: 0.9))                         // G5
        s.mix(.tone(.marimba, note: 91, seconds: 0.3, ring: 0.5), gain: 0.2)              // G6, an octave of air
        return s
    }

    static func dialogQuestion() -> Signal {
        var s = Signal(seconds: 0.6)
        s.mix(.tone(.chime, note: 84, seconds: 0.2, ring: 0.3), gain: 0.85)               // C6
        s.mix(.tone(.chime, note: 93, seconds: 0.45, ring: 0.6), at: 0.13)               // A6: a sixth up, asking
        return s
    }

    static func dialogWarning() -> Signal {
        var s = Signal(seconds: 0.6)
        s.mix(.tone(.reed, note: 81, seconds: 0.2, attack: 0.004, ring: 0.4))             // A5
        s.mix(.tone(.reed, note: 81, seconds: 0.44, attack: 0.004, ring: 0.6), at: 0.16)  // A5 again
        return s
    }

    static func dialogError() -> Signal {
        var s = Signal(seconds: 0.8)
        s.mix(.tone(.reed, note: 76, seconds: 0.25, attack: 0.005, ring: 0.5))            // E5
        s.mix(.tone(.reed, note: 73, seconds: 0.65, attack: 0.005, ring: 0.9), at: 0.15)  // C#5: a minor third down
        return s
    }

    static func suspendError() -> Signal {
        var s = Signal(seconds: 0.45)
        let buzz = Signal.tone(.reed, note: 69, seconds: 0.14, attack: 0.005, ring: 0.6)  // A4
            .shaped(.gate(attack: 0.005, hold: 0.1, release: 0.035))
        s.mix(buzz)
        s.mix(buzz, at: 0.19)
        return s
    }

    static func complete() -> Signal {
        var s = Signal(seconds: 0.8)
        for (k, note) in [84.0, 88, 91].enumerated() {                                    // C6 E6 G6
            s.mix(.tone(.glass, note: note, seconds: 0.8 - 0.07 * Double(k), ring: 0.3 + 0.2 * Double(k)),
                  at: 0.07 * Double(k), gain: 0.8 + 0.1 * Double(k))
        }
        return s
    }

    static func bell() -> Signal {
        var s = Signal(seconds: 1)
        s.mix(.tone(.bell, note: 72, seconds: 1, attack: 0.002))                          // prime C5, hum C4
        s.mix(.click(center: 3_000, q: 0.7, t60: 0.01, seed: 1010), gain: 0.04)           // the clapper
        return s.shaped(.gate(attack: 0, hold: 0.7, release: 0.3))
    }

    /// Two marimba notes a fourth apart, rising or falling.
    static func twoNotes(_ first: Double, _ second: Double) -> Signal {
        var s = Signal(seconds: 0.5)
        s.mix(.tone(.marimba, note: first, seconds: 0.3, ring: 0.6), gain: 0.85)
        s.mix(.tone(.marimba, note: second, seconds: 0.41, ring: 0.8), at: 0.09)
        return s
    }

    static func deviceAdded() -> Signal { twoNotes(79, 84) }                              // G5 → C6

    static func deviceRemoved() -> Signal { twoNotes(84, 79) }                            // C6 → G5

    /// A chime arpeggio, 0.1 s per note.
    static func arpeggio(_ notes: [Double]) -> Signal {
        var s = Signal(seconds: 1)
        for (k, note) in notes.enumerated() {
            let at = 0.1 * Double(k)
            s.mix(.tone(.chime, note: note, seconds: 1 - at, attack: 0.01, ring: 0.6), at: at)
        }
        return s
    }

    static func serviceLogin() -> Signal { arpeggio([72, 76, 79, 84]) }                   // C5 E5 G5 C6

    static func serviceLogout() -> Signal { arpeggio([84, 79, 76, 72]) }                  // C6 G5 E5 C5

    // MARK: Power and levels

    /// A plug's click, then a tone that glides a fifth up or down.
    static func plug(from: Double, to: Double, seed: UInt64) -> Signal {
        var s = Signal(seconds: 0.4)
        s.mix(.click(center: 2_000, q: 1, t60: 0.015, seed: seed), gain: 0.6)
        let glide = Signal.tone(.chime, note: from, glideTo: to, glide: 0.12, seconds: 0.37, attack: 0.01, ring: 0.5)
        s.mix(glide, at: 0.03)
        return s
    }

    static func powerPlug() -> Signal { plug(from: 76, to: 83, seed: 1019) }              // E5 → B5

    static func powerUnplug() -> Signal { plug(from: 83, to: 76, seed: 1020) }            // B5 → E5

    static func lowPower() -> Signal {
        var s = Signal(seconds: 0.9)
        let fall = Signal.tone(.chime, note: 86, glideTo: 74, glide: 0.6, seconds: 0.9, attack: 0.02, ring: 1.5)  // D6 → D5
        s.mix(fall.shaped(.gate(attack: 0, hold: 0.55, release: 0.35)))
        return s
    }

    static func audioVolumeChange() -> Signal {
        var s = Signal(seconds: 0.1)
        s.mix(.tone(.chime, note: 91, glideTo: 79, glide: 0.015, seconds: 0.1, attack: 0.002, ring: 0.1))   // a pop: G6 falling to G5
        return s
    }

    static func alarm() -> Signal {
        var s = Signal(seconds: 2.5)
        let beep = Signal.tone(.beep, note: 84, seconds: 0.08)                            // C6
            .shaped(.gate(attack: 0.004, hold: 0.06, release: 0.015))
        for group in 0..<3 {
            for k in 0..<4 {
                s.mix(beep, at: 0.85 * Double(group) + 0.12 * Double(k))
            }
        }
        return s
    }
}
