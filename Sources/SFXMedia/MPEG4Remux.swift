import CFFmpeg
import FoundationEssentials
import SFXSystem
import Glibc

/// Rewrites a complete fragmented M4A as a standard one, the packets copied (never re-encoded):
/// one `moov` with the durations and the sample tables, placed before the `mdat` (libavformat's
/// `ipod` muxer with `movflags=+faststart`), no fragments. What players, phones and tag readers
/// that take the length from the `moov` need.
///
/// The encoder's priming (AAC: 1024 frames of near-silence the decoder outputs first) becomes an
/// edit list: the packets are written from time −priming, so the muxer puts an `elst` with
/// media_time = priming in the `moov`, FFmpeg's demuxer turns it into skip_samples (it applies an
/// edit list to a `moov`'s sample table, which a fragmented file lacks) and the decoded audio
/// starts at the recording's first frame. The last packet's duration is what the recording left
/// in it (the demuxer reads a whole frame's), so the edit, `tkhd` and `mvhd` durations are the
/// recording's length; `mdhd` (the media) counts the priming too, as in every AAC M4A.
///
/// Atomic: written to a new file beside the recording (O_CREAT | O_EXCL | O_NOFOLLOW, a random
/// name, the recording's mode), fsync'd, renamed over the recording, and the directory fsync'd.
/// Any failure before the rename removes the new file and leaves the fragmented recording as it
/// was (complete and readable); a process killed before it leaves the fragmented file too.
enum MPEG4Remux {
    /// Rewrites the fragmented file at `path`, which holds `frames` frames at `sampleRate` after
    /// the encoder's `priming` frames. Throws a `MediaError` (`.failed`) whose line says that the
    /// fragmented recording is kept, why the rewrite failed and the fix.
    static func makeStandard(path: String, frames: Int64, priming: Int64, sampleRate: Int) throws {
        var st = stat()
        guard stat(path, &st) == 0 else { throw failure(path, "the recording cannot be examined", code: errno) }
        let mode = st.st_mode & 0o7777
        let (fd, temporary) = try createBeside(path, mode: mode)
        let sink = DescriptorSink(fd)
        var renamed = false
        defer {
            sink.close()
            if !renamed { unlink(temporary) }
        }
        try copyPackets(from: path, to: temporary, through: sink, frames: frames, priming: priming, sampleRate: sampleRate)
        guard fsync(sink.fd) == 0 || errno == EINVAL else { throw failure(path, "the new file cannot be synced to disk", code: errno) }
        sink.close()
        guard rename(temporary, path) == 0 else { throw failure(path, "the new file cannot be renamed over it", code: errno) }
        renamed = true
        // The rename is durable once the directory is: until then a crash leaves one complete
        // file or the other at `path`, never neither, so a failure here is not reported.
        let directory = open(directoryOf(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }

    // MARK: Private

    /// Creates a new file beside `path` (its directory, a hidden name with 64 random bits).
    private static func createBeside(_ path: String, mode: mode_t) throws -> (Int32, String) {
        let name = path.fileName
        let directory = directoryOf(path)
        var code: Int32 = EEXIST
        for _ in 0..<8 {
            let temporary = directory + "/." + name + "." + String(UInt64.random(in: .min ... .max), radix: 16) + ".standard"
            let fd = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
            if fd >= 0 {
                // The mode the recording has, whatever the umask.
                _ = fchmod(fd, mode)
                return (fd, temporary)
            }
            code = errno
            if code != EEXIST { break }
        }
        throw failure(path, "a new file cannot be created beside it in \(directory)", code: code)
    }

    private static func directoryOf(_ path: String) -> String {
        let directory = path.directoryPart
        return directory.isEmpty ? "." : directory
    }

    /// Reads the fragmented file's packets and writes them as a standard file through `sink`
    /// (`temporary` is its name, which the muxer's faststart pass opens again to read).
    private static func copyPackets(from path: String, to temporary: String, through sink: DescriptorSink,
                                    frames: Int64, priming: Int64, sampleRate: Int) throws {
        // "file:" so that no part of a path is taken for a protocol.
        var input: UnsafeMutablePointer<AVFormatContext>?
        var result = avformat_open_input(&input, "file:" + path, nil, nil)
        guard result >= 0, let source = input else { throw failure(path, "it cannot be read again", ffmpeg: result) }
        defer { avformat_close_input(&input) }
        result = avformat_find_stream_info(source, nil)
        guard result >= 0 else { throw failure(path, "it cannot be read again", ffmpeg: result) }
        let index = av_find_best_stream(source, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        guard index >= 0, let audio = source.pointee.streams[Int(index)] else {
            throw failure(path, "no audio stream is found in it", ffmpeg: index)
        }

        var created: UnsafeMutablePointer<AVFormatContext>?
        result = avformat_alloc_output_context2(&created, nil, "ipod", "file:" + temporary)
        guard result >= 0, let output = created else { throw failure(path, "no M4A muxer", ffmpeg: result) }
        var io: UnsafeMutablePointer<AVIOContext>?
        defer {
            output.pointee.pb = nil
            avformat_free_context(output)
            if let context = io {
                if let buffer = context.pointee.buffer { av_free(buffer) }
                avio_context_free(&io)
            }
        }
        guard let stream = avformat_new_stream(output, nil) else { throw failure(path, "no stream", ffmpeg: sfx_averror(ENOMEM)) }
        result = avcodec_parameters_copy(stream.pointee.codecpar, audio.pointee.codecpar)
        guard result >= 0 else { throw failure(path, "the codec parameters cannot be copied", ffmpeg: result) }
        stream.pointee.codecpar.pointee.codec_tag = 0
        stream.pointee.time_base = audio.pointee.time_base

        let bufferSize: Int32 = 1 << 16
        guard let buffer = av_malloc(Int(bufferSize)) else { throw failure(path, "no I/O buffer", ffmpeg: sfx_averror(ENOMEM)) }
        io = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), bufferSize, 1,
                                Unmanaged.passUnretained(sink).toOpaque(), nil, DescriptorSink.write, DescriptorSink.seek)
        guard let io else {
            av_free(buffer)
            throw failure(path, "no I/O context", ffmpeg: sfx_averror(ENOMEM))
        }
        output.pointee.pb = io
        func writeFailure(_ what: String, _ code: Int32) -> MediaError {
            sink.failure != 0 ? failure(path, what, code: sink.failure) : failure(path, what, ffmpeg: code)
        }

        var options: OpaquePointer?
        av_dict_set(&options, "movflags", "+faststart", 0)
        result = avformat_write_header(output, &options)
        av_dict_free(&options)
        guard result >= 0 else { throw writeFailure("the new file's header cannot be written", result) }

        // Times in the source's time base. The source's packets start at 0 (its first is the
        // priming); the copies start at −priming, and the audio ends at `end`.
        let base = audio.pointee.time_base
        let rate = AVRational(num: 1, den: Int32(sampleRate))
        let shift = av_rescale_q(priming, rate, base)
        let end = av_rescale_q(frames, rate, base)
        let frameSize = audio.pointee.codecpar.pointee.frame_size > 0 ? Int64(audio.pointee.codecpar.pointee.frame_size) : 1024
        let nominal = av_rescale_q(frameSize, rate, base)
        guard let packet = av_packet_alloc() else { throw failure(path, "no packet", ffmpeg: sfx_averror(ENOMEM)) }
        defer {
            var pointer: UnsafeMutablePointer<AVPacket>? = packet
            av_packet_free(&pointer)
        }
        var origin: Int64?
        while true {
            result = av_read_frame(source, packet)
            if result == sfx_averror_eof() { break }
            guard result >= 0 else { throw failure(path, "it cannot be read again", ffmpeg: result) }
            guard packet.pointee.stream_index == index else {
                av_packet_unref(packet)
                continue
            }
            let first = origin ?? packet.pointee.dts
            origin = first
            let time = packet.pointee.dts - first - shift
            packet.pointee.pts = time
            packet.pointee.dts = time
            packet.pointee.duration = max(0, min(nominal, end - time))
            packet.pointee.pos = -1
            packet.pointee.stream_index = stream.pointee.index
            av_packet_rescale_ts(packet, base, stream.pointee.time_base)
            // Takes the packet's data, and leaves it blank.
            result = av_interleaved_write_frame(output, packet)
            guard result >= 0, sink.failure == 0 else { throw writeFailure("the new file cannot be written", result) }
        }
        // The faststart pass: the `moov` is moved before the `mdat`.
        result = av_write_trailer(output)
        avio_flush(io)
        guard result >= 0, sink.failure == 0 else { throw writeFailure("the new file cannot be completed", result) }
    }

    private static func failure(_ path: String, _ what: String, code: Int32) -> MediaError {
        let fix: String
        switch code {
        case ENOSPC, EDQUOT: fix = "; free some space"
        case EFBIG: fix = "; raise the file-size limit (ulimit -f)"
        case EACCES, EPERM, EROFS: fix = "; make \(directoryOf(path)) writable"
        default: fix = ""
        }
        return kept(path, "\(what) (\(String(cString: strerror(code))))\(fix)")
    }

    private static func failure(_ path: String, _ what: String, ffmpeg code: Int32) -> MediaError {
        kept(path, "\(what) (FFmpeg: \(MPEG4AudioEncoder.message(code)))")
    }

    private static func kept(_ path: String, _ why: String) -> MediaError {
        MediaError(.failed(detail: "kept as fragmented MPEG-4 (complete and readable, but with no duration in its header): "
                           + "it could not be rewritten as a standard M4A: \(why)"), subject: path)
    }
}
