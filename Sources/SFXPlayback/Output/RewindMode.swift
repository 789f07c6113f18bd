import SFXDevice

/// Rewind mode's numbers.
///
/// **The buffer and the wake-ups**: the device is opened with periods of 128 frames at 48 kHz
/// (`coarsePeriodSeconds`, for the pointer, below) and a buffer of twice `wakeMarginSeconds`
/// (`coarseRequest`: 16 periods, 42.7 ms, at 48 kHz; a larger buffer asked for is kept), and
/// the device wakes the thread only once half the buffer is free (ALSA's avail_min), not every
/// period: 47 wake-ups a second instead of 375, each writing 8 periods at once. At every wake-up
/// 8 periods (21.3 ms) are still queued, as much as a classic client at 512 × 3 has when it
/// wakes, so a late wake-up is no more likely to run the buffer dry. A command does not wait for
/// any of that: it wakes the thread at once through its pipe, and the play reaches the DAC about
/// `guardSeconds` later, whatever the buffer. What the deep buffer costs is paid per command: a
/// rewind renders again what the buffer held (at most 42.7 ms; tens of microseconds with one
/// voice, about 0.3–0.6 ms with 64, `sfx-bench --burst`), and events leave when their frames can
/// no longer be rewritten, at the wake-up after the DAC passed them (up to about 21 ms after
/// they were heard).
///
/// **The guard** (`guardSeconds`, 1 ms): frames between the DAC and the rewind point are left
/// as written. What must fit in it is the time from reading the device's position (after the
/// wake-up, so a late wake-up does not count) to the rewritten frames being in the buffer: the
/// restore and re-render from the snapshot happen before the device is rewound (from a position
/// read again afterwards), and the frames nearest the DAC are written first, in chunks that
/// double (`firstChunkFrames`), so what the guard covers is the render of the first chunk (16 to
/// 24 frames) and a few ALSA calls, plus a preemption of the SCHED_FIFO thread, which is rare.
/// The virtual card logs any frame written after the DAC passed it (`lost`), and the rewind
/// tests check that none was.
///
/// **The pointer's granularity** (`OutputThread.measurePosition`): the position a device
/// reports can lag its DAC. An HDA card reads its DMA position to the frame, USB moves per URB
/// (about 1 ms), and a card whose pointer moves on period interrupts (SNDRV_PCM_INFO_BATCH, the
/// virtual card's default) lags by up to a whole period after a wake-up that is not a period's,
/// which is every command's. So the engine samples the pointer and the delay at its probe. Where
/// the delay follows the DAC frame by frame (it falls with the clock between samples, as on a
/// card that interpolates its position and on the virtual card), a rewind goes to the guard
/// ahead of the DAC by the delay, whatever the pointer does. Otherwise (a delay computed from the
/// same coarse pointer) it rewinds only to pointer + granularity + guard. A pointer coarser than
/// `coarsePeriodSeconds` (128 frames, 2.7 ms at 48 kHz) would cost that much latency on every
/// play then, so rewind mode opens devices with periods of that size from the start (a play
/// reaches the DAC 1 to 3.7 ms after the wake-up on such a device instead of up to 11.7 ms with
/// 512-frame periods): finding a coarse pointer first and reopening the device then showed a
/// sound server, the virtual card's recordings and a daemon's clients two streams where there is
/// one. Small periods cost nothing by themselves now that the thread wakes every 8 of them.
enum RewindMode {
    static let guardSeconds = 0.001
    static let minimumBufferSeconds = 0.020
    /// Queued audio left at every wake-up, at least (whole periods, rounded up); the buffer
    /// holds twice as much, so the thread writes as much at each wake-up.
    static let wakeMarginSeconds = 0.020
    /// Periods for a pointer that moves per period: 128 frames at 48 kHz (2.7 ms), the smallest
    /// period most cards and USB interfaces accept without trouble and about three guards.
    static let coarsePeriodSeconds = 128.0 / 48_000
    /// Snapshots the history keeps (`RewindHistory`): a buffer of at most `maxPeriods` periods
    /// leaves room for the ones taken after commands.
    static let maxPeriods = 32

    /// The frames written first after a rewind: half the guard, then twice what was written so
    /// far, so each chunk's render fits in the time the frames already written give.
    static func firstChunkFrames(guardFrames: Int) -> Int { max(16, guardFrames / 2) }

    /// The period for a coarse pointer at `sampleRate`.
    static func coarsePeriod(sampleRate: Int) -> Int {
        max(PlaybackRequest.periodSizes.lowerBound, Int((Double(sampleRate) * coarsePeriodSeconds).rounded()))
    }

    /// The request rewind mode opens every device with: periods of `coarsePeriodSeconds`, as
    /// many as hold twice `wakeMarginSeconds` (or the buffer `request(for:)` gives, when larger;
    /// at most `maxPeriods`), and the device waking the thread once all but the margin is free
    /// (at most half the buffer: `PlaybackRequest.wakeFrames`).
    static func coarseRequest(for request: PlaybackRequest) -> PlaybackRequest {
        var small = Self.request(for: request)
        let buffer = small.periodFrames * small.periodCount
        let period = coarsePeriod(sampleRate: request.sampleRate)
        let rate = Double(request.sampleRate)
        let margin = Int((rate * wakeMarginSeconds / Double(period)).rounded(.up))
        small.periodFrames = period
        small.periodCount = min(max(3, (buffer + period - 1) / period, 2 * margin), maxPeriods,
                                PlaybackRequest.periodCounts.upperBound)
        small.wakePeriods = max(1, small.periodCount - margin)
        return small
    }

    /// The request rewind mode opens the device with: `request` with a buffer of at least 20 ms
    /// (periods of at least 512 frames at 48 kHz, at least three of them); a request that
    /// already asks for that much is kept.
    static func request(for request: PlaybackRequest) -> PlaybackRequest {
        var deep = request
        let minimumBuffer = Int((Double(request.sampleRate) * minimumBufferSeconds).rounded(.up))
        guard request.periodFrames * request.periodCount < minimumBuffer else { return request }
        let period = max(request.periodFrames, request.sampleRate * 512 / 48_000)
        deep.periodFrames = min(period, PlaybackRequest.periodSizes.upperBound)
        deep.periodCount = min(max(request.periodCount, 3, (minimumBuffer + deep.periodFrames - 1) / deep.periodFrames),
                               PlaybackRequest.periodCounts.upperBound)
        return deep
    }

    static func guardFrames(sampleRate: Int) -> Int { max(1, Int((Double(sampleRate) * guardSeconds).rounded())) }
}
