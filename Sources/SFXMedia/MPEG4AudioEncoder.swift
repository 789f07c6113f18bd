import CFFmpeg
import FoundationEssentials
import Glibc

/// A recording in M4A: AAC-LC (FFmpeg's native encoder, planar float in) in fragmented MPEG-4
/// (libavformat's `ipod` muxer with `movflags=empty_moov+default_base_moof` and
/// `frag_duration=0.5 s`) while it is written; a standard MPEG-4 file once finished, unless
/// `RecordingContainer.fragmented` keeps the fragments.
///
/// Crash safety: the `moov` box goes out first, empty; every half second of audio then follows
/// as a self-contained `moof` + `mdat` fragment, pushed to the file at each `checkpoint()`. A
/// killed process leaves a file that players and FFmpeg read up to its last complete fragment
/// (all but at most the last 0.75 s: a fragment and a checkpoint interval): no recovery step is
/// needed on the next start.
///
/// The AAC stream begins with the encoder's 1024 frames of priming (21.3 ms at 48 kHz): the
/// fragmented file carries no edit list to hide them, so decoders output them first (as
/// near-silence) and a length summed from the packets includes them. FFmpeg 5.1 can write the
/// edit list (`movflags` plus `delay_moov` and `use_editlist=1` put an `elst` with media_time
/// 1024 in the `moov` it writes with the first fragment), but its own demuxer applies an edit
/// list only to the sample table in `moov` (mov_fix_index), which is empty in a fragmented
/// file: the samples of the `moof` fragments are not trimmed, and libavformat still decodes the
/// 1024 frames (measured: delay 1024 either way). The other route its demuxer turns into
/// skip_samples, an iTunSMPB tag, is a freeform `----` item its muxer cannot write. So the
/// fragmented file keeps the simpler empty `moov`, written at once, and no edit list.
///
/// At the end (`finish()`), with `RecordingContainer.standard` (the default), the fragmented
/// file is rewritten as a standard one (`MPEG4Remux`): its `moov` has a sample table, so there
/// the edit list works, and it carries one that skips the 1024 frames of priming.
final class MPEG4AudioEncoder: RecordingEncoder {
    let encoding: RecordingEncoding
    private(set) var framesWritten: Int64 = 0
    private let path: String
    private let sink: DescriptorSink
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var io: UnsafeMutablePointer<AVIOContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private let stream: UnsafeMutablePointer<AVStream>
    /// AAC's frame (1024 samples a channel).
    private let frameSize: Int
    /// The encoder's priming: frames of near-silence decoders output before the first frame given
    /// (its `initial_padding`, 1024 for FFmpeg's AAC encoder).
    private let priming: Int64
    /// Interleaved samples not yet making a whole AAC frame.
    private var pending: [Float] = []
    private var nextTimestamp: Int64 = 0
    /// The first failure (a write, the encoder): nothing more is encoded after it.
    private var failure: MediaError?

    /// The bit rates accepted (bits per second).
    static let bitRates = 16_000...512_000

