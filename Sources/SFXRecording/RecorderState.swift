import SFXPlayback

/// What a `Recorder` is doing, for UI code (`Recorder.states`): one value per change, derived
/// from its events on the recorder's event queue, never on the capture thread.
public enum RecorderState: Sendable, Equatable {
    /// Capturing into the file (`record()`, `resume()`).
    case recording
    /// Paused: metering goes on, nothing goes to the file.
    case paused
    /// Ended with this last event (`finished`, `discarded` or `failed`).
    case ended(RecorderEvent)

    /// The state an event moves to, nil for one that changes none (`overrun`).
    init?(after event: RecorderEvent) {
        switch event {
        case .started, .resumed: self = .recording
        case .paused: self = .paused
        case .finished, .discarded, .failed: self = .ended(event)
        default: return nil
        }
    }
}

extension Recorder {
    /// `currentTime` (seconds recorded, pauses not counted) every `interval` (100 ms unless told)
    /// from `record()` until the recording ends, then its final length: a count-up for UI code.
    public func progress(every interval: Duration = .milliseconds(100)) -> AsyncStream<Double> {
        progressStream(every: interval, final: true, time: { [weak self] in self?.currentTime ?? 0 },
                       running: { [weak self] in self?.isUnderway ?? false })
    }
}
