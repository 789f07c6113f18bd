import FoundationEssentials
import Glibc
import SFXCore
import SFXMedia

/// Mixes sounds of a `SoundLibrary` offline, with the same mixer the real-time engine runs, into
/// a buffer or a WAV file: what the device would have been given. A debugging aid (`sfx render`)
/// and the reference the real-time output is tested against.
public enum OfflineMix {
    /// One sound started at a time (seconds from the start of the mix).
    public struct Play: Sendable {
        public var sound: SoundID
        public var at: Double
        public var volume: Float
        public var pan: Float
        public var loops: Int

        public init(sound: SoundID, at: Double = 0, volume: Float = 1, pan: Float = 0, loops: Int = 0) {
            self.sound = sound
            self.at = at
            self.volume = volume
            self.pan = pan
            self.loops = loops
        }
    }

    /// The longest mix rendered: sounds that loop forever are cut there.
    public static let maximumSeconds = 600

    /// The interleaved frames of the mix, in the library's format, until every sound has ended
    /// (at most `maximumSeconds`).
    public static func render(_ plays: [Play], library: SoundLibrary) throws(SoundError) -> [Float] {
        let format = library.configuration.format
        var cues: [Cue] = []  // kept alive while the mixer reads them
        var commands: [ScheduledCommand] = []
        for (index, play) in plays.enumerated() {
            guard let cue = library.cue(for: play.sound) else { throw .unknownID(play.sound) }
            guard play.at.isFinite, (0...Double(maximumSeconds)).contains(play.at) else {
                throw .startOutsideMix(at: play.at, maximumSeconds: maximumSeconds)
            }
            cues.append(cue)
            let request = PlayRequest(voice: VoiceID(UInt64(index + 1)), cue: cue,
                                      gain: play.volume, pan: play.pan, loops: play.loops)
            commands.append(ScheduledCommand(frame: Int((play.at * Double(format.sampleRate)).rounded()), .play(request)))
        }
        return withExtendedLifetime(cues) {
            OfflineRenderer.render(commands, format: format, length: .untilFinished(maximumFrames: format.sampleRate * maximumSeconds)).samples
        }
    }

    /// Renders into a 32-bit float WAV file and returns the number of frames written.
    @discardableResult
    public static func render(_ plays: [Play], library: SoundLibrary, to url: URL) throws(SoundError) -> Int {
        let samples = try render(plays, library: library)
        let format = library.configuration.format
        try SoundError.unwrap(Result {
            try AudioFileWriter.write(samples, sampleRate: format.sampleRate, channels: format.channels, to: url, as: .wavFloat32)
        })
        return samples.count / format.channels
    }
}
