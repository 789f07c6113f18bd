import CSoxr
import FoundationEssentials
import SFXSystem
import Dispatch
import Glibc
import Synchronization
import SFXCore

/// Decodes a sound of any length ahead of playback into a `StreamRing`, on a thread of its own:
/// the producer side of a streaming voice (SFX's `Player`).
///
/// ```swift
/// let reader = try StreamReader(file: RawFilePath("long.flac"), format: .standard, startFrame: 0, loops: 0)
/// reader.start()                       // decodes until the ring is full, then keeps it full
/// mixer.apply(.playStream(StreamRequest(voice: id, stream: reader.ring)))
/// ```
///
/// Each block of 4096 source frames is decoded (libsndfile, or FFmpeg for what libsndfile cannot
/// read), downmixed as cues are (`ChannelMatrix`) and resampled to the mixer's rate by libsoxr at
/// very high quality, as one continuous stream: loops seek the source back to its start without
/// flushing the resampler, so the loop point is gapless, and at the very end the filter is
/// flushed and the stream cut to exactly round(n · out / in) frames, as a whole-file decode is.
/// Memory is the ring plus a few blocks, whatever the length. The thread never blocks the
/// mixer: when the ring is full it sleeps a few milliseconds and looks again; when it falls
/// behind, the voice plays silence and the ring counts underruns.
public final class StreamReader: @unchecked Sendable {
    public let ring: StreamRing
    /// The source's own rate and channels.
    public let sourceRate: Int
    public let sourceChannels: Int
    /// Source frames the header gives (nil when the length is unknown).
    public let sourceFrames: Int64?
    /// The output format (the mixer's).
    public let format: AudioFormat
    /// The source frame that ring frame 0 plays.
    public let startFrame: Int64
    /// Extra repeats after the first play (−1: forever). Read at each end of the source, so a
    /// change applies to the next loop point.
    public let loops: Atomic<Int>
    /// A pause after each block decoded (testing a reader that falls behind: a slow disk or network).
    public let delayPerBlock: Atomic<Int> = Atomic(0)
    /// The loop region in source frames (`setLoopRegion`): a loop goes back to `loopStart`, and
    /// while loops are left the play goes back there on reaching `loopEnd` (`Int64.max`: the
    /// source's end) rather than playing on. Read at each block, so a change applies at once.
    public let loopStart = Atomic<Int64>(0)
    public let loopEnd = Atomic<Int64>(Int64.max)
    /// What plays after this source once it has ended (its loops done), asked for on the reader
    /// thread: gapless, the next file's first frame right after this one's last at the mixer's
    /// rate (each file resampled on its own). Nil, or a nil answer, ends the stream. Set before
    /// `start()`.
    public var next: (@Sendable () -> RawFilePath?)?
    /// Ring frames at which each following source began (one per `next` answer), in order.
    public var sourceStarts: [Int] { starts.withLock { $0 } }

    /// Where the stream's ring frame `ringFrame` is in its source: the source frame and the
    /// source's rate, through every jump the reader made before it (a loop back to the start or
    /// to the loop region's, the next source of a playlist). Exact at equal rates; through a
    /// resampler, to the nearest source frame. Any thread.
    public func sourcePosition(atRingFrame ringFrame: Int) -> (frame: Int64, rate: Int) {
        seams.withLock { seams in
            // The last seam at or before the frame (they are in ring order).
            var seam = seams[0]
            for candidate in seams.reversed() where candidate.ring <= ringFrame {
                seam = candidate
                break
            }
            let into = Double(max(0, ringFrame - seam.ring)) * Double(seam.rate) / Double(format.sampleRate)
            return (seam.source + Int64(into.rounded()), seam.rate)
        }
    }

    /// A jump in the stream: ring frame `ring` plays source frame `source` of a source at `rate`.
    private struct Seam { var ring: Int; var source: Int64; var rate: Int }
    /// The seams ahead of what the voice has played, and the last one at or before it (bounded:
    /// the oldest go when a ring's worth of tiny loop regions would exceed `maximumSeams`).
    private let seams: Mutex<[Seam]>
    static let maximumSeams = 4096

    private func addSeam(_ seam: Seam) {
        let played = ring.releasedFrames
        seams.withLock { seams in
            while seams.count > 1, seams[1].ring <= played { seams.removeFirst() }
            if seams.count >= Self.maximumSeams { seams.removeFirst() }
            seams.append(seam)
        }
    }

