/// A mixer command and the frame at which it takes effect.
public struct ScheduledCommand: Sendable {
    /// Frames from the start of the render.
    public var frame: Int
    public var command: MixerCommand

    public init(frame: Int, _ command: MixerCommand) {
        self.frame = frame
        self.command = command
    }
}

/// Renders a script of timed commands into memory with a fresh `Mixer`: what `sfx render`
/// writes to a file, and what the tests compare with closed-form expectations and with the
/// real-time path.
///
/// Each command is applied exactly at its frame: rendering is split there, which — since the
/// mixer's output does not depend on how rendering is split — gives the very samples a real-time
/// thread produces when it applies the same commands before the same frames.
///
/// ```swift
/// let result = OfflineRenderer.render(
///     [ScheduledCommand(frame: 0, .play(PlayRequest(voice: VoiceID(1), cue: bell)))],
///     format: .standard, length: .untilFinished(maximumFrames: 10 * 48_000))
/// result.samples      // interleaved, result.frameCount frames
/// ```
public enum OfflineRenderer {
    /// How long to render.
    public enum Length: Sendable {
        /// Exactly this many frames; commands scheduled at or after the end are not applied.
        case frames(Int)
        /// Until every command has been applied and every voice has ended, but no longer than
        /// `maximumFrames` (loops that never end are cut there; commands scheduled at or after
        /// it are not applied).
        case untilFinished(maximumFrames: Int)
    }

    /// The rendered audio and what the mixer reported while rendering it.
    public struct Output: Sendable {
        public var format: AudioFormat
        /// Interleaved samples, `frameCount × format.channels` of them.
        public var samples: [Float]
        public var frameCount: Int
        /// Every event, with the frame at which it happened.
        public var events: [(frame: Int, event: MixerEvent)]
        /// The mixer's counters at the end.
        public var stolenCount: Int
        public var rejectedCount: Int
    }

    /// Renders `commands` (in any order; commands at the same frame keep their order).
    public static func render(
        _ commands: [ScheduledCommand], format: AudioFormat,
        configuration: Mixer.Configuration? = nil, hrtf: HRTFTable? = nil, length: Length
    ) -> Output {
        let mixer = Mixer(format: format, configuration: configuration ?? Mixer.Configuration(sampleRate: format.sampleRate), hrtf: hrtf)
        let limit: Int
        switch length {
        case .frames(let n): limit = max(0, n)
        case .untilFinished(let maximum): limit = max(0, maximum)
        }
        let schedule = commands.enumerated()
            .sorted { ($0.element.frame, $0.offset) < ($1.element.frame, $1.offset) }
            .map(\.element)
            .filter { $0.frame < limit }

        var samples: [Float] = []
        var events: [(frame: Int, event: MixerEvent)] = []
        var rendered = 0
        func render(until end: Int) {
            guard end > rendered else { return }
            let start = samples.count
            samples.append(contentsOf: repeatElement(0, count: (end - rendered) * format.channels))
            samples.withUnsafeMutableBufferPointer {
                mixer.render(into: $0.baseAddress! + start, frameCount: end - rendered)
            }
            rendered = end
            mixer.drainEvents { event, frame in events.append((frame, event)) }
        }

        for scheduled in schedule {
            render(until: scheduled.frame)
            mixer.apply(scheduled.command)
            mixer.drainEvents { event, frame in events.append((frame, event)) }
        }
        if case .frames = length {
            render(until: limit)
        } else {
            while mixer.activeVoiceCount > 0 && rendered < limit {
                render(until: min(limit, rendered + mixer.configuration.maxFramesPerRender))
            }
            let end = max(schedule.last?.frame ?? 0, events.map(\.frame).max() ?? 0)
            if mixer.activeVoiceCount == 0 && end < rendered {
                samples.removeLast((rendered - end) * format.channels)
                rendered = end
            }
        }
        return Output(
            format: format, samples: samples, frameCount: rendered, events: events,
            stolenCount: mixer.stolenCount, rejectedCount: mixer.rejectedCount)
    }
}
