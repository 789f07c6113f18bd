/// A musical grid on the engine's clock: beats at `tempo` from `start`, grouped in bars of
/// `beatsPerBar` and divided in `subdivision` parts, for plays that land on the music
/// (`SoundEngine.play(_:quantizedTo:unit:)`) and music started on it (`Player.play(at:)`).
///
/// Grid point k of a unit is `start` + k × (frames per unit), each rounded to the nearest frame
/// from `start` (not from the point before), so points never drift however far the grid runs.
/// The grid runs both ways from `start`.
public struct BeatGrid: Sendable, Hashable {
    public enum Unit: Sendable, Hashable {
        /// One beat (a quarter note at most tempos).
        case beat
        /// `beatsPerBar` beats, from `start`.
        case bar
        /// A beat divided by `subdivision` (2: eighths, 4: sixteenths in 4/4).
        case subdivision
    }

    /// Beats per minute, 1…1000.
    public var tempo: Double
    /// The first beat of the first bar.
    public var start: EngineTime
    public var beatsPerBar: Int
    public var subdivision: Int

    /// The tempos a grid takes.
    public static let tempos: ClosedRange<Double> = 1...1000

    public init(tempo: Double, start: EngineTime, beatsPerBar: Int = 4, subdivision: Int = 4) {
        self.tempo = tempo
        self.start = start
        self.beatsPerBar = beatsPerBar
        self.subdivision = subdivision
    }

    /// Throws when a number is out of range, naming it.
    public func validate() throws(SettingError) {
        try SettingError.check("tempo", Float(tempo), in: Float(Self.tempos.lowerBound)...Float(Self.tempos.upperBound))
        try SettingError.check("beatsPerBar", beatsPerBar, in: 1...64)
        try SettingError.check("subdivision", subdivision, in: 1...64)
    }

    /// The length of one `unit` in frames at `sampleRate` (not rounded).
    public func frames(per unit: Unit, sampleRate: Int) -> Double {
        let beat = 60 / tempo * Double(sampleRate)
        switch unit {
        case .beat: return beat
        case .bar: return beat * Double(beatsPerBar)
        case .subdivision: return beat / Double(subdivision)
        }
    }

    /// Grid point `index` of `unit`.
    public func point(_ index: Int64, of unit: Unit, sampleRate: Int) -> EngineTime {
        start.advanced(by: Int64((Double(index) * frames(per: unit, sampleRate: sampleRate)).rounded()))
    }

    /// The first point of `unit` at or after `time`.
    public func next(_ unit: Unit, atOrAfter time: EngineTime, sampleRate: Int) -> EngineTime {
        let length = frames(per: unit, sampleRate: sampleRate)
        var index = Int64((Double(time - start) / length).rounded(.up))
        while point(index, of: unit, sampleRate: sampleRate) < time { index += 1 }
        while index > Int64.min, point(index - 1, of: unit, sampleRate: sampleRate) >= time { index -= 1 }
        return point(index, of: unit, sampleRate: sampleRate)
    }
}