    private var source: any AudioSource
    private var matrix: ChannelMatrix
    private var resampler: BlockResampler
    private let starts = Mutex<[Int]>([])
    private let stopRequested = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)
    private let failure = Mutex<MediaError?>(nil)
    private let doneFlag = Atomic<Bool>(false)

    /// Opens `file` (libsndfile, else FFmpeg) and seeks to `startFrame`; nothing is decoded until
    /// `start()`. `ringFrames` is the read-ahead, in output frames (2 s at 48 kHz by default).
    public convenience init(file: RawFilePath, format: AudioFormat, startFrame: Int64 = 0, loops: Int = 0,
                            ringFrames: Int = 131_072) throws {
        try self.init(source: AudioSources.open(file), format: format, startFrame: startFrame, loops: loops, ringFrames: ringFrames)
    }

    /// A reader over bytes that FFmpeg demuxes (a download in progress); `name` names it in errors.
    /// Decoding stops with an error past `maximumDuration` seconds of the source (a stream
    /// without end; `DownloadLimits`).
    public convenience init(bytes: any ByteSource, name: String, format: AudioFormat, startFrame: Int64 = 0, loops: Int = 0,
                            ringFrames: Int = 131_072, maximumDuration: Double? = nil) throws {
        try self.init(source: FFmpegSource(bytes: bytes, name: name), format: format, startFrame: startFrame, loops: loops,
                      ringFrames: ringFrames)
        maximumDuration.map { self.maximumDuration = $0 }
    }

    /// The longest the source may play, in seconds from its start (nil: no cap); set before `start()`.
    public private(set) var maximumDuration: Double?

    init(source: any AudioSource, format: AudioFormat, startFrame: Int64, loops: Int, ringFrames: Int) throws {
        self.source = source
        self.format = format
        sourceRate = source.sampleRate
        sourceChannels = source.channels
        sourceFrames = source.frames
        self.startFrame = max(0, startFrame)
        self.loops = Atomic(loops)
        matrix = ChannelMatrix(sourceChannels: source.channels, map: source.channelMap, targetChannels: format.channels)
        resampler = try BlockResampler(channels: format.channels, from: source.sampleRate, to: format.sampleRate,
                                       blockFrames: StreamReader.blockFrames)
        // Room for at least four blocks' output, so the reader always has somewhere to put one.
        ring = StreamRing(capacity: max(ringFrames, 4 * resampler.maximumOutput), channels: format.channels)
        seams = Mutex([Seam(ring: 0, source: self.startFrame, rate: source.sampleRate)])
        if self.startFrame > 0 { try source.seek(toFrame: self.startFrame) }
    }

    deinit { stop() }

    static let blockFrames = 4096

    /// The sound's duration in seconds, when the header gives its length.
    public var duration: Double? { sourceFrames.map { Double($0) / Double(sourceRate) } }

    /// Loops between `region`'s frames (nil: the whole source). An intro before it plays once,
    /// the region 1 + `loops` times, then what follows it up to the end.
    public func setLoopRegion(_ region: Range<Int64>?) {
        loopStart.store(region?.lowerBound ?? 0, ordering: .relaxed)
        loopEnd.store(region?.upperBound ?? Int64.max, ordering: .relaxed)
    }

    /// Starts the decoding thread (once).
    public func start() {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        Threads.start(name: "sfx-reader") { [self] in
            run()
            done.signal()
        }
    }

    /// Stops the thread and waits for it.
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        if started.exchange(false, ordering: .acquiring) { done.wait() }
    }

    /// Why decoding stopped early (the stream then ends where it stopped), or nil.
    public var error: MediaError? { failure.withLock { $0 } }

    /// True once the whole stream is in the ring (or decoding failed).
    public var isFinished: Bool { doneFlag.load(ordering: .acquiring) }

    private func run() {
        var inChannels = source.channels
        var block = [Float](repeating: 0, count: StreamReader.blockFrames * inChannels)
        var mixed = [Float](repeating: 0, count: StreamReader.blockFrames * format.channels)
        var out = [Float](repeating: 0, count: resampler.maximumOutput * format.channels)
        /// The source frame the next read gives, and the one the last seek went to.
        var position = startFrame
        var passStart = startFrame
        /// The source frames fed to this source's resampler, and the ring frame where it began.
        var fed = 0
        var sourceBoundary = 0
        defer {
            ring.finish()
            doneFlag.store(true, ordering: .releasing)
        }
        func put(_ frames: Int) -> Bool {
            var written = 0
            while written < frames {
                if stopRequested.load(ordering: .acquiring) { return false }
                let n = out.withUnsafeBufferPointer { ring.write($0.baseAddress! + written * format.channels, frames: frames - written) }
                written += n
                if n == 0 { usleep(2_000) }
            }
            return true
        }
        func flush() throws -> Bool {
            while true {
                let made = try out.withUnsafeMutableBufferPointer { try resampler.finish(into: $0.baseAddress!, capacity: resampler.maximumOutput) }
                guard made > 0 else { return true }
                guard put(made) else { return false }
            }
        }
        do {
            while !stopRequested.load(ordering: .acquiring) {
                if ring.writableFrames < resampler.maximumOutput {
                    usleep(2_000)
                    continue
                }
                // With loops left, a read stops at the loop region's end.
                let left = loops.load(ordering: .relaxed)
                let regionEnd = loopEnd.load(ordering: .relaxed)
                var wanted = StreamReader.blockFrames
                let atRegionEnd = left != 0 && regionEnd != Int64.max && position >= regionEnd && passStart < regionEnd
                if left != 0, regionEnd != Int64.max, position < regionEnd { wanted = Int(min(Int64(wanted), regionEnd - position)) }
                let got = atRegionEnd ? 0 : block.withUnsafeMutableBufferPointer { source.read(into: $0.baseAddress!, frames: wanted) }
                if got == 0 {
                    if !atRegionEnd { try source.finishReading(framesRead: Int(position)) }
                    let back = loopStart.load(ordering: .relaxed)
                    let target = back < position ? back : 0
                    // A pass that read nothing (a region past the end) does not loop again.
                    if left != 0, position > passStart || (position > 0 && target < position) {
                        if left > 0 { loops.store(left - 1, ordering: .relaxed) }
                        try source.seek(toFrame: target)
                        // The resampler runs on through the loop: its output for what was fed
                        // so far ends where the jump is heard.
                        let at = sourceBoundary + Int((Double(fed) * Double(format.sampleRate) / Double(source.sampleRate)).rounded())
                        addSeam(Seam(ring: at, source: target, rate: source.sampleRate))
                        position = target
                        passStart = target
                        continue
                    }
                    guard try flush() else { return }
                    guard let file = next?() else { return }
                    // The next source: a resampler of its own (its rate), the stream unbroken.
                    source = try AudioSources.open(file)
                    matrix = ChannelMatrix(sourceChannels: source.channels, map: source.channelMap, targetChannels: format.channels)
                    resampler = try BlockResampler(channels: format.channels, from: source.sampleRate, to: format.sampleRate,
                                                   blockFrames: StreamReader.blockFrames)
                    inChannels = source.channels
                    block = [Float](repeating: 0, count: StreamReader.blockFrames * inChannels)
                    out = [Float](repeating: 0, count: resampler.maximumOutput * format.channels)
                    let boundary = ring.writtenFrames
                    starts.withLock { $0.append(boundary) }
                    addSeam(Seam(ring: boundary, source: 0, rate: source.sampleRate))
                    sourceBoundary = boundary
                    fed = 0
                    position = 0
                    passStart = 0
                    setLoopRegion(nil)
                    continue
                }
                guard block[0..<(got * inChannels)].allSatisfy(\.isFinite) else {
                    throw MediaError(.corrupt(detail: "NaN or infinite samples"), subject: source.path)
                }
                position += Int64(got)
                fed += got
                if let maximumDuration, Double(position) > maximumDuration * Double(sourceRate) {
                    throw MediaError(.failed(detail: "played \(DownloadLimits.text(seconds: maximumDuration)), the longest a stream may "
                                             + "play; raise [http] max-duration in sfx.conf to play it longer"), subject: source.path)
                }
                block.withUnsafeBufferPointer { b in
                    mixed.withUnsafeMutableBufferPointer { matrix.apply(b.baseAddress!, frames: got, into: $0.baseAddress!) }
                }
                // A large ratio of rates fills `out` before the block is used up: put it in the
                // ring and convert the rest.
                var taken = 0
                while taken < got {
                    let (used, made) = try mixed.withUnsafeBufferPointer { m in
                        try out.withUnsafeMutableBufferPointer { o in
                            try resampler.process(m.baseAddress! + taken * format.channels, frames: got - taken,
                                                  into: o.baseAddress!, capacity: resampler.maximumOutput)
                        }
                    }
                    taken += used
                    guard put(made) else { return }
                }
                let delay = delayPerBlock.load(ordering: .relaxed)
                if delay > 0 { usleep(UInt32(delay)) }
            }
        } catch let error as MediaError {
            failure.withLock { $0 = error }
        } catch {
            failure.withLock { $0 = MediaError(.failed(detail: "\(error)"), subject: source.path) }
        }
    }
}

