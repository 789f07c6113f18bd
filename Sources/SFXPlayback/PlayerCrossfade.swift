import Foundation
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
        try SettingError.check("crossfade", duration, in: .milliseconds(10) ... .seconds(60))
        guard next !== self, next.engine === engine, !next.isPlaying else {
            throw SettingError(setting: "crossfade", value: next === self ? "to itself" : "to \(next.url.lastPathComponent)",
                               allowed: "another player of the same engine, not playing")
        }
        let frames = Int((duration.seconds * Double(engine.library.configuration.format.sampleRate)).rounded())
        // This player lets go of its voice and reader (a later completion is ignored), and the
        // reader goes on feeding the voice until the fade has silenced it.
        let outgoing = state.withLock { state -> (Voice, StreamReader)? in
            guard state.mode == .playing, let voice = state.voice, let reader = state.reader else { return nil }
            state.generation += 1
            state.mode = .stopped
            state.interrupted = false
            state.position = 0
            state.underrunsBefore += reader.ring.underruns
            state.voice = nil
            state.reader = nil
            return (voice, reader)
        }
        guard let (voice, reader) = outgoing else { return try next.play() }
        let position = next.state.withLock { $0.position }
        do {
            try next.startVoice(at: position, paused: false, crossfading: (voice.id, frames))
        } catch {
            voice.stop()
            reader.stop()
            throw error
        }
        Task.detached {
            _ = await voice.outcome
            reader.stop()
        }
    }
}
