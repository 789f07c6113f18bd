import CFFmpeg
import FoundationEssentials
import Glibc

/// Bytes FFmpeg reads through a custom AVIO context: a regular file sfx opened and checked
/// itself (`FileBytes`), or a download still arriving (SFX's streaming download).
public protocol ByteSource: AnyObject {
    /// Reads up to `count` bytes at the current offset: the number read, 0 at the end, or a
    /// negative errno. May wait for bytes still to come; never forever.
    func read(into buffer: UnsafeMutablePointer<UInt8>, count: Int) -> Int
    /// Moves to `offset` (from the start); returns the new offset or a negative errno.
    func seek(to offset: Int64) -> Int64
    /// The total length, when known.
    var size: Int64? { get }
}

/// A regular file, opened once and read with `pread`.
final class FileBytes: ByteSource {
    let descriptor: Int32
    private var offset: Int64 = 0
    let size: Int64?

    /// Opens `file` if it is a regular file (`RawFilePath.openRegularFile`).
    init(file: RawFilePath) throws {
        (descriptor, size) = try RawFilePath.openRegularFile(file)
    }

    deinit { close(descriptor) }

    func read(into buffer: UnsafeMutablePointer<UInt8>, count: Int) -> Int {
        let got = pread(descriptor, buffer, count, off_t(offset))
        if got < 0 { return -Int(errno) }
        offset += Int64(got)
        return got
    }

    func seek(to newOffset: Int64) -> Int64 {
        offset = newOffset
        return offset
    }
}

/// Decodes what libsndfile cannot read (M4A/AAC, ALAC, WMA, …) with FFmpeg's libavformat and
/// libavcodec, converted to interleaved float at the source's own rate and channels by
/// libswresample (rate conversion stays libsoxr's job, as for every other source).
///
/// Seeking is exact: the demuxer seeks to the packet at or before the frame, then decoded frames
/// are placed by their timestamps and the samples before the frame are dropped.
final class FFmpegSource: AudioSource {
    // Every stored property has a value before the first step that can fail, so that a failed
    // init still runs deinit, which frees whatever FFmpeg had allocated by then.
    let path: String
    private(set) var sampleRate = 0
    private(set) var channels = 0
    private(set) var frames: Int64?
    /// FFmpeg's names of the container and codec ("mov,mp4,m4a,3gp,3g2,mj2", "aac").
    private(set) var containerName = ""
    private(set) var codecName = ""
    private(set) var codecLongName = ""
    var channelMap: [ChannelPosition]? { nil }

    private let bytes: any ByteSource
    private(set) var format: UnsafeMutablePointer<AVFormatContext>?
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var resampler: OpaquePointer?
    private var io: UnsafeMutablePointer<AVIOContext>?
    private let packet: UnsafeMutablePointer<AVPacket>? = av_packet_alloc()
    private let frame: UnsafeMutablePointer<AVFrame>? = av_frame_alloc()
    private(set) var streamIndex: Int32 = -1
    private var timeBase = AVRational(num: 1, den: 1)
    private var startTime: Int64 = 0
    /// Converted samples not yet handed out, and where the next one is.
    private var pending: [Float] = []
    private var pendingOffset = 0
    /// The source frame of the next sample handed out; samples before `discardUntil` are dropped.
    private var position: Int64 = 0
    private var discardUntil: Int64 = 0
    private var drained = false
    private var failure: String?

    convenience init(file: RawFilePath) throws {
        try self.init(bytes: FileBytes(file: file), name: file.description)
    }

