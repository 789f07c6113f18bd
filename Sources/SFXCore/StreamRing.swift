import Synchronization

/// A lock-free ring of interleaved float frames between one producer (a reader thread that
/// decodes a long file or a download ahead of time) and one streaming voice of the mixer.
///
/// Frames are numbered from 0 for the whole life of the ring; frame `n` lives at
/// `n mod capacity`. Three cursors, all in frames:
///
/// - `written` — frames the producer has published (release store; the mixer loads it with
///   acquire before reading them).
/// - the voice's read cursor — NOT in the ring: it is a plain integer in the mixer's `VoiceSlot`,
///   so that restoring an earlier copy of the mixer's state (rewind mode) re-reads exactly the
///   same frames.
/// - `released` — the frame up to which the producer may overwrite (it writes frame `n` only when
///   `n < released + capacity`). Only the mixer advances it, in ONE place:
///   `Mixer.releaseStreams()`, which publishes every streaming voice's read cursor. The engine's
///   output thread calls it right after each render (by default the mixer does it itself at the
///   end of `render`, see `Mixer.Configuration.releasesStreamsAfterRender`); rewind mode calls it
///   later, once the frames are past the DAC, so frames it may render again are never
///   overwritten.
///
/// The producer marks the end of the audio with `finish()`: `endFrame` is then `written`, and a
/// voice that reaches it ends with `.finished`. When the voice wants a frame not yet written it
/// plays silence for it, counts an underrun (`underrunFrames`, and `underruns` once per render
/// block that ran short) and goes on: the real-time thread never waits for the producer.
///
/// All memory is allocated and touched in `init`; `write` and the mixer's reads never allocate.
public final class StreamRing: @unchecked Sendable {
    /// Frames the ring holds (a power of two).
    public let capacity: Int
    public let channels: Int
    let mask: Int
    let storage: UnsafeMutablePointer<Float>
    /// Frames ever published by the producer.
    let written = Atomic<Int>(0)
    /// Frames the consumer no longer needs (see the type's documentation).
    let released = Atomic<Int>(0)
    /// The frame count of the whole stream once the producer has finished; `Int.max` before.
    let end = Atomic<Int>(Int.max)
    /// Render blocks in which the voice lacked frames, and the frames it played as silence.
    let underrunCount = Atomic<Int>(0)
    let underrunFrameCount = Atomic<Int>(0)
    /// The level of what was written, per `levelChunk` frames and channel (peak, then sum of
    /// squares), `levelSlots` chunks kept (StreamRingLevels.swift). Written by the producer as it
    /// writes frames, read for a player's meters at the frame being played: never by the mixer.
    let levels: UnsafeMutablePointer<Float>
    let levelSlots: Int

    /// A ring of at least `capacity` frames (rounded up to a power of two, at least 2).
    public init(capacity: Int, channels: Int) {
        precondition(channels == 1 || channels == 2, "streams are mono or stereo")
        var size = 2
        while size < capacity { size <<= 1 }
        self.capacity = size
        self.channels = channels
        mask = size - 1
        storage = .allocate(capacity: size * channels)
        storage.initialize(repeating: 0, count: size * channels)
        // Slots for a whole ring of chunks and the meters' window besides, so the producer, at
        // most `capacity` frames ahead of the released frame, never overwrites a chunk being read.
        var slots = 2
        while slots < size / Self.levelChunk + Self.meterWindowChunks + 2 { slots <<= 1 }
        levelSlots = slots
        levels = .allocate(capacity: slots * channels * 2)
        levels.initialize(repeating: 0, count: slots * channels * 2)
    }

    deinit {
        storage.deallocate()
        levels.deallocate()
    }

    // MARK: Producer side

    /// Frames the producer may write now.
    public var writableFrames: Int {
        released.load(ordering: .acquiring) + capacity - written.load(ordering: .relaxed)
    }

    /// Copies up to `frames` interleaved frames in and publishes them; returns how many fit.
    /// Producer thread only.
    @discardableResult
    public func write(_ source: UnsafePointer<Float>, frames: Int) -> Int {
        let count = min(frames, writableFrames)
        guard count > 0 else { return 0 }
        let start = written.load(ordering: .relaxed)
        var done = 0
        while done < count {
            let index = (start + done) & mask
            let run = min(count - done, capacity - index)
            (storage + index * channels).update(from: source + done * channels, count: run * channels)
            done += run
        }
        measure(source, frames: count, from: start)
        written.store(start + count, ordering: .releasing)
        return count
    }

    /// Marks the end of the stream at the frames written so far. Producer thread only.
    public func finish() { end.store(written.load(ordering: .relaxed), ordering: .releasing) }

    // MARK: Anyone

    /// Frames published so far.
    public var writtenFrames: Int { written.load(ordering: .acquiring) }
    /// Frames the voice has played and given back (its read cursor after the last release).
    public var releasedFrames: Int { released.load(ordering: .acquiring) }
    /// The stream's length once the producer has finished, else nil.
    public var endFrame: Int? {
        let e = end.load(ordering: .acquiring)
        return e == Int.max ? nil : e
    }
    /// Render blocks in which the voice ran short of frames (the producer fell behind).
    public var underruns: Int { underrunCount.load(ordering: .relaxed) }
    /// Frames played as silence because they were not written in time.
    public var underrunFrames: Int { underrunFrameCount.load(ordering: .relaxed) }
    /// Frames written and not yet played.
    public var bufferedFrames: Int { max(0, writtenFrames - releasedFrames) }
}
