/// The memory of one effect: big rings that a rewind never copies, and one small block of state
/// that it does.
///
/// Every ring is a power of two long, at least the longest delay read from it plus
/// `rewindHeadroomFrames` plus one, and is indexed by one frame counter `t` shared by all of
/// them: frame t writes slot t & mask and reads slot (t − d) & mask. Frames t0 ..< t0 + N
/// (N ≤ headroom) write slots that no frame from t0 on reads before they are written again, so
/// restoring the small state taken at t0 and processing those frames again reads exactly what it
/// read the first time.
///
/// The small state is `intCount` Int64 values followed by `floatCount` Float values: the frame
/// counter, the idle detection and the filter memories. Saving it is a memcpy of
/// `stateByteCount` bytes.
struct EffectMemory {
    /// All rings, one allocation, zeroed (and so touched) in `init`.
    let rings: UnsafeMutablePointer<Float>
    let ringFloats: Int
    /// Constants and scratch after the rings (in the same allocation; `reset` leaves them), and
    /// integer constants: what the kernel reads per frame, behind pointers.
    let constants: UnsafeMutablePointer<Float>
    let integers: UnsafeMutablePointer<Int>
    /// The small state.
    let state: UnsafeMutableRawPointer
    let stateByteCount: Int
    let intCount: Int

    /// Slots of the small state's integers.
    static let frameCounter = 0
    static let quietFrames = 1
    static let sounding = 2
    static let headerInts = 3

    init(ringFloats: Int, floatCount: Int, constantFloats: Int = 0, constantInts: Int = 0) {
        self.ringFloats = ringFloats
        rings = .allocate(capacity: max(1, ringFloats + constantFloats))
        rings.initialize(repeating: 0, count: max(1, ringFloats + constantFloats))
        constants = rings + ringFloats
        integers = .allocate(capacity: max(1, constantInts))
        integers.initialize(repeating: 0, count: max(1, constantInts))
        intCount = Self.headerInts + 1   // padded to 32 bytes
        stateByteCount = intCount * MemoryLayout<Int64>.stride + floatCount * MemoryLayout<Float>.stride
        state = .allocate(byteCount: stateByteCount, alignment: 16)
        state.initializeMemory(as: UInt8.self, repeating: 0, count: stateByteCount)
    }

    func deallocate() {
        rings.deallocate()
        integers.deallocate()
        state.deallocate()
    }

    @inline(__always) var ints: UnsafeMutablePointer<Int64> { state.assumingMemoryBound(to: Int64.self) }
    @inline(__always) var floats: UnsafeMutablePointer<Float> {
        (state + intCount * MemoryLayout<Int64>.stride).assumingMemoryBound(to: Float.self)
    }

    /// Silence: rings and state to zero (memset only).
    func reset() {
        if ringFloats > 0 { rings.update(repeating: 0, count: ringFloats) }
        state.initializeMemory(as: UInt8.self, repeating: 0, count: stateByteCount)
    }

    /// The idle rule, once per block: a block with input (`inputPeak` > 0) or whose monitored
    /// signals reached `threshold` starts the quiet count again; otherwise the count grows by the
    /// block's frames, and once it reaches `window` the effect is silent.
    @inline(__always)
    func endBlock(frames: Int, inputPeak: Float, signalPeak: Float, threshold: Float, window: Int) {
        let i = ints
        if inputPeak > 0 || signalPeak >= threshold {
            i[Self.quietFrames] = 0
            i[Self.sounding] = 1
        } else {
            i[Self.quietFrames] &+= Int64(frames)
            if i[Self.quietFrames] >= Int64(window) { i[Self.sounding] = 0 }
        }
    }

    /// The smallest power of two ≥ n (n ≥ 1).
    static func ringSize(_ n: Int) -> Int {
        var size = 1
        while size < n { size <<= 1 }
        return size
    }
}
