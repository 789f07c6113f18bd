import CFFmpeg
import CSndFile
import Foundation
import XCTest
import SFX
import SFXCardSupport

/// Signals, the virtual card set up to capture them, and decoders for what the recorder wrote.
enum Signal {
    /// A sine of `amplitude` (peak, linear) at `frequency`, `channels` identical channels,
    /// quantised to k / 32768 so that 16-bit files hold it exactly.
    static func sine(frequency: Double, amplitude: Double, seconds: Double, channels: Int = 1, rate: Int = 48_000) -> [Float] {
        let frames = Int(seconds * Double(rate))
        var samples: [Float] = []
        samples.reserveCapacity(frames * channels)
        for n in 0..<frames {
            let x = quantise(amplitude * sin(2 * Double.pi * frequency * Double(n) / Double(rate)))
            for _ in 0..<channels { samples.append(x) }
        }
        return samples
    }

    /// Two tones and a slow sweep, different on each channel: something a lossy codec must
    /// keep in shape, and where any shift or gap shows.
    static func music(seconds: Double, channels: Int, rate: Int = 48_000) -> [Float] {
        let frames = Int(seconds * Double(rate))
        var samples: [Float] = []
        samples.reserveCapacity(frames * channels)
        for n in 0..<frames {
            let t = Double(n) / Double(rate)
            for c in 0..<channels {
                let x = 0.3 * sin(2 * .pi * (440 + 110 * Double(c)) * t) + 0.2 * sin(2 * .pi * 1_000 * t + Double(c))
                    + 0.1 * sin(2 * .pi * (200 + 300 * t) * t)
                samples.append(quantise(x))
            }
        }
        return samples
    }

    static func quantise(_ x: Double) -> Float { Float((x * 32_768).rounded()) / 32_768 }
}

/// A current virtual card (in a fresh private directory) whose capture plays `samples`, then silence.
func cardCapturing(_ samples: [Float], channels: Int, rate: Int = 48_000) throws -> VirtualCard {
    let directory = try VirtualCard().directory
    let url = directory.appending(path: "source.wav")
    try WAVAudio(sampleRate: rate, channels: channels, samples: samples).write(to: url)
    let card = try VirtualCard(directory: directory, captureSource: url)
    card.makeCurrent()
    return card
}

/// Settings that record from `card` to `name` in its directory.
func settings(_ format: RecordingFormat, card: VirtualCard, channels: Int, name: String? = nil) -> RecorderSettings {
    var settings = RecorderSettings(format: format)
    settings.device = card.pcmName
    settings.channels = channels
    settings.url = card.directory.appending(path: name ?? "take.\(format.fileExtension)")
    return settings
}

/// A file decoded to interleaved float: libsndfile for what it reads.
struct Decoded {
    var sampleRate: Int
    var channels: Int
    var samples: [Float]
    var frames: Int { samples.count / max(channels, 1) }

    static func soundFile(_ url: URL) throws -> Decoded {
        var info = SF_INFO()
        guard let file = sf_open(url.path, Int32(SFM_READ), &info) else {
            throw CardError("libsndfile cannot read \(url.path): \(String(cString: sf_strerror(nil)))")
        }
        defer { sf_close(file) }
        var samples: [Float] = []
        var block = [Float](repeating: 0, count: 4_096 * Int(info.channels))
        while true {
            let n = sf_readf_float(file, &block, 4_096)
            if n <= 0 { break }
            samples += block.prefix(Int(n) * Int(info.channels))
        }
        return Decoded(sampleRate: Int(info.samplerate), channels: Int(info.channels), samples: samples)
    }

