/// The sample layout every cue and every mix uses: interleaved 32-bit float frames.
public struct AudioFormat: Sendable, Hashable, CustomStringConvertible {
    /// Frames per second.
    public var sampleRate: Int
    /// Interleaved channels: 1 (mono) or 2 (stereo, left then right).
    public var channels: Int

    public init(sampleRate: Int, channels: Int) {
        precondition(sampleRate > 0, "sample rate must be positive")
        precondition(channels == 1 || channels == 2, "sfx mixes mono or stereo")
        self.sampleRate = sampleRate
        self.channels = channels
    }

    /// 48 kHz stereo: the engine's default.
    public static let standard = AudioFormat(sampleRate: 48_000, channels: 2)

    public var description: String {
        "\(sampleRate) Hz \(channels == 1 ? "mono" : "stereo")"
    }
}

/// A short sound held in memory as immutable PCM at the mix's sample rate: what a SoundID names.
///
/// A cue owns one allocation made at load time; the mixer reads it on the real-time thread
/// through `samples` without retaining the cue (it holds an `Unmanaged<Cue>`), so whoever
/// registered the cue must keep it alive until the mixer reports that no voice holds it.
public final class Cue: @unchecked Sendable {
    /// A number unique among the cues of one process (never reused), used in mixer commands and events.
    public let key: UInt32
    /// A human-readable name: the sound's name, or the file it came from.
    public let name: String
    public let format: AudioFormat
    /// Frames (not samples) in the cue.
    public let frameCount: Int
    /// `frameCount * format.channels` interleaved samples, valid for the cue's whole life.
    public let samples: UnsafeBufferPointer<Float>

    /// Copies `interleaved` (whose count must be a multiple of `format.channels`) into the cue.
    public init(name: String, format: AudioFormat, interleaved: some Collection<Float>) {
        precondition(interleaved.count % format.channels == 0, "sample count is not a whole number of frames")
        let storage = UnsafeMutableBufferPointer<Float>.allocate(capacity: max(interleaved.count, 1))
        _ = storage.initialize(from: interleaved)
        self.key = Cue.nextKey.add(1)
        self.name = name
        self.format = format
        self.frameCount = interleaved.count / format.channels
        self.samples = UnsafeBufferPointer(rebasing: storage[0..<interleaved.count])
    }

    deinit {
        UnsafeMutableRawPointer(mutating: samples.baseAddress)?.deallocate()
    }

    /// Duration in seconds at the cue's sample rate.
    public var duration: Double { Double(frameCount) / Double(format.sampleRate) }

    private static let nextKey = KeyCounter()
}

import Synchronization

final class KeyCounter: Sendable {
    private let value = Atomic<UInt32>(0)
    /// Adds `n` and returns the new value.
    func add(_ n: UInt32) -> UInt32 { value.wrappingAdd(n, ordering: .relaxed).newValue }
}
