/// PCG32 (O'Neill, "PCG: A Family of Simple Fast Space-Efficient Statistically Good Algorithms
/// for Random Number Generation", 2014): pcg-c-basic's `pcg32_random_r`, XSH RR 64/32 on a
/// 64-bit LCG. Seeded as `pcg32_srandom_r(initstate, initseq)`, so that a seed gives the same
/// sequence as the reference C code (and a game session can be replayed draw for draw).
public struct PCG32: RandomNumberGenerator, Sendable, Hashable {
    private var state: UInt64
    private let increment: UInt64

    /// `pcg32_srandom_r(&rng, seed, sequence)`.
    public init(seed: UInt64, sequence: UInt64 = 54) {
        state = 0
        increment = (sequence << 1) | 1
        _ = next32()
        state &+= seed
        _ = next32()
    }

    /// The next 32 bits (`pcg32_random_r`).
    public mutating func next32() -> UInt32 {
        let old = state
        state = old &* 6_364_136_223_846_793_005 &+ increment
        let xorshifted = UInt32(truncatingIfNeeded: ((old >> 18) ^ old) >> 27)
        let rot = UInt32(truncatingIfNeeded: old >> 59)
        return (xorshifted >> rot) | (xorshifted << ((~rot &+ 1) & 31))
    }

    /// Two draws, high word first (RandomNumberGenerator's requirement).
    public mutating func next() -> UInt64 {
        UInt64(next32()) << 32 | UInt64(next32())
    }

    /// A number in 0..<bound without bias (`pcg32_boundedrand_r`: draws below 2³² mod bound are
    /// thrown away). `bound` must be at least 1.
    public mutating func bounded(_ bound: UInt32) -> UInt32 {
        let threshold = (~bound &+ 1) % bound
        while true {
            let r = next32()
            if r >= threshold { return r % bound }
        }
    }

    /// A number in 0..<1 from one draw: its top 24 bits over 2²⁴ (exact in a Float).
    public mutating func unit() -> Float {
        Float(next32() >> 8) / 16_777_216
    }
}