    init(descriptor fd: Int32, path: String, encoding: RecordingEncoding) throws {
        self.encoding = encoding
        self.path = path
        sink = DescriptorSink(fd)
        try FFmpegLibraries.require { reason in MediaError(.unsupportedOutput(detail: "M4A needs FFmpeg: \(reason)"), subject: path) }
        // FFmpeg's own log lines ("Qavg", muxer notes) would interleave with sfx's output: every
        // failure is reported here as a MediaError instead.
        av_log_set_level(AV_LOG_QUIET)
        func fail(_ detail: String, _ code: Int32) -> MediaError {
            MediaError(.unsupportedOutput(detail: "\(detail): \(MPEG4AudioEncoder.message(code))"), subject: path)
        }
        guard let aac = avcodec_find_encoder(AV_CODEC_ID_AAC) else {
            throw MediaError(.unsupportedOutput(detail: "this FFmpeg has no AAC encoder; install Debian's libavcodec59"), subject: path)
        }
        let bitRate = encoding.bitRate ?? 64_000 * encoding.channels
        guard Self.bitRates.contains(bitRate) else {
            throw MediaError(.unsupportedOutput(detail: "AAC at \(bitRate) b/s; give 16000 to 512000"), subject: path)
        }
        var context: UnsafeMutablePointer<AVFormatContext>?
        var result = avformat_alloc_output_context2(&context, nil, "ipod", nil)
        guard result >= 0, let context else { throw fail("no M4A muxer", result) }
        format = context
        guard let codec = avcodec_alloc_context3(aac) else { throw fail("no AAC encoder context", sfx_averror(ENOMEM)) }
        self.codec = codec
        codec.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        codec.pointee.sample_rate = Int32(encoding.sampleRate)
        av_channel_layout_default(&codec.pointee.ch_layout, Int32(encoding.channels))
        codec.pointee.bit_rate = Int64(bitRate)
        codec.pointee.time_base = AVRational(num: 1, den: Int32(encoding.sampleRate))
        if context.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 {
            codec.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        }
        result = avcodec_open2(codec, aac, nil)
        guard result >= 0 else { throw fail("AAC cannot take \(encoding.channels) channels at \(encoding.sampleRate) Hz", result) }
        frameSize = Int(codec.pointee.frame_size > 0 ? codec.pointee.frame_size : 1024)
        priming = Int64(max(codec.pointee.initial_padding, 0))
        guard let stream = avformat_new_stream(context, nil) else { throw fail("no stream", sfx_averror(ENOMEM)) }
        self.stream = stream
        stream.pointee.time_base = codec.pointee.time_base
        result = avcodec_parameters_from_context(stream.pointee.codecpar, codec)
        guard result >= 0 else { throw fail("codec parameters", result) }

        let bufferSize: Int32 = 1 << 16
        guard let buffer = av_malloc(Int(bufferSize)),
              let io = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), bufferSize, 1,
                                          Unmanaged.passUnretained(sink).toOpaque(), nil, DescriptorSink.write, DescriptorSink.seek) else {
            throw fail("no I/O context", sfx_averror(ENOMEM))
        }
        self.io = io
        context.pointee.pb = io

        var options: OpaquePointer?
        av_dict_set(&options, "movflags", "empty_moov+default_base_moof", 0)
        av_dict_set(&options, "frag_duration", "500000", 0)
        result = avformat_write_header(context, &options)
        av_dict_free(&options)
        guard result >= 0 else { throw sink.error(path: path) ?? fail("M4A header", result) }
        avio_flush(io)
        if let error = sink.error(path: path) { throw error }

        frame = av_frame_alloc()
        packet = av_packet_alloc()
        guard let frame, packet != nil else { throw fail("no frame", sfx_averror(ENOMEM)) }
        frame.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        frame.pointee.sample_rate = Int32(encoding.sampleRate)
        frame.pointee.nb_samples = Int32(frameSize)
        av_channel_layout_copy(&frame.pointee.ch_layout, &codec.pointee.ch_layout)
        result = av_frame_get_buffer(frame, 0)
        guard result >= 0 else { throw fail("no frame buffer", result) }
        pending.reserveCapacity(frameSize * encoding.channels * 2)
    }

    deinit { release() }

    func append(_ samples: UnsafeBufferPointer<Float>) throws {
        guard codec != nil else { throw MediaError(.failed(detail: "the recording is already closed"), subject: path) }
        if let failure { throw failure }
        let channels = encoding.channels
        pending.append(contentsOf: samples.prefix(samples.count - samples.count % channels))
        framesWritten += Int64(samples.count / channels)
        var start = 0
        // Whatever happens, `pending` keeps only what was not encoded: less than a frame.
        defer { pending.removeFirst(start) }
        do {
            while pending.count - start >= frameSize * channels {
                try encode(from: start, frames: frameSize)
                start += frameSize * channels
            }
        } catch {
            failure = error as? MediaError ?? MediaError(.failed(detail: "\(error)"), subject: path)
            throw error
        }
    }

    func checkpoint() throws {
        guard let io else { return }
        if let failure { throw failure }
        avio_flush(io)
        if let error = sink.error(path: path) {
            failure = error
            throw error
        }
    }

    /// Completes the file, then (with `RecordingContainer.standard`) rewrites it as a standard
    /// MPEG-4 file; when the rewrite fails the complete fragmented file stays and the failure is
    /// thrown. After a failed write nothing more is encoded: the file is cut back to its last
    /// complete fragment (what players read) and kept as it is, fragmented (the disk is full,
    /// and the file holds what fitted, not what was encoded).
    func finish() throws {
        guard let codec, let format, let io else { return }
        defer { release() }
        let reported = failure != nil
        if failure == nil {
            do {
                let channels = encoding.channels
                var start = 0
                while start < pending.count {
                    let frames = min(frameSize, (pending.count - start) / channels)
                    try encode(from: start, frames: frames)
                    start += frames * channels
                }
                pending.removeAll()
                try send(nil, codec: codec)
                let result = av_write_trailer(format)
                avio_flush(io)
                if let error = sink.error(path: path) { throw error }
                guard result >= 0 else { throw MediaError(.failed(detail: "cannot be completed: \(Self.message(result))"), subject: path) }
            } catch let error as MediaError {
                failure = error
            }
        }
        if let failure {
            try keepCompleteFragments()
            // Thrown by append or checkpoint already; thrown here when it is new.
            if !reported { throw failure }
            return
        }
        guard fsync(sink.fd) == 0 || errno == EINVAL else { throw RecordingFile.writeError(errno, detail: "fsync", path: path) }
        release()
        if encoding.container == .standard {
            try MPEG4Remux.makeStandard(path: path, frames: framesWritten, priming: priming, sampleRate: encoding.sampleRate)
        }
    }

    func abandon() { release() }

    // MARK: Private

    /// Encodes `frames` frames (at most an AAC frame) of `pending` from sample `start`.
    private func encode(from start: Int, frames: Int) throws {
        guard let frame, let codec else { return }
        precondition(frames <= frameSize && start + frames * encoding.channels <= pending.count, "an AAC frame holds \(frameSize) frames")
        let result = av_frame_make_writable(frame)
        guard result >= 0 else { throw MediaError(.failed(detail: "AAC frame: \(Self.message(result))"), subject: path) }
        frame.pointee.nb_samples = Int32(frames)
        let channels = encoding.channels
        pending.withUnsafeBufferPointer { source in
            for c in 0..<channels {
                let plane = UnsafeMutableRawPointer(frame.pointee.extended_data[c]!).assumingMemoryBound(to: Float.self)
                for i in 0..<frames { plane[i] = source[start + i * channels + c] }
            }
        }
        frame.pointee.pts = nextTimestamp
        nextTimestamp += Int64(frames)
        try send(frame, codec: codec)
    }

    /// Sends a frame (nil: the end) and writes every packet the encoder gives back.
    private func send(_ frame: UnsafeMutablePointer<AVFrame>?, codec: UnsafeMutablePointer<AVCodecContext>) throws {
        guard let packet, let format else { return }
        var result = avcodec_send_frame(codec, frame)
        guard result >= 0 else { throw MediaError(.failed(detail: "AAC encoding failed: \(Self.message(result))"), subject: path) }
        while true {
            result = avcodec_receive_packet(codec, packet)
            if result == sfx_averror_eagain() || result == sfx_averror_eof() { return }
            guard result >= 0 else { throw MediaError(.failed(detail: "AAC encoding failed: \(Self.message(result))"), subject: path) }
            av_packet_rescale_ts(packet, codec.pointee.time_base, stream.pointee.time_base)
            packet.pointee.stream_index = stream.pointee.index
            result = av_write_frame(format, packet)
            av_packet_unref(packet)
            if let error = sink.error(path: path) { throw error }
            guard result >= 0 else { throw MediaError(.failed(detail: "cannot be written: \(Self.message(result))"), subject: path) }
        }
    }

    /// Cuts the file after its last complete fragment (or its `moov`, when no fragment is
    /// complete): the top-level boxes are walked from the start, and a `moof` counts only with
    /// the whole `mdat` after it. Players and FFmpeg then read every fragment the file keeps,
    /// and nothing half written follows them.
    private func keepCompleteFragments() throws {
        var st = stat()
        guard fstat(sink.fd, &st) == 0 else { throw RecordingFile.writeError(errno, detail: "fstat", path: path) }
        let size = Int64(st.st_size)
        var offset: Int64 = 0, kept: Int64 = 0
        var afterFragmentHeader = false
        var header = [UInt8](repeating: 0, count: 16)
        while offset + 8 <= size {
            guard pread(sink.fd, &header, 16, off_t(offset)) >= 8 else { break }
            func number(_ at: Int, _ bytes: Int) -> Int64 { header[at..<at + bytes].reduce(0) { $0 << 8 | Int64($1) } }
            var length = number(0, 4)
            if length == 1 { length = offset + 16 <= size ? number(8, 8) : 0 }
            guard length >= 8, offset + length <= size else { break }     // 0: "to the end", never complete here
            let type = String(decoding: header[4..<8], as: UTF8.self)
            offset += length
            switch type {
            case "moof": afterFragmentHeader = true
            case "mdat":
                if afterFragmentHeader { kept = offset }
                afterFragmentHeader = false
            default:
                if !afterFragmentHeader { kept = offset }
            }
        }
        guard kept == size || sink.truncate(to: kept) else { throw RecordingFile.writeError(errno, detail: "ftruncate", path: path) }
        guard fsync(sink.fd) == 0 || errno == EINVAL else { throw RecordingFile.writeError(errno, detail: "fsync", path: path) }
    }

    private func release() {
        if frame != nil { av_frame_free(&frame) }
        if packet != nil { av_packet_free(&packet) }
        if codec != nil { avcodec_free_context(&codec) }
        if let format {
            format.pointee.pb = nil
            avformat_free_context(format)
            self.format = nil
        }
        if let io {
            if let buffer = io.pointee.buffer { av_free(buffer) }
            var pointer: UnsafeMutablePointer<AVIOContext>? = io
            avio_context_free(&pointer)
            self.io = nil
        }
        sink.close()
    }

    static func message(_ code: Int32) -> String {
        var text = [CChar](repeating: 0, count: 128)
        av_strerror(code, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
