import CFFmpeg
import FoundationEssentials
import Glibc

/// A recording's format and length, for listings: libsndfile's view (`AudioFileInfo`) for what
/// it reads, FFmpeg's for MPEG-4 (M4A), whose length is the sum of its packets' durations — so a
/// fragmented file cut short by a crash still reports what it holds — or the stream's duration
/// when that is shorter: a standard file's, from its edit list, leaves out the encoder's priming.
public struct RecordingProbe: Sendable, Hashable {
    /// "wav", "flac", "opus", "ogg", "mp3", "m4a"…
    public var format: String
    public var sampleRate: Int
    public var channels: Int
    /// Seconds; nil when unknown.
    public var duration: Double?

    /// nil when the file is not sound either library reads.
    public init?(_ url: URL) {
        if let type = try? AudioContentType.of(url), type == "audio/mp4" {
            guard let probe = RecordingProbe.mpeg4(url) else { return nil }
            self = probe
            return
        }
        guard let info = try? AudioFileInfo(contentsOf: url) else { return nil }
        format = info.fileExtension
        sampleRate = info.sampleRate
        channels = info.channels
        duration = info.duration
    }

    private init(format: String, sampleRate: Int, channels: Int, duration: Double?) {
        self.format = format
        self.sampleRate = sampleRate
        self.channels = channels
        self.duration = duration
    }

    private static func mpeg4(_ url: URL) -> RecordingProbe? {
        var context: UnsafeMutablePointer<AVFormatContext>?
        guard avformat_open_input(&context, url.path, nil, nil) >= 0, let format = context else { return nil }
        defer { avformat_close_input(&context) }
        guard avformat_find_stream_info(format, nil) >= 0 else { return nil }
        let index = av_find_best_stream(format, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        guard index >= 0, let stream = format.pointee.streams[Int(index)], let parameters = stream.pointee.codecpar else { return nil }
        guard let packet = av_packet_alloc() else { return nil }
        var packetPointer: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&packetPointer) }
        var ticks: Int64 = 0
        while av_read_frame(format, packet) >= 0 {
            if packet.pointee.stream_index == index { ticks += packet.pointee.duration }
            av_packet_unref(packet)
        }
        let base = stream.pointee.time_base
        if stream.pointee.duration > 0 { ticks = min(ticks, stream.pointee.duration) }     // AV_NOPTS_VALUE is negative
        let duration = base.den > 0 ? Double(ticks) * Double(base.num) / Double(base.den) : nil
        return RecordingProbe(format: "m4a", sampleRate: Int(parameters.pointee.sample_rate),
                              channels: Int(parameters.pointee.ch_layout.nb_channels), duration: duration)
    }
}