    /// Opens `bytes` as a container FFmpeg knows; `name` names it in errors.
    init(bytes: any ByteSource, name: String) throws {
        path = name
        self.bytes = bytes
        try FFmpegLibraries.require { reason in MediaError(.ffmpegMissing(reason: reason), subject: name) }
        guard packet != nil, frame != nil else {
            throw MediaError(.failed(detail: "FFmpeg could not allocate a packet"), subject: name)
        }
        av_log_set_level(AV_LOG_QUIET)
        let bufferSize = 65_536
        guard let buffer = av_malloc(bufferSize)?.assumingMemoryBound(to: UInt8.self),
              let io = avio_alloc_context(buffer, Int32(bufferSize), 0, Unmanaged.passUnretained(bytes as AnyObject).toOpaque(),
                                          FFmpegSource.readPacket, nil, FFmpegSource.seekBytes) else {
            throw MediaError(.failed(detail: "FFmpeg could not allocate its reader"), subject: name)
        }
        self.io = io
        var format = avformat_alloc_context()
        format?.pointee.pb = io
        format?.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        var code = avformat_open_input(&format, nil, nil, nil)
        guard code >= 0, let opened = format else {
            throw MediaError(.notAudio(looksLike: "neither libsndfile nor FFmpeg recognises its format (\(Self.message(code)))"), subject: name)
        }
        self.format = opened
        var decoder: UnsafePointer<AVCodec>?
        code = avformat_find_stream_info(opened, nil)
        let index = code >= 0 ? av_find_best_stream(opened, AVMEDIA_TYPE_AUDIO, -1, -1, &decoder, 0) : code
        guard index >= 0, let decoder else {
            let detail = index == -1381258232 /* AVERROR_DECODER_NOT_FOUND */ ? "FFmpeg has no decoder for its audio" : "it holds no audio stream FFmpeg can read"
            throw MediaError(.unsupportedEncoding(detail: detail), subject: name)
        }
        streamIndex = index
        let stream = opened.pointee.streams[Int(index)]!
        timeBase = stream.pointee.time_base
        startTime = stream.pointee.start_time == sfx_av_nopts_value() ? 0 : stream.pointee.start_time
        containerName = String(cString: opened.pointee.iformat.pointee.name)
        codecName = String(cString: decoder.pointee.name)
        codecLongName = decoder.pointee.long_name.map { String(cString: $0) } ?? codecName
        let context = avcodec_alloc_context3(decoder)
        codec = context
        func fail(_ detail: String) -> MediaError {
            MediaError(.unsupportedEncoding(detail: detail), subject: name)
        }
        guard let context, avcodec_parameters_to_context(context, stream.pointee.codecpar) >= 0 else {
            throw fail("FFmpeg cannot set up its \(codecName) decoder")
        }
        context.pointee.pkt_timebase = timeBase
        code = avcodec_open2(context, decoder, nil)
        guard code >= 0 else { throw fail("FFmpeg cannot open its \(codecName) decoder: \(Self.message(code))") }
        let rate = Int(context.pointee.sample_rate)
        let count = Int(context.pointee.ch_layout.nb_channels)
        guard (1...SoundFile.maximumSampleRate).contains(rate) else {
            throw MediaError(.absurdHeader(detail: "sample rate \(rate) Hz, expected 1 to \(SoundFile.maximumSampleRate)"), subject: name)
        }
        guard SoundFile.sampleRates.contains(rate) else { throw MediaError(.unsupportedSampleRate(rate, accepted: SoundFile.sampleRates), subject: name) }
        guard (1...SoundFile.maximumChannels).contains(count) else {
            throw MediaError(.absurdHeader(detail: "\(count) channels, expected 1 to \(SoundFile.maximumChannels)"), subject: name)
        }
        sampleRate = rate
        channels = count
        if stream.pointee.duration != sfx_av_nopts_value(), stream.pointee.duration > 0 {
            frames = av_rescale_q(stream.pointee.duration, timeBase, AVRational(num: 1, den: Int32(rate)))
        } else if opened.pointee.duration != sfx_av_nopts_value(), opened.pointee.duration > 0 {
            frames = av_rescale_q(opened.pointee.duration, sfx_av_time_base_q(), AVRational(num: 1, den: Int32(rate)))
        } else {
            frames = nil
        }
        var layout = context.pointee.ch_layout
        if layout.order == AV_CHANNEL_ORDER_UNSPEC { av_channel_layout_default(&layout, Int32(count)) }
        var swr: OpaquePointer?
        var outLayout = layout
        code = swr_alloc_set_opts2(&swr, &outLayout, AV_SAMPLE_FMT_FLT, Int32(rate), &layout, context.pointee.sample_fmt, Int32(rate), 0, nil)
        guard code >= 0, let swr, swr_init(swr) >= 0 else { throw fail("FFmpeg cannot convert \(codecName)'s samples to float") }
        resampler = swr
    }

    deinit {
        var frame = frame
        av_frame_free(&frame)
        var packet = packet
        av_packet_free(&packet)
        if resampler != nil { swr_free(&resampler) }
        if codec != nil { avcodec_free_context(&codec) }
        if format != nil { avformat_close_input(&format) }
        if let io { Self.freeIO(io) }
    }

    private static func freeIO(_ io: UnsafeMutablePointer<AVIOContext>) {
        av_freep(&io.pointee.buffer)
        var context: UnsafeMutablePointer<AVIOContext>? = io
        avio_context_free(&context)
    }

