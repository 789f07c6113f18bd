import CFFmpeg
import Foundation

/// Writes test files in formats libsndfile cannot read (M4A with AAC or ALAC), with FFmpeg's
/// own encoders and muxer, so the tests need no `ffmpeg` program.
enum FFmpegEncoding {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Encodes interleaved `samples` (−1…1) into a `container` ("mp4", "asf", …) at `url`.
    static func write(_ samples: [Float], sampleRate: Int, channels: Int, codec id: AVCodecID, container: String = "mp4",
                      to url: URL) throws {
        func check(_ code: Int32, _ what: String) throws {
            guard code >= 0 else { throw Failure(description: "FFmpeg: \(what) failed (\(code))") }
        }
        var output: UnsafeMutablePointer<AVFormatContext>?
        try check(avformat_alloc_output_context2(&output, nil, container, url.path), "choosing the muxer")
        guard let output, let codec = avcodec_find_encoder(id) else { throw Failure(description: "FFmpeg has no encoder \(id)") }
        defer { avformat_free_context(output) }
        let stream = avformat_new_stream(output, nil)!
        var context: UnsafeMutablePointer<AVCodecContext>? = avcodec_alloc_context3(codec)
        defer { avcodec_free_context(&context) }
        let c = context!
        c.pointee.sample_rate = Int32(sampleRate)
        av_channel_layout_default(&c.pointee.ch_layout, Int32(channels))
        c.pointee.sample_fmt = codec.pointee.sample_fmts[0]
        c.pointee.bit_rate = 192_000
        c.pointee.time_base = AVRational(num: 1, den: Int32(sampleRate))
        if output.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 { c.pointee.flags |= 1 << 22 }   // AV_CODEC_FLAG_GLOBAL_HEADER
        try check(avcodec_open2(c, codec, nil), "opening the encoder")
        try check(avcodec_parameters_from_context(stream.pointee.codecpar, c), "describing the stream")
        stream.pointee.time_base = c.pointee.time_base
        try check(avio_open(&output.pointee.pb, url.path, AVIO_FLAG_WRITE), "creating the file")
        defer { avio_closep(&output.pointee.pb) }
        try check(avformat_write_header(output, nil), "writing the header")

        var packet: UnsafeMutablePointer<AVPacket>? = av_packet_alloc()
        defer { av_packet_free(&packet) }
        func drain() throws {
            while avcodec_receive_packet(c, packet) == 0 {
                av_packet_rescale_ts(packet, c.pointee.time_base, stream.pointee.time_base)
                packet!.pointee.stream_index = stream.pointee.index
                try check(av_interleaved_write_frame(output, packet), "writing a packet")
            }
        }
        let frameSize = c.pointee.frame_size > 0 ? Int(c.pointee.frame_size) : 1024
        let frames = samples.count / channels
        var start = 0
        while start < frames {
            let count = min(frameSize, frames - start)
            var frame: UnsafeMutablePointer<AVFrame>? = av_frame_alloc()
            defer { av_frame_free(&frame) }
            let f = frame!
            f.pointee.nb_samples = Int32(count)
            f.pointee.format = c.pointee.sample_fmt.rawValue
            f.pointee.sample_rate = c.pointee.sample_rate
            try check(av_channel_layout_copy(&f.pointee.ch_layout, &c.pointee.ch_layout), "laying out channels")
            try check(av_frame_get_buffer(f, 0), "allocating a frame")
            for ch in 0..<channels {
                let plane = f.pointee.extended_data[ch]!
                for i in 0..<count {
                    let value = samples[(start + i) * channels + ch]
                    switch c.pointee.sample_fmt {
                    case AV_SAMPLE_FMT_FLTP:
                        plane.withMemoryRebound(to: Float.self, capacity: count) { $0[i] = value }
                    case AV_SAMPLE_FMT_S16P:
                        plane.withMemoryRebound(to: Int16.self, capacity: count) { $0[i] = Int16(max(-32_768, min(32_767, (value * 32_768).rounded()))) }
                    case AV_SAMPLE_FMT_S32P:
                        plane.withMemoryRebound(to: Int32.self, capacity: count) { $0[i] = Int32(max(-2_147_483_648, min(2_147_483_647, (Double(value) * 2_147_483_648).rounded()))) }
                    default:
                        throw Failure(description: "unexpected sample format \(c.pointee.sample_fmt)")
                    }
                }
            }
            f.pointee.pts = Int64(start)
            try check(avcodec_send_frame(c, f), "encoding")
            try drain()
            start += count
        }
        try check(avcodec_send_frame(c, nil), "flushing the encoder")
        try drain()
        try check(av_write_trailer(output), "writing the trailer")
    }
}
