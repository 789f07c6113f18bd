import FoundationEssentials
import Glibc
import SFXCore
import SFXMedia

extension Player {
    /// Hands the music over to `next`: over `duration` (0.01…60 s) this player fades out as
    /// `next` fades in from where it stands (its start, or a `seek`), equal-power: the gains are
    /// cos and sin of one angle frame by frame, so two unrelated sounds keep a constant loudness
    /// through the fade. Both fades start on the same mixer frame (one command), and this player
    /// stops at the end of it (as after `stop()`: no `didFinish`; `play()` starts it again from
    /// the start). Not playing, this simply plays `next`. Throws when `next` cannot be opened,
    /// or a `SettingError` for a duration out of range or a `next` of another engine or playing.
    ///
    /// ```swift
    /// try battle.crossfade(to: explore, duration: .seconds(2))
    /// ```
    public func crossfade(to next: Player, duration: Duration) throws {
        _ = try handOver(to: next, duration: duration, atEnd: false)
    }

    /// Hands the music over to `next` at this player's end: the mixer begins the fade (as
    /// `crossfade(to:duration:)`'s, equal-power) on the frame that makes it end on the last frame
    /// this player will play (its file's end after its loops), following its position frame by
    /// frame through its rate, pauses and underruns; `next` waits in the mixer until then. Call
    /// it any time before: at least the fade's length (and a little) before the end for the whole
    /// fade; later, the fade is what is left. This player lets go of its voice at once (it is no
    /// longer `isPlaying`; what it plays until the fade ends belongs to the handover). Not
    /// playing, this simply plays `next`. A `Playlist` with a `crossfade` hands over this way.
    ///
    /// ```swift
    /// try intro.crossfadeAtEnd(to: level, duration: .seconds(3))
    /// ```
    public func crossfadeAtEnd(to next: Player, duration: Duration) throws {
        _ = try handOver(to: next, duration: duration, atEnd: true)
    }

    /// Both crossfades; returns the voice let go of (nil when this player was not playing),
    /// which plays on until the fade ends.
    func handOver(to next: Player, duration: Duration, atEnd: Bool) throws -> Voice? {
        try SettingError.check("crossfade", duration, in: .milliseconds(10) ... .seconds(60))
        guard next !== self, next.engine === engine, !next.isPlaying else {
            throw SettingError(setting: "crossfade", value: next === self ? "to itself" : "to \(next.url.lastPathComponent)",
                               allowed: "another player of the same engine, not playing")
        }
        let frames = Int((duration.seconds * Double(engine.library.configuration.format.sampleRate)).rounded())
        // This player lets go of its voice and reader (a later completion is ignored), and the
        // reader goes on feeding the voice until the fade has silenced it.
        let outgoing = state.withLock { state -> (Voice, StreamReader, Int)? in
            guard state.mode == .playing, let voice = state.voice, let reader = state.reader else { return nil }
            state.generation += 1
            state.mode = .stopped
            state.interrupted = false
            state.position = 0
            state.underrunsBefore += reader.ring.underruns
            state.voice = nil
            state.reader = nil
            return (voice, reader, Self.expectedRingEnd(reader, loopRegion: state.loopRegion))
        }
        guard let (voice, reader, expectedEnd) = outgoing else {
            try next.play()
            return nil
        }
        let position = next.state.withLock { $0.position }
        do {
            try next.startVoice(at: position, paused: false, crossfading: (voice.id, frames), atEnd: atEnd ? expectedEnd : nil)
        } catch {
            voice.stop()
            reader.stop()
            throw error
        }
        Task.detached {
            _ = await voice.outcome
            reader.stop()
        }
        return voice
    }

    /// The ring frames `reader` will write in all, from the file's length, when that is known
    /// before the reader gets there: one pass (no loops left, no region) of a file whose header
    /// gives its length, through the resampler's exact output count (a reader handed a next file
    /// would go on past it: a playlist with a crossfade hands none). Else Int.max: the mixer
    /// waits for the reader's end, which once known always wins.
    static func expectedRingEnd(_ reader: StreamReader, loopRegion: Range<Int64>?) -> Int {
        guard let length = reader.sourceFrames, reader.loops.load(ordering: .relaxed) == 0, loopRegion == nil,
              length >= reader.startFrame else { return Int.max }
        let frames = Double(length - reader.startFrame) * Double(reader.format.sampleRate) / Double(reader.sourceRate)
        return Int(frames.rounded())
    }
}
