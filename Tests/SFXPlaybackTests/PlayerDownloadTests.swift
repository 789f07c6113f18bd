// Streaming from a URL, against Tests/http/stream-server.py on 127.0.0.1 (an ephemeral port it
// reports): a player starts while the body is still arriving, plays it through, and every failure
// is one line of its own kind — DNS, TLS, HTTP status, a stalled or dropped transfer.
import Foundation
import Synchronization
import XCTest
import SFXCore
import SFXCardSupport
import SFXMedia
import SFX
import SFXTestSupport
@testable import SFXPlayback

extension LocalHTTPServer {
    /// The stream server's `name` served in `mode` (normal, endless, stall…: stream-server.py).
    func url(_ mode: String, _ name: String) -> URL { url("\(mode)/\(name)") }
}

final class PlayerDownloadTests: XCTestCase {
    var setup: EngineOnCard!
    var server: LocalHTTPServer!   // Tests/http/stream-server.py, serving the card's directory; stopped when released
    let seconds = 3.0

    override func setUpWithError() throws {
        setup = try EngineOnCard()
        let frames = Int(seconds * 48_000)
        let samples = (0..<frames).map { PlayerTests.signal($0) }
        try WAVAudio(sampleRate: 48_000, channels: 1, samples: samples).write(to: setup.card.directory.appending(path: "tune.wav"))
        server = try LocalHTTPServer(script: "stream-server.py", serving: setup.card.directory)
    }

    override func tearDown() {
        server = nil
        setup.close()
        setup = nil
    }

    func finished(_ player: Player) -> () -> Bool? {
        let result = Mutex<Bool?>(nil)
        player.didFinish = { ok in result.withLock { $0 = ok } }
        return { result.withLock { $0 } }
    }

    func reason(_ body: () throws -> Player) -> DownloadError.Reason? {
        do {
            _ = try body()
            XCTFail("no error")
        } catch let error as DownloadError {
            XCTAssertFalse(error.description.contains("\n"), "one line")
            XCTAssertTrue(error.description.hasPrefix(error.url.absoluteString), "names the URL: \(error)")
            return error.reason
        } catch {
            XCTFail("not a DownloadError: \(error)")
        }
        return nil
    }

    func testAURLPlaysWhileItDownloadsToItsEndAndReportsProgress() throws {
        let player = try setup.engine.makePlayer(url: server.url("slow", "tune.wav"))
        let progress = try XCTUnwrap(player.downloadProgress)
        XCTAssertFalse(progress.finished, "it starts before the download ends")
        XCTAssertEqual(progress.expected, 58 + 4 * 144_000, "the Content-Length of the 32-bit float WAV")
        XCTAssertEqual(player.duration, seconds, accuracy: 1e-6)
        let done = finished(player)
        player.pan = -1
        try player.play()
        XCTAssertTrue(eventually(timeout: 20) { done() != nil })
        XCTAssertEqual(done(), true)
        XCTAssertEqual(player.downloadProgress?.fraction, 1)
        setup.engine.close()
        // Should the download fall behind, the voice plays silence and goes on where it was: the
        // sound without its silences (the signal is never exactly 0) is the file, every frame once.
        let heard = try setup.recording().channel(0).filter { $0 != 0 }
        XCTAssertEqual(heard.count, 144_000, "all of it, once")
        for k in 20..<min(heard.count, 144_000) where heard[k] != PlayerTests.signal(k) {
            return XCTFail("frame \(k) of the stream differs from the file's")
        }
    }

    func testHTTPStatusDNSAndTLSFailuresAreOneLineEach() {
        let status = reason { try setup.engine.makePlayer(url: server.url("missing", "tune.wav")) }
        guard case .httpStatus(404, _) = status else { return XCTFail("\(String(describing: status))") }
        XCTAssertEqual(reason { try setup.engine.makePlayer(url: URL(string: "http://sfx-test.invalid/tune.wav")!) }, .hostNotFound)
        let tls = reason { try setup.engine.makePlayer(url: URL(string: "https://127.0.0.1:\(server.port)/normal/tune.wav")!) }
        guard case .tls = tls else { return XCTFail("a plain-HTTP server answering https: \(String(describing: tls))") }
    }

    func testAStalledServerEndsThePlayUnsuccessfullyWithoutBlockingTheEngine() throws {
        let player = try setup.engine.makePlayer(url: server.url("stall", "tune.wav"), stallTimeout: 1)
        let done = finished(player)
        try player.play()
        let tock = try setup.engine.systemSound(named: "tock")
        let outcome = Mutex<PlayOutcome?>(nil)
        setup.engine.play(tock) { result in outcome.withLock { $0 = result } }
        XCTAssertTrue(eventually { outcome.withLock { $0 } == .finished }, "effects go on")
        XCTAssertTrue(eventually(timeout: 20) { done() != nil })
        XCTAssertEqual(done(), false)
        guard case .stalled = (player.error as? DownloadError)?.reason else { return XCTFail("\(String(describing: player.error))") }
    }

