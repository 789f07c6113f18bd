/// `currentTime` as an AsyncSequence for UI code (a progress bar, a recording's count-up):
/// `Player.progress(every:)` and `Recorder.progress(every:)`.
///
/// It yields a reading at once, then one every `interval` while `running()` holds; when it stops
/// holding, one last reading if `final` (a recorder's length), then it finishes. Readings come from a task of the
/// caller's executor, never from the real-time thread; a consumer that stops iterating stops it.
package func progressStream(every interval: Duration, final: Bool, time: @escaping @Sendable () -> Double,
                            running: @escaping @Sendable () -> Bool) -> AsyncStream<Double> {
    let interval = max(interval, .milliseconds(1))
    return AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
        let task = Task {
            while !Task.isCancelled {
                // A reading counts only if the player or recorder ran before and after it: an
                // end between the two may have reset the time.
                let before = running()
                let reading = time()
                let going = before && running()
                if going { continuation.yield(reading) } else if final { continuation.yield(time()) }
                guard going else { break }
                try? await Task.sleep(for: interval)
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
    }
}

extension Player {
    /// `currentTime` every `interval` (100 ms unless told) while the player plays or is paused;
    /// it finishes at the stop or the end (where `currentTime` goes back to 0, as
    /// AVAudioPlayer's, and is not sent). Ask for it after `play()`.
    public func progress(every interval: Duration = .milliseconds(100)) -> AsyncStream<Double> {
        progressStream(every: interval, final: false, time: { [weak self] in self?.currentTime ?? 0 },
                       running: { [weak self] in self.map { $0.state.withLock { $0.mode != .stopped } } ?? false })
    }
}
