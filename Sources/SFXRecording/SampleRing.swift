import SFXPlayback
import Synchronization

/// A lock-free single-producer/single-consumer ring of samples: the capture thread writes
/// periods, the recorder's writer thread reads them. Allocated (and its pages touched) once;
/// each side writes only its own index, published with release ordering and read with acquire.
final class SampleRing: @unchecked Sendable {
    let capacity: Int
    private let mask: Int
    private let storage: UnsafeMutablePointer<Float>
    private let head = Atomic<Int>(0)   // samples ever read (consumer)
    private let tail = Atomic<Int>(0)   // samples ever written (producer)

    /// A ring of at least `capacity` samples (rounded up to a power of two).
    init(capacity: Int) {
        var size = 1
        while size < capacity { size <<= 1 }
        self.capacity = size
        mask = size - 1
        storage = .allocate(capacity: size)
        storage.initialize(repeating: 0, count: size)
    }

    deinit { storage.deallocate() }

    /// Writes as many of `count` samples as fit; returns how many did. Producer only; real-time safe.
    func write(_ samples: UnsafePointer<Float>, count: Int) -> Int {
        let t = tail.load(ordering: .relaxed)
        let n = min(count, capacity - (t - head.load(ordering: .acquiring)))
        for i in 0..<n { storage[(t + i) & mask] = samples[i] }
        tail.store(t + n, ordering: .releasing)
        return n
    }

    /// Reads up to `count` samples into `target`; returns how many. Consumer only.
    func read(into target: UnsafeMutablePointer<Float>, count: Int) -> Int {
        let h = head.load(ordering: .relaxed)
        let n = min(count, tail.load(ordering: .acquiring) - h)
        for i in 0..<n { target[i] = storage[(h + i) & mask] }
        head.store(h + n, ordering: .releasing)
        return n
    }
}