    func testADroppedConnectionIsATruncatedDownload() throws {
        let player = try setup.engine.makePlayer(url: server.url("drop", "tune.wav"), stallTimeout: 2)
        let done = finished(player)
        try player.play()
        XCTAssertTrue(eventually(timeout: 20) { done() != nil })
        XCTAssertEqual(done(), false)
        let reason = (player.error as? DownloadError)?.reason
        XCTAssertTrue(reason == .dropped || { if case .truncated = reason { true } else { false } }(), "\(String(describing: player.error))")
    }

    // MARK: Caps on a body without end

    /// Anonymous resident memory (RssAnon) of this process, in kB.
    func anonymousMemory() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("RssAnon:") })
        return try XCTUnwrap(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    /// An endless chunked body on loopback stops at the byte cap with its own error, and memory
    /// does not grow with it: the body goes from libcurl's buffer to the file. (Through
    /// URLSession's delegate queue, RssAnon grew about 75 MB per GB downloaded.)
    func testAnEndlessBodyStopsAtTheByteCapAndMemoryStaysFlat() throws {
        let cap: Int64 = 256 << 20
        // A first, small transfer: what libcurl and TLS set up once is not counted.
        _ = try HTTPDownload(url: server.url("normal", "tune.wav")).waitForData(1 << 30, timeout: 20)
        let before = try anonymousMemory()
        let download = try HTTPDownload(url: server.url("endless", "tune.wav"), maximumBytes: cap)
        XCTAssertTrue(eventually(timeout: 120) { download.progress.finished }, "the download stops")
        let grown = try anonymousMemory() - before
        guard case .tooLarge(let limit) = download.error?.reason else { return XCTFail("\(String(describing: download.error))") }
        XCTAssertEqual(limit, cap)
        XCTAssertEqual(download.progress.received, cap, "every byte up to the cap is kept")
        let line = download.error!.description
        XCTAssertTrue(line.contains("256 MiB") && line.contains("[http] max-download"), line)
        XCTAssertFalse(line.contains("\n"))
        XCTAssertLessThan(grown, 16_000, "RssAnon grew \(grown) kB over a \(cap >> 20) MiB download")
        print("RssAnon grew \(grown) kB over a \(cap >> 20) MiB download")
    }

    /// A player on the endless body plays what it took and ends, unsuccessfully, at the byte cap.
    func testAPlayerOfAnEndlessBodyEndsAtTheByteCap() throws {
        let player = try setup.engine.makePlayer(url: server.url("paced", "tune.wav"),
                                                 limits: DownloadLimits(maximumBytes: 300 << 10))
        let done = finished(player)
        try player.play()
        XCTAssertTrue(eventually(timeout: 30) { done() != nil })
        XCTAssertEqual(done(), false)
        guard case .tooLarge = (player.error as? DownloadError)?.reason else { return XCTFail("\(String(describing: player.error))") }
    }

    /// Past the duration cap decoding stops with an error that names the setting, and so does
    /// the download, well before its byte cap.
    func testAnEndlessBodyStopsAtTheDurationCap() throws {
        let player = try setup.engine.makePlayer(url: server.url("paced", "tune.wav"),
                                                 limits: DownloadLimits(maximumBytes: 1 << 40, maximumDuration: 1))
        let done = finished(player)
        try player.play()
        XCTAssertTrue(eventually(timeout: 30) { done() != nil })
        XCTAssertEqual(done(), false)
        let error = try XCTUnwrap(player.error as? MediaError, "\(String(describing: player.error))")
        XCTAssertTrue(error.description.contains("1 s") && error.description.contains("[http] max-duration"), error.description)
        XCTAssertTrue(eventually(timeout: 20) { player.downloadProgress?.finished == true }, "the download stops too")
    }

    func testAHeaderLineOver100KBIsToldAsSuch() throws {
        let download = try HTTPDownload(url: server.url("headers", "tune.wav"))
        XCTAssertThrowsError(try download.waitForData(1, timeout: 20))
        XCTAssertEqual(download.error?.reason, .headerTooLarge)
        let line = download.error?.description ?? ""
        XCTAssertTrue(line.contains("header line longer than") && !line.contains("Out of memory;"), line)
    }
}
