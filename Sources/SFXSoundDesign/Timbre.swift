/// One sine component of a tone: its frequency as a multiple of the fundamental, its level,
/// and how many seconds it takes to decay by 60 dB.
struct Partial {
    var ratio: Double
    var gain: Double
    var t60: Double
}

/// The partials that give an instrument its colour, played by `Signal.tone`.
///
/// Bars (glass, marimba, wood) have inharmonic modes whose upper partials die fast, which is
/// what makes them sound struck; `chime` is a soft harmonic pluck; `reed` uses odd harmonics
/// for a hollow, clarinet-like tone; `beep` holds its level for gated notes; `bell` follows
/// the partials of a tuned bell (hum, prime, minor-third tierce, quint, nominal…).
struct Timbre {
    var partials: [Partial]

    /// A timbre from (ratio, gain, t60) triples.
    init(_ partials: [(ratio: Double, gain: Double, t60: Double)]) {
        self.partials = partials.map { Partial(ratio: $0.ratio, gain: $0.gain, t60: $0.t60) }
    }

    /// A free glass or steel bar (modes 1 : 2.756 : 5.404), bright and clear.
    static let glass = Timbre([(1, 1, 0.9), (2.756, 0.22, 0.3), (5.404, 0.06, 0.12)])

    /// A tuned wooden bar (modes near 1 : 4 : 10), round and mellow.
    static let marimba = Timbre([(1, 1, 0.5), (3.93, 0.16, 0.09), (9.2, 0.04, 0.03)])

    /// A small block of wood, all damped modes: a knock rather than a note.
    static let wood = Timbre([(1, 1, 0.06), (2.31, 0.4, 0.035), (3.87, 0.15, 0.02)])

    /// A soft harmonic pluck, like an electric piano tine.
    static let chime = Timbre([(1, 1, 0.8), (2, 0.3, 0.4), (3, 0.1, 0.2), (4, 0.04, 0.12)])

    /// Odd harmonics with falling levels: hollow and firm, for warnings and errors.
    static let reed = Timbre([(1, 1, 0.7), (3, 0.25, 0.35), (5, 0.1, 0.2), (7, 0.05, 0.12)])

    /// A steady, rounded tone for gated beeps (shape it with `Envelope.gate`).
    static let beep = Timbre([(1, 1, .infinity), (2, 0.2, .infinity), (3, 0.12, .infinity), (5, 0.04, .infinity)])

    /// A tuned bell. Relative to the prime: hum an octave below, tierce a minor third above,
    /// quint, nominal an octave above and its upper partials; the prime is doubled 0.3 % sharp,
    /// as in a real bell's split modes, for a slow, warm beat.
    static let bell = Timbre([
        (0.5, 0.55, 3), (1, 1, 2), (1.003, 0.35, 2), (1.183, 0.45, 1.4),
        (1.506, 0.22, 1.1), (2, 0.45, 0.9), (2.514, 0.16, 0.6), (2.662, 0.12, 0.5),
        (3.011, 0.1, 0.4), (4.166, 0.06, 0.25), (5.433, 0.03, 0.15)
    ])
}