/// libsoxr at very high quality over a stream fed block by block into caller buffers, cut (or
/// padded) at the end to exactly round(n · out / in) frames of everything fed: what
/// `Resampler.resample` gives for the whole input at once. Equal rates pass samples through.
/// The output buffer is a fixed size whatever the ratio of the rates: `process` takes only the
/// input that fills it and says how much it took; call it again with the rest.
final class BlockResampler {
    let channels: Int
    let inputRate: Int
    let outputRate: Int
    /// The most frames one `process` or `finish` call produces.
    let maximumOutput: Int
    /// `maximumOutput` when converting: one block's output at most, and never more than this.
    static let outputBlockFrames = 8_192
    private let soxr: soxr_t?
    private var inputFrames = 0
    private var outputFrames = 0

    init(channels: Int, from inputRate: Int, to outputRate: Int, blockFrames: Int) throws {
        self.channels = channels
        self.inputRate = inputRate
        self.outputRate = outputRate
        if inputRate == outputRate {
            maximumOutput = blockFrames
            soxr = nil
            return
        }
        maximumOutput = min(Resampler.idealLength(frames: blockFrames, from: inputRate, to: outputRate) + 1024,
                            BlockResampler.outputBlockFrames)
        let soxr = try Resampler.makeSoxr(channels: channels, from: inputRate, to: outputRate)
        self.soxr = soxr
    }

