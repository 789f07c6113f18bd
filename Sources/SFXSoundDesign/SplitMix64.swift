/// A small, fast, seedable pseudo-random generator (SplitMix64, as used to seed xoshiro).
///
/// sfx uses it wherever randomness must be repeatable: the noise in synthesised sounds and the
/// dither of the 16-bit encoder, so that the same seed always gives the same bytes.
///
/// ```swift
/// var random = SplitMix64(seed: 42)
/// let x = random.nextUnit()        // a Double in [0, 1)
/// ```
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniformly distributed value in [0, 1) with 53 random bits.
    public mutating func nextUnit() -> Double { Double(next() >> 11) * 0x1p-53 }
}