    static func message(_ code: Int32) -> String {
        var text = [CChar](repeating: 0, count: 256)
        av_strerror(code, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static let readPacket: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32 = { opaque, buffer, size in
        guard let opaque, let buffer else { return sfx_averror(EINVAL) }
        let source = Unmanaged<AnyObject>.fromOpaque(opaque).takeUnretainedValue() as! any ByteSource
        let got = source.read(into: buffer, count: Int(size))
        if got == 0 { return sfx_averror_eof() }
        return got < 0 ? sfx_averror(Int32(-got)) : Int32(got)
    }

    private static let seekBytes: @convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64 = { opaque, offset, whence in
        guard let opaque else { return -1 }
        let source = Unmanaged<AnyObject>.fromOpaque(opaque).takeUnretainedValue() as! any ByteSource
        switch whence & ~AVSEEK_FORCE {
        case AVSEEK_SIZE: return source.size ?? -1
        case SEEK_SET: return source.seek(to: offset)
        default: return -1
        }
    }

    // MARK: Reading

    func read(into buffer: UnsafeMutablePointer<Float>, frames wanted: Int) -> Int {
        var done = 0
        while done < wanted {
            let available = (pending.count - pendingOffset) / channels
            if available > 0 {
                let count = min(available, wanted - done)
                pending.withUnsafeBufferPointer { p in
                    (buffer + done * channels).update(from: p.baseAddress! + pendingOffset, count: count * channels)
                }
                pendingOffset += count * channels
                done += count
                continue
            }
            guard decodeNext() else { break }
        }
        return done
    }

    func finishReading(framesRead: Int) throws {
        if let failure { throw MediaError(.corrupt(detail: failure), subject: path) }
    }

    func seek(toFrame target: Int64) throws {
        guard let format, let codec else { return }
        let timestamp = av_rescale_q(target, AVRational(num: 1, den: Int32(sampleRate)), timeBase) + startTime
        let code = av_seek_frame(format, streamIndex, timestamp, AVSEEK_FLAG_BACKWARD)
        guard code >= 0 else {
            throw MediaError(.failed(detail: "FFmpeg cannot seek to frame \(target): \(Self.message(code))"), subject: path)
        }
        avcodec_flush_buffers(codec)
        pending.removeAll(keepingCapacity: true)
        pendingOffset = 0
        drained = false
        failure = nil
        position = -1
        discardUntil = target
    }

    /// Decodes the next frame into `pending`; false at the end of the stream or on an error.
    private func decodeNext() -> Bool {
        guard let format, let codec, let packet, let frame else { return false }
        while true {
            let received = avcodec_receive_frame(codec, frame)
            if received == 0 {
                defer { av_frame_unref(frame) }
                return convert(frame)
            }
            if received == sfx_averror_eof() { return false }
            guard received == sfx_averror_eagain() else {
                failure = "FFmpeg cannot decode it: \(Self.message(received))"
                return false
            }
            if drained { return false }
            let read = av_read_frame(format, packet)
            if read < 0 {
                if read != sfx_averror_eof() { failure = "FFmpeg cannot read it: \(Self.message(read))" }
                drained = true
                avcodec_send_packet(codec, nil)
                continue
            }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            let sent = avcodec_send_packet(codec, packet)
            if sent < 0 && sent != sfx_averror_eagain() {
                failure = "FFmpeg cannot decode it: \(Self.message(sent))"
                return false
            }
        }
    }

    /// Converts the decoded frame to float, placing it by its timestamp after a seek and
    /// dropping the samples before the frame sought.
    private func convert(_ frame: UnsafeMutablePointer<AVFrame>) -> Bool {
        let count = Int(frame.pointee.nb_samples)
        pending.removeAll(keepingCapacity: true)
        pendingOffset = 0
        guard count > 0 else { return true }
        pending.append(contentsOf: repeatElement(0, count: count * channels))
        let converted = pending.withUnsafeMutableBufferPointer { out -> Int32 in
            var outPointer: UnsafeMutablePointer<UInt8>? = UnsafeMutableRawPointer(out.baseAddress!).assumingMemoryBound(to: UInt8.self)
            let input = UnsafeMutableRawPointer(frame.pointee.extended_data).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
            return swr_convert(resampler, &outPointer, Int32(count), input, Int32(count))
        }
        guard converted >= 0 else {
            failure = "FFmpeg cannot convert its samples: \(Self.message(converted))"
            return false
        }
        pending.removeLast((count - Int(converted)) * channels)
        if position < 0 {
            let pts = frame.pointee.best_effort_timestamp
            position = pts == sfx_av_nopts_value() ? discardUntil
                : av_rescale_q(pts - startTime, timeBase, AVRational(num: 1, den: Int32(sampleRate)))
        }
        let frameStart = position
        position += Int64(converted)
        if frameStart < discardUntil {
            let drop = Int(min(Int64(converted), discardUntil - frameStart))
            pendingOffset = drop * channels
        }
        return true
    }
}
