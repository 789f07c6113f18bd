import Synchronization

/// A bounded, lock-free, single-producer/single-consumer queue of trivially copyable values: how
/// commands reach the real-time thread and how events leave it.
///
/// One thread may `push` and one (other) thread may `pop`, at the same time, without locks or
/// allocation: the storage is allocated once in `init`, and each side only writes its own index.
/// The producer writes an element and then publishes it by storing its index with release
/// ordering; the consumer loads that index with acquire ordering before reading, so it never sees
/// an element before it is complete (and symmetrically for freeing slots).
///
/// It is *single*-producer: several threads pushing must serialize among themselves (for
/// instance with a `Mutex` around `push`), while the consumer still never locks.
///
/// ```swift
/// let commands = SPSCRing<MixerCommand>(capacity: 1024)
/// _ = commands.push(.setMasterGain(0.5))          // any one producer thread; false when full
/// while let command = commands.pop() { mixer.apply(command) }   // the audio thread
/// ```
///
/// `push`, `pop` and `count` are inlinable, so a ring of a concrete type used from another module
/// (the engine's `SPSCRing<MixerCommand>`) is specialised there: no generic metadata, witness
/// calls or retains on the real-time path.
public final class SPSCRing<Element: BitwiseCopyable>: @unchecked Sendable {
    /// The number of elements the ring holds: the requested capacity rounded up to a power of two.
    public let capacity: Int
    @usableFromInline let mask: Int
    @usableFromInline let storage: UnsafeMutablePointer<Element>
    /// Count of elements ever popped; written by the consumer only.
    @usableFromInline let head = Atomic<Int>(0)
    /// Count of elements ever pushed; written by the producer only.
    @usableFromInline let tail = Atomic<Int>(0)

    /// A ring holding at least `capacity` elements (at least 1, rounded up to a power of two).
    public init(capacity: Int) {
        var size = 1
        while size < capacity { size <<= 1 }
        self.capacity = size
        mask = size - 1
        storage = .allocate(capacity: size)
        // Touch every page now, so that the real-time side never takes a page fault on first use.
        UnsafeMutableRawPointer(storage).initializeMemory(as: UInt8.self, repeating: 0,
                                                          count: size * MemoryLayout<Element>.stride)
    }

    deinit {
        storage.deallocate()
    }

    /// Appends `element`; returns false, leaving the ring unchanged, when it is full.
    /// Call from the producer thread only.
    @inlinable
    public func push(_ element: Element) -> Bool {
        let t = tail.load(ordering: .relaxed)
        guard t - head.load(ordering: .acquiring) < capacity else { return false }
        (storage + (t & mask)).initialize(to: element)
        tail.store(t + 1, ordering: .releasing)
        return true
    }

    /// Removes and returns the oldest element, or nil when the ring is empty.
    /// Call from the consumer thread only.
    @inlinable
    public func pop() -> Element? {
        let h = head.load(ordering: .relaxed)
        guard h != tail.load(ordering: .acquiring) else { return nil }
        let element = storage[h & mask]
        head.store(h + 1, ordering: .releasing)
        return element
    }

    /// Elements waiting: exact when called from either side while the other is idle, a snapshot
    /// otherwise.
    @inlinable
    public var count: Int {
        tail.load(ordering: .acquiring) - head.load(ordering: .acquiring)
    }
}
