// M4A recordings through the real path (the virtual card's capture of a known signal, the
// recorder, its writer thread): a standard MPEG-4 file at stop, or the fragmented file kept.
// The files are checked with a box reader of the test's own (MP4Boxes), with mutagen, and
// decoded with libavformat.
import Foundation
import XCTest
import SFX
import SFXCardSupport
import SFXMedia

final class StandardM4ATests: XCTestCase {
    /// 2.5 s at 48 kHz: 120000 frames, which with the 1024 frames of priming fill 118 AAC frames
    /// and 192 frames of a 119th, so the end of the last packet matters.
    static let seconds = 2.5
    static let frames = 120_000
    static let priming = 1_024

    /// A stopped M4A is a standard file: `moov` (with the durations) before the one `mdat`, no
    /// `moof`; `mvhd` says the recorded length, the edit list skips the encoder's priming, and
    /// mutagen reads the length within 25 ms. Its `mdat` holds the fragmented recording's coded
    /// audio byte for byte (packets copied, not re-encoded), and libavformat decodes it to the
    /// fragmented file's samples without the priming: the same sound, starting at the
    /// recording's first frame.
    func testAStoppedM4AIsAStandardFileWithTheRecordedLength() throws {
        let source = Signal.music(seconds: 4, channels: 1)
        let card = try cardCapturing(source, channels: 1)
        defer { try? card.remove() }
        // The same capture twice (the card plays its input from the start at each open, and the
        // encoder is deterministic): kept fragmented, and finished as a standard file.
        let fragmentedURL = try record(card, "fragmented.m4a", container: .fragmented)
        let standardURL = try record(card, "standard.m4a", container: .standard)

        let file = try MP4Boxes(standardURL)
        print("standard M4A boxes: \(file.order.joined(separator: " "))")
        XCTAssertFalse(file.order.contains("moof"), "\(file.order)")
        XCTAssertFalse(file.order.contains("mfra"), "\(file.order)")
        XCTAssertEqual(file.order.filter { $0 == "mdat" }.count, 1, "\(file.order)")
        let moov = try XCTUnwrap(file.order.firstIndex(of: "moov"), "\(file.order)")
        let mdat = try XCTUnwrap(file.order.firstIndex(of: "mdat"), "\(file.order)")
        XCTAssertLessThan(moov, mdat, "moov before mdat (faststart): \(file.order)")
        XCTAssertNil(file.box("moov", "mvex"), "no movie extends box: not fragmented")

        let movie = file.timing(try XCTUnwrap(file.box("moov", "mvhd")))
        let movieSeconds = Double(movie.duration) / Double(movie.timescale)
        XCTAssertEqual(movieSeconds, Self.seconds, accuracy: 1_024.0 / 48_000, "mvhd: \(movie)")
        let media = file.timing(try XCTUnwrap(file.box("moov", "trak", "mdia", "mdhd")))
        XCTAssertEqual(media.timescale, 48_000)
        XCTAssertEqual(media.duration, Int64(Self.frames + Self.priming), "mdhd: the media, priming included")
        let edits = file.edits(try XCTUnwrap(file.box("moov", "trak", "edts", "elst"), "an edit list"))
        XCTAssertEqual(edits.count, 1, "\(edits)")
        XCTAssertEqual(edits.first?.mediaTime, Int64(Self.priming), "the edit starts after the priming")
        XCTAssertEqual(Double(edits.first?.duration ?? 0) / Double(movie.timescale), Self.seconds, accuracy: 0.002, "\(edits)")

        let mutagen = try mutagenLength(standardURL)
        print("standard M4A: mvhd \(movie.duration)/\(movie.timescale) = \(movieSeconds) s, mdhd \(media.duration)/\(media.timescale), "
              + "elst \(edits), mutagen \(mutagen) s")
        XCTAssertEqual(mutagen, Self.seconds, accuracy: 0.025)

        let fragmentedFile = try MP4Boxes(fragmentedURL)
        XCTAssertTrue(fragmentedFile.mediaData == file.mediaData,
                      "the coded audio copied: \(fragmentedFile.mediaData.count) bytes in fragments, \(file.mediaData.count) in the standard mdat")

        let fragmented = try Decoded.mpeg4(fragmentedURL)
        let standard = try Decoded.mpeg4(standardURL)
        XCTAssertEqual(standard.sampleRate, 48_000)
        XCTAssertEqual(standard.channels, 1)
        XCTAssertEqual(standard.frames, fragmented.frames - Self.priming, "the priming skipped, nothing else")
        let expected = Array(fragmented.samples.dropFirst(Self.priming))
        let difference = zip(standard.samples, expected).map { abs($0 - $1) }.max() ?? 1
        print("standard M4A: \(standard.frames) frames decoded, fragmented \(fragmented.frames); largest difference \(difference)")
        XCTAssertLessThanOrEqual(difference, 1e-6, "the same decoded samples")
        let closeness = Closeness.measure(source, standard.samples, channels: 1, start: 24_000, span: 48_000)
        let fragmentedCloseness = Closeness.measure(source, fragmented.samples, channels: 1, start: 24_000, span: 48_000)
        print("standard M4A: delay \(closeness.delay) frames, SNR \(closeness.snr) dB; fragmented: delay \(fragmentedCloseness.delay)")
        XCTAssertEqual(closeness.delay, 0, "the decoded audio starts at the recording's first frame")
        XCTAssertEqual(fragmentedCloseness.delay, Self.priming)
        XCTAssertGreaterThan(closeness.snr, 25)

        var st = stat()
        XCTAssertEqual(lstat(standardURL.path, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600, "the recording's mode")
        let left = try FileManager.default.contentsOfDirectory(atPath: card.directory.path).filter { $0.hasPrefix(".") }
        XCTAssertEqual(left, [], "no temporary file left beside the recording")
        let probe = try XCTUnwrap(RecordingProbe(standardURL))
        XCTAssertEqual(probe.format, "m4a")
        XCTAssertEqual(try XCTUnwrap(probe.duration), Self.seconds, accuracy: 1e-9, "what `sfx recordings` lists: the edit's length, without the priming")
    }

    /// `.fragmented` keeps today's file: an empty `moov` first (`mvhd` duration 0, a movie
    /// extends box), then `moof` + `mdat` pairs, one every half second, and no edit list;
    /// mutagen reads 0 s and the decoder outputs the 1024 frames of priming first.
    func testFragmentedKeepsTheFragmentedFile() throws {
        let source = Signal.music(seconds: 4, channels: 1)
        let card = try cardCapturing(source, channels: 1)
        defer { try? card.remove() }
        let url = try record(card, "fragmented.m4a", container: .fragmented)
        let file = try MP4Boxes(url)
        XCTAssertEqual(Array(file.order.prefix(2)), ["ftyp", "moov"], "\(file.order)")
        let fragments = file.order.filter { $0 == "moof" }.count
        XCTAssertGreaterThanOrEqual(fragments, 5, "a fragment every half second: \(file.order)")
        XCTAssertEqual(file.order.filter { $0 == "mdat" }.count, fragments, "\(file.order)")
        XCTAssertNotNil(file.box("moov", "mvex"))
        XCTAssertEqual(file.timing(try XCTUnwrap(file.box("moov", "mvhd"))).duration, 0)
        XCTAssertNil(file.box("moov", "trak", "edts"))
        XCTAssertEqual(try mutagenLength(url), 0)
        let decoded = try Decoded.mpeg4(url)
        XCTAssertEqual(Closeness.measure(source, decoded.samples, channels: 1, start: 24_000, span: 48_000).delay, Self.priming)
    }

    /// The default is the standard file, for the recorder and for `RecordingEncoding`.
    func testTheStandardFileIsTheDefault() {
        XCTAssertEqual(RecorderSettings().container, .standard)
        XCTAssertEqual(RecordingEncoding(format: .m4a).container, .standard)
    }

    /// Records `seconds` of the card's capture to `name` in its directory.
    private func record(_ card: VirtualCard, _ name: String, container: RecordingContainer) throws -> URL {
        card.makeCurrent()
        var settings = settings(.m4a, card: card, channels: 1, name: name)
        settings.container = container
        settings.maxDuration = .milliseconds(Int64(Self.seconds * 1_000))
        let recorder = try Recorder(settings: settings)
        try recorder.record()
        let url = try XCTUnwrap(settings.url)
        XCTAssertEqual(recorder.waitUntilFinished(timeout: .seconds(20)), .finished(url: url, duration: Self.seconds), name)
        return url
    }
}