    /// An MPEG-4 file decoded with libavformat and libavcodec directly (planar or packed float out).
    static func mpeg4(_ url: URL) throws -> Decoded {
        var context: UnsafeMutablePointer<AVFormatContext>?
        guard avformat_open_input(&context, url.path, nil, nil) >= 0, let format = context else { throw CardError("FFmpeg cannot open \(url.path)") }
        defer { avformat_close_input(&context) }
        guard avformat_find_stream_info(format, nil) >= 0 else { throw CardError("no stream info in \(url.path)") }
        let index = av_find_best_stream(format, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        guard index >= 0, let stream = format.pointee.streams[Int(index)] else { throw CardError("no audio in \(url.path)") }
        guard let decoder = avcodec_find_decoder(stream.pointee.codecpar.pointee.codec_id) else { throw CardError("no decoder") }
        var codec = avcodec_alloc_context3(decoder)
        defer { avcodec_free_context(&codec) }
        avcodec_parameters_to_context(codec, stream.pointee.codecpar)
        guard avcodec_open2(codec, decoder, nil) >= 0 else { throw CardError("decoder does not open") }
        var packet = av_packet_alloc()
        var frame = av_frame_alloc()
        defer { av_packet_free(&packet); av_frame_free(&frame) }
        let channels = Int(codec!.pointee.ch_layout.nb_channels)
        var samples: [Float] = []
        func receive() {
            while avcodec_receive_frame(codec, frame) >= 0 {
                let f = frame!.pointee
                let n = Int(f.nb_samples)
                let planar = av_sample_fmt_is_planar(AVSampleFormat(rawValue: f.format)) != 0
                for i in 0..<n {
                    for c in 0..<channels {
                        let plane = UnsafeRawPointer(f.extended_data[planar ? c : 0]!).assumingMemoryBound(to: Float.self)
                        samples.append(planar ? plane[i] : plane[i * channels + c])
                    }
                }
            }
        }
        while av_read_frame(format, packet) >= 0 {
            if packet!.pointee.stream_index == index, avcodec_send_packet(codec, packet) >= 0 { receive() }
            av_packet_unref(packet)
        }
        avcodec_send_packet(codec, nil)
        receive()
        return Decoded(sampleRate: Int(codec!.pointee.sample_rate), channels: channels, samples: samples)
    }

    static func any(_ url: URL) throws -> Decoded {
        url.pathExtension == "m4a" ? try mpeg4(url) : try soundFile(url)
    }
}

/// How close a decoded lossy signal is to the original, after finding the codec's delay.
struct Closeness {
    /// Frames the decoded signal lags (positive) the original.
    var delay: Int
    /// Normalised correlation over the compared span (1 is identical in shape).
    var correlation: Double
    /// Signal-to-noise ratio of decoded vs original over the span, dB.
    var snr: Double

    /// Compares channel 0 of `decoded` with `original` over `span` frames from `start`, trying
    /// every delay from -`search` to +`search` frames.
    static func measure(_ original: [Float], _ decoded: [Float], channels: Int, start: Int, span: Int, search: Int = 4_096) -> Closeness {
        func sample(_ x: [Float], _ frame: Int) -> Double { frame >= 0 && frame * channels < x.count ? Double(x[frame * channels]) : 0 }
        var best = (delay: 0, correlation: -2.0)
        for delay in stride(from: -search, through: search, by: 1) {
            var xy = 0.0, xx = 0.0, yy = 0.0
            for n in stride(from: start, to: start + span, by: 16) {
                let x = sample(original, n), y = sample(decoded, n + delay)
                xy += x * y; xx += x * x; yy += y * y
            }
            let r = xy / max(sqrt(xx * yy), 1e-30)
            if r > best.correlation { best = (delay, r) }
        }
        var signal = 0.0, noise = 0.0
        for n in start..<(start + span) {
            let x = sample(original, n), y = sample(decoded, n + best.delay)
            signal += x * x; noise += (x - y) * (x - y)
        }
        return Closeness(delay: best.delay, correlation: best.correlation, snr: 10 * log10(signal / max(noise, 1e-30)))
    }
}

/// 20·log10(x): the expected dBFS of a linear level, computed here independently of `LevelMeter`.
func decibels(_ x: Double) -> Double { 20 * log10(x) }

/// Asserts that `actual` equals `expected` sample for sample, reporting the count and the first
/// difference instead of both arrays.
func assertSamplesEqual(_ actual: [Float], _ expected: [Float], _ message: String = "", file: StaticString = #filePath, line: UInt = #line) {
    if actual.count != expected.count {
        XCTFail("\(actual.count) samples, expected \(expected.count) \(message)", file: file, line: line)
    }
    if let i = (0..<min(actual.count, expected.count)).first(where: { actual[$0] != expected[$0] }) {
        XCTFail("sample \(i) is \(actual[i]), expected \(expected[i]) \(message)", file: file, line: line)
    }
}
