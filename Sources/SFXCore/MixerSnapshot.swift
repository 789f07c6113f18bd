/// A copy of everything a mixer changes as it runs, taken at one frame, so that it can render
/// again from there: how rewind mode re-renders what it already wrote with a new voice in it.
///
/// The copy is a memory copy of the mixer's preallocated arrays — the voices and their filters
/// (of occupied slots), occupancy, the voice index, groups and their filters, the cues being
/// released, the plays waiting for their frame (`MixerSchedule.swift`), and the state (frame
/// time, counters, master gain, the limiter, the listener) — not a
/// field-by-field copy, so whatever plain data is added to those arrays is in every snapshot
/// without a change here. The event buffer is not: events are drained after every
/// render, and the mixer being restored keeps its own (the engine drains before each save and
/// restore). Restoring a snapshot and rendering the same commands gives the same samples, bit
/// for bit, as the first time.
///
/// A snapshot is itself a `Mixer` of the same shape (`mixer`): methods that read the state at the
/// snapshot's frame (which frames of a stream can no longer be read again) run on it.
///
/// `save` and `restore` copy memory only: no allocation, lock or reference count, so they run on
/// the real-time thread. Everything is allocated in `init`.
public final class MixerSnapshot: @unchecked Sendable {
    /// The mixer holding the copy: same voices, index and groups as the original, one-frame buses.
    public let mixer: Mixer

    /// A snapshot with room for the state of `original` (or any mixer of the same configuration).
    public init(shapedLike original: Mixer) {
        var configuration = original.configuration
        configuration.maxFramesPerRender = 1
        configuration.eventCapacity = 1
        mixer = Mixer(format: original.format, configuration: configuration, hrtf: original.hrtf, histories: false)
    }

    /// The frame time at which the copy was taken.
    public var frameTime: Int { mixer.frameTime }

    /// Copies `original`'s state into the snapshot.
    @inline(__always)
    public func save(_ original: Mixer) {
        mixer.copyState(from: original)
        original.saveEffects(into: mixer)
    }

    /// Puts the copied state back into `original`: it renders on from `frameTime`.
    @inline(__always)
    public func restore(into original: Mixer) {
        original.copyState(from: mixer)
        original.restoreEffects(from: mixer)
    }
}

extension Mixer {
    /// Copies the state arrays of `source` over this mixer's, keeping this mixer's event buffer
    /// and its count (the only state not copied). Both must have the same number of slots.
    func copyState(from source: Mixer) {
        precondition(slotCount == source.slotCount && indexMask == source.indexMask,
                     "a snapshot must be taken of a mixer with the same voices")
        let events = state.pointee.eventCount
        // Voices and their filters of occupied slots only: a free slot is written whole when a
        // voice starts in it, and nothing reads it before.
        for word in 0..<occupiedWords {
            var bits = source.occupied[word]
            while bits != 0 {
                let slot = word * 64 + bits.trailingZeroBitCount
                bits &= bits - 1
                guard slot < slotCount else { break }
                voices[slot] = source.voices[slot]
                filters[slot] = source.filters[slot]
                hrtfVoices[slot] = source.hrtfVoices[slot]
                sends[slot] = source.sends[slot]
            }
        }
        Self.copy(occupied, from: source.occupied, count: occupiedWords)
        Self.copy(groupFilters, from: source.groupFilters, count: SoundGroup.count)
        Self.copy(effectBuses, from: source.effectBuses, count: max(configuration.effectBuses, 1))
        Self.copy(index, from: source.index, count: indexMask + 1)
        Self.copy(groups, from: source.groups, count: SoundGroup.count)
        Self.copy(releasingCues, from: source.releasingCues, count: max(slotCount, 1))
        Self.copy(state, from: source.state, count: 1)
        // Plays scheduled ahead are state too: a rewind before their frame starts them again.
        Self.copy(schedule, from: source.schedule, count: source.state.pointee.scheduledCount)
        state.pointee.eventCount = events
    }

    /// A byte copy: every array holds plain data (no references), so memcpy is a faithful copy.
    @inline(__always)
    private static func copy<T>(_ destination: UnsafeMutablePointer<T>, from source: UnsafeMutablePointer<T>, count: Int) {
        UnsafeMutableRawPointer(destination).copyMemory(from: UnsafeRawPointer(source),
                                                        byteCount: count * MemoryLayout<T>.stride)
    }
}
