// A known signal into the virtual card's capture, recorded in every format and read back.
import Foundation
import XCTest
import SFX
import SFXCardSupport
import SFXMedia

final class RecordingFormatTests: XCTestCase {
    /// WAV: the saved file equals the captured signal sample for sample, and `maxDuration` stops
    /// it at exactly that many frames. The signal is quantised to k/32768, so 16-bit PCM holds
    /// it exactly (any other float would come back within 2^-16 of itself).
    func testWAVEqualsTheCapturedSignalAndStopsAtTheMaximum() throws {
        let source = Signal.music(seconds: 3, channels: 2)
        let card = try cardCapturing(source, channels: 2)
        defer { try? card.remove() }
        var settings = settings(.wav, card: card, channels: 2)
        settings.maxDuration = .milliseconds(1_500)
        let recorder = try Recorder(settings: settings)
        try recorder.record()
        let last = recorder.waitUntilFinished(timeout: .seconds(20))
        XCTAssertEqual(last, .finished(url: settings.url!, duration: 1.5))
        let saved = try Decoded.soundFile(settings.url!)
        XCTAssertEqual(saved.sampleRate, 48_000)
        XCTAssertEqual(saved.channels, 2)
        XCTAssertEqual(saved.frames, 72_000)
        assertSamplesEqual(saved.samples, Array(source.prefix(72_000 * 2)))
        var st = stat()
        XCTAssertEqual(lstat(settings.url!.path, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600)
    }

    /// FLAC (16-bit, lossless): sample for sample too.
    func testFLACEqualsTheCapturedSignal() throws {
        let source = Signal.music(seconds: 2, channels: 1)
        let card = try cardCapturing(source, channels: 1)
        defer { try? card.remove() }
        var settings = settings(.flac, card: card, channels: 1)
        settings.maxDuration = .seconds(1)
        let recorder = try Recorder(settings: settings)
        try recorder.record()
        XCTAssertEqual(recorder.waitUntilFinished(timeout: .seconds(20)), .finished(url: settings.url!, duration: 1))
        let saved = try Decoded.soundFile(settings.url!)
        assertSamplesEqual(saved.samples, Array(source.prefix(48_000)))
        XCTAssertEqual(try AudioContentType.of(settings.url!), "audio/flac")
    }

    /// The lossy codecs decode back close to the signal: after finding the codec's delay, the
    /// correlation and SNR over the middle second stay above what each codec gives at its
    /// default quality (measured: see `lossyTolerances`). A wrong channel, a gap, a shift that
    /// changes over time, or noise instead of the signal all fall far below them.
    func testLossyFormatsDecodeBackCloseToTheSignal() throws {
        let source = Signal.music(seconds: 3, channels: 2)
        let card = try cardCapturing(source, channels: 2)
        defer { try? card.remove() }
        for (format, tolerance) in Self.lossyTolerances {
            card.makeCurrent()
            var settings = settings(format, card: card, channels: 2)
            settings.maxDuration = .seconds(2)
            let recorder = try Recorder(settings: settings)
            try recorder.record()
            XCTAssertEqual(recorder.waitUntilFinished(timeout: .seconds(20)), .finished(url: settings.url!, duration: 2), "\(format)")
            let decoded = try Decoded.any(settings.url!)
            XCTAssertEqual(decoded.channels, 2, "\(format)")
            XCTAssertEqual(decoded.sampleRate, 48_000, "\(format)")
            let closeness = Closeness.measure(source, decoded.samples, channels: 2, start: 24_000, span: 48_000)
            print("\(format): delay \(closeness.delay) frames, correlation \(closeness.correlation), SNR \(closeness.snr) dB, \(decoded.frames) frames")
            XCTAssertGreaterThan(closeness.correlation, tolerance.correlation, "\(format)")
            XCTAssertGreaterThan(closeness.snr, tolerance.snr, "\(format)")
            XCTAssertEqual(try AudioContentType.of(settings.url!), format.mimeType, "\(format)")
        }
    }

    /// Per codec at its default quality, stereo 48 kHz: (minimum correlation, minimum SNR in dB).
    /// Measured on Debian 12's libopus 1.3, libvorbis 1.3.7, LAME 3.100 and FFmpeg 5.1's AAC
    /// encoder (64 kb/s a channel): correlation 0.9999, 0.9999, 0.9999, 0.9998 and SNR 38.7,
    /// 38.1, 39.7, 33.1 dB. The floors sit 8 dB or more below, for other encoder versions: a
    /// perceptual codec keeps tones like these to well within them, while any damage (a gap, a
    /// channel swapped, a drifting delay) takes the SNR below 10 dB. The M4A is the standard file
    /// made at stop, whose edit list skips the encoder's 1024 priming frames, so its decoded
    /// stream starts at frame 0 (StandardM4ATests checks that delay, and the fragmented file's
    /// 1024); the search would find either.
    static let lossyTolerances: [(RecordingFormat, (correlation: Double, snr: Double))] = [
        (.opus, (0.999, 30)), (.vorbis, (0.999, 30)), (.mp3, (0.999, 30)), (.m4a, (0.999, 25)),
    ]
}
