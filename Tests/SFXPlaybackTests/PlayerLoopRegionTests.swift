// Loop points inside a streamed file, on the virtual card: the intro plays once, the region
// 1 + numberOfLoops times, then the tail, and the frames around each seam in the card's output
// are the file's own frames end→start (sample-exact, so no click). Expectations come from the
// samples written to the file, or for a lossy file from sfx's whole-file decode of it.
import Foundation
import Synchronization
import XCTest
import SFXCore
import SFXCardSupport
@testable import SFXMedia
import SFX
@testable import SFXPlayback

final class PlayerLoopRegionTests: XCTestCase {
    func writeFile(_ setup: EngineOnCard, seconds: Double, name: String = "long.wav") throws -> URL {
        let url = setup.card.directory.appending(path: name)
        try WAVAudio(sampleRate: 48_000, channels: 1, samples: (0..<Int(seconds * 48_000)).map { PlayerTests.signal($0) }).write(to: url)
        return url
    }

    /// The left channel of the card's recording from the first sound on.
    func heard(_ setup: EngineOnCard) throws -> [Float] {
        let left = try setup.recording().channel(0)
        guard let onset = left.firstIndex(where: { abs($0) > 1e-7 }) else { return [] }
        return Array(left[onset...])
    }

    /// Runs ffmpeg (Debian's, as the fixtures' tool) and fails the test if it does.
    func ffmpeg(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/ffmpeg")
        process.arguments = ["-loglevel", "error", "-y"] + arguments
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "ffmpeg \(arguments.joined(separator: " "))")
    }

    /// Plays `player` to its end and returns the card's left channel from the onset.
    func playToEnd(_ player: Player, _ setup: EngineOnCard) throws -> [Float] {
        let result = Mutex<Bool?>(nil)
        player.didFinish = { ok in result.withLock { $0 = ok } }
        let done = { result.withLock { $0 } }
        try player.play()
        XCTAssertTrue(eventually(timeout: 20) { done() != nil })
        XCTAssertEqual(done(), true)
        setup.engine.close()
        return try heard(setup)
    }

    /// The intro, the region `1 + loops` times, then the tail, of `frames`.
    func expected(_ frames: [Float], region: Range<Int>, loops: Int) -> [Float] {
        var out = Array(frames[..<region.upperBound])
        for _ in 0..<loops { out += frames[region] }
        return out + frames[region.upperBound...]
    }

    func check(_ heard: [Float], _ expected: [Float], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertGreaterThanOrEqual(heard.count, expected.count, what, file: file, line: line)
        // From frame 20, past the 14-frame start fade.
        for k in 20..<min(heard.count, expected.count) where heard[k] != expected[k] {
            return XCTFail("\(what): frame \(k): \(heard[k]) instead of \(expected[k])", file: file, line: line)
        }
        XCTAssertTrue(heard[min(heard.count, expected.count)...].allSatisfy { $0 == 0 }, "\(what): nothing after the tail",
                      file: file, line: line)
    }

    func testAnAPISetRegionLoopsSampleExactlyBetweenIntroAndTail() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let url = try writeFile(setup, seconds: 0.5)
        let player = try setup.engine.makePlayer(contentsOf: url)
        XCTAssertNil(player.loopRegion, "a WAV file has no loop tags")
        player.loopRegion = 4_000..<10_000
        player.numberOfLoops = 2
        let file = (0..<24_000).map { PlayerTests.signal($0) }
        check(try playToEnd(player, setup), expected(file, region: 4_000..<10_000, loops: 2), "region 4000..<10000 × 3")
    }

    /// Past the region's end, currentTime goes back into the region (not past it, nor into the
    /// intro as whole passes would put it), as the frames heard do.
    func testCurrentTimeStaysInTheRegionWhileItLoops() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let player = try setup.engine.makePlayer(contentsOf: try writeFile(setup, seconds: 0.5))
        try player.setLoopRegion(seconds: 0.1..<0.2)
        player.numberOfLoops = -1
        try player.play()
        // After a second the play has been round the 0.1 s region several times.
        usleep(1_000_000)
        XCTAssertTrue(player.isPlaying)
        var readings: [Double] = []
        for _ in 0..<20 {
            readings.append(player.currentTime)
            usleep(20_000)
        }
        player.stop()
        XCTAssertTrue(readings.allSatisfy { (0.1...0.2).contains($0) }, "\(readings)")
        XCTAssertGreaterThan(Set(readings).count, 3, "the time moves: \(readings)")
        let stopped = player.currentTime
        XCTAssertTrue((0.1...0.2).contains(stopped), "stopped in the region: \(stopped)")
        usleep(50_000)
        XCTAssertEqual(player.currentTime, stopped, "and held there")
    }

    func testARegionInSecondsAndBadRegionsAreRefused() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let url = try writeFile(setup, seconds: 0.5)
        let player = try setup.engine.makePlayer(contentsOf: url)
        try player.setLoopRegion(seconds: 0.125..<0.25)
        XCTAssertEqual(player.loopRegion, 6_000..<12_000)
        XCTAssertThrowsError(try player.setLoopRegion(0..<24_001)) { error in
            XCTAssertTrue("\(error)".contains("loop region"), "\(error)")
        }
        XCTAssertThrowsError(try player.setLoopRegion(seconds: 0.3..<0.3))
        player.loopRegion = -5..<10
        XCTAssertEqual(player.loopRegion, 6_000..<12_000, "an invalid region set as a property is ignored")
        player.numberOfLoops = 1
        let file = (0..<24_000).map { PlayerTests.signal($0) }
        check(try playToEnd(player, setup), expected(file, region: 6_000..<12_000, loops: 1), "region 0.125..<0.25 s × 2")
    }

    /// An Ogg Vorbis file tagged LOOPSTART/LOOPLENGTH (Vorbis comments, as games ship them) loops
    /// at the tags' frames with no API call, the seam exact against the file's own decode.
    func testOggVorbisLoopTagsLoopSampleExactly() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let wav = try writeFile(setup, seconds: 1, name: "music.wav")
        let ogg = setup.card.directory.appending(path: "music.ogg")
        try ffmpeg(["-i", wav.path, "-c:a", "libvorbis", "-metadata", "LOOPSTART=12000", "-metadata", "LOOPLENGTH=24000", ogg.path])
        let player = try setup.engine.makePlayer(contentsOf: ogg)
        XCTAssertEqual(player.loopRegion, 12_000..<36_000)
        player.numberOfLoops = 2
        let cue = try AudioDecoder().decode(contentsOf: ogg)
        let channels = cue.format.channels
        let decoded = (0..<cue.frameCount).map { cue.samples[$0 * channels] }
        check(try playToEnd(player, setup), expected(decoded, region: 12_000..<36_000, loops: 2), "Ogg LOOPSTART=12000 LOOPLENGTH=24000 × 3")
    }

    /// MP3 (ID3 TXXX) and FLAC carry the tags too, LOOPEND in place of LOOPLENGTH.
    func testLoopTagsOfMP3AndFLAC() throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "sfx-loop-tags-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appending(path: "a.wav")
        try WAVAudio(sampleRate: 48_000, channels: 1, samples: (0..<48_000).map { PlayerTests.signal($0) }).write(to: wav)
        XCTAssertNil(LoopTags.region(of: RawFilePath(wav)))
        let mp3 = directory.appending(path: "a.mp3")
        try ffmpeg(["-i", wav.path, "-metadata", "LOOPSTART=1000", "-metadata", "LOOPEND=30000", mp3.path])
        XCTAssertEqual(LoopTags.region(of: RawFilePath(mp3)), 1_000..<30_000)
        let flac = directory.appending(path: "a.flac")
        try ffmpeg(["-i", wav.path, "-metadata", "LOOPSTART=500", "-metadata", "LOOPLENGTH=100", flac.path])
        XCTAssertEqual(LoopTags.region(of: RawFilePath(flac)), 500..<600)
        // The texts as found: a start alone loops to the end; nonsense gives none.
        XCTAssertEqual(LoopTags.region(start: "10", length: nil, end: nil, frames: 100), 10..<100)
        XCTAssertEqual(LoopTags.region(start: "10", length: "1000", end: nil, frames: 100), 10..<100)
        XCTAssertNil(LoopTags.region(start: "x", length: "10", end: nil, frames: 100))
        XCTAssertNil(LoopTags.region(start: "100", length: "10", end: nil, frames: 100))
        XCTAssertNil(LoopTags.region(start: "5", length: "0", end: "3", frames: nil))
    }
}