    deinit { if let soxr { soxr_delete(soxr) } }

    /// Converts up to `frames` input frames (at most the block size) into `output` (room for
    /// `capacity` frames); returns the input frames it took and the frames it made. It takes
    /// less than `frames` only when `output` is full: call it again with the rest.
    func process(_ input: UnsafePointer<Float>, frames: Int, into output: UnsafeMutablePointer<Float>,
                 capacity: Int) throws -> (used: Int, made: Int) {
        guard let soxr else {
            let count = min(frames, capacity)
            output.update(from: input, count: count * channels)
            inputFrames += count
            outputFrames += count
            return (count, count)
        }
        var consumed = 0
        var made = 0
        while consumed < frames && made < capacity {
            var used = 0
            var produced = 0
            if let error = soxr_process(soxr, input + consumed * channels, frames - consumed, &used,
                                        output + made * channels, capacity - made, &produced) {
                throw MediaError(.failed(detail: "libsoxr: \(String(cString: error))"), subject: "resampler")
            }
            if used == 0 && produced == 0 { break }
            consumed += used
            made += produced
        }
        if consumed == 0 && made == 0 {
            throw MediaError(.failed(detail: "libsoxr took no input and gave no output"), subject: "resampler")
        }
        inputFrames += consumed
        outputFrames += made
        return (consumed, made)
    }

    /// Flushes the filter's tail: the frames still owed to reach the ideal length, at most
    /// `capacity` of them; call it until it returns 0.
    func finish(into output: UnsafeMutablePointer<Float>, capacity: Int) throws -> Int {
        let ideal = Resampler.idealLength(frames: inputFrames, from: inputRate, to: outputRate)
        let owed = max(0, min(ideal - outputFrames, capacity))
        var made = 0
        if let soxr {
            while made < owed {
                var produced = 0
                if let error = soxr_process(soxr, nil, 0, nil, output + made * channels, owed - made, &produced) {
                    throw MediaError(.failed(detail: "libsoxr: \(String(cString: error))"), subject: "resampler")
                }
                if produced == 0 { break }
                made += produced
            }
        }
        if made < owed { (output + made * channels).update(repeating: 0, count: (owed - made) * channels) }
        outputFrames += owed
        return owed
    }
}
