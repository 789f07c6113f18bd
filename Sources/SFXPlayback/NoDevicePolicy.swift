import SFXDevice

/// What an engine does while it has no output device: at start, when `output` cannot be opened
/// (no such card yet, a card held by another program, `default` leading to a sound server that
/// is not running yet), and after the device is lost, until it is back
/// (`SoundEngine.Configuration.whileNoDevice`).
public enum NoDevicePolicy: Sendable, Hashable {
    /// Mix by the clock, as the engine does after a loss: every play runs its course and
    /// completes (`.finished`) unheard, so a game runs the same with or without sound.
    case mix
    /// Hold plays, and every command sent after the first one held, in order, until the device
    /// opens; then they start, as if sent that moment. Beyond `limit` plays waiting, a play is
    /// refused (`.rejected(.noDevice)`). For a program whose sounds matter more late than never
    /// (a kiosk's greeting at boot). `limit`: 1 up to half `commandCapacity`.
    case queue(limit: Int)
    /// `SoundEngine.init` throws the device's error, as a program that cannot do without sound wants.
    case fail
}

extension PlaybackParameters {
    /// What an engine that opened without its device mixes at until it opens: the rate and
    /// channels asked for, and room for a buffer up to four times the one asked for (at least
    /// 8,192 frames), so that the device the retries find fits the mixer made now.
    static func awaited(_ request: PlaybackRequest) -> PlaybackParameters {
        let buffer = request.periodFrames * request.periodCount
        return PlaybackParameters(device: request.device, format: .float32, sampleRate: request.sampleRate,
                                  channels: request.channels, periodFrames: request.periodFrames,
                                  bufferFrames: max(8192, 4 * buffer), startThreshold: request.periodFrames)
    }
}
