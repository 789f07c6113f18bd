// A Player's meters (AVAudioPlayer's isMeteringEnabled, updateMeters, averagePower and
// peakPower) on the virtual card: the levels read while it plays are those of the part of the
// file at currentTime. The file's parts and their levels are made here.
import Foundation
import Synchronization
import XCTest
import SFXCore
import SFXCardSupport
import SFXMedia
import SFX
@testable import SFXPlayback

final class PlayerMeteringTests: XCTestCase {
    /// One second of a sine at 0.5 (peak −6.02 dBFS, RMS −9.03), then one at 0.05 (−26.02, −29.03).
    func testTheMetersFollowThePartBeingPlayed() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let rate = 48_000
        let samples = (0..<2 * rate).map { i in Float((i < rate ? 0.5 : 0.05) * sin(2 * Double.pi * 1_000 * Double(i) / Double(rate))) }
        let url = setup.card.directory.appending(path: "two-levels.wav")
        try WAVAudio(sampleRate: rate, channels: 1, samples: samples).write(to: url)
        let player = try setup.engine.makePlayer(contentsOf: url)
        XCTAssertTrue(player.isDurationKnown)
        XCTAssertEqual(player.duration, 2, accuracy: 1e-9)
        XCTAssertEqual(player.averagePower(forChannel: 0), Player.meterFloor, "nothing read yet")
        player.updateMeters()
        XCTAssertEqual(player.peakPower(forChannel: 0), Player.meterFloor, "metering is off by default")
        player.isMeteringEnabled = true
        let done = Mutex<Bool?>(nil)
        player.didFinish = { ok in done.withLock { $0 = ok } }
        try player.play()
        var readings: [(time: Double, average: Float, peak: Float)] = []
        while done.withLock({ $0 }) == nil {
            player.updateMeters()
            let time = player.currentTime
            readings.append((time, player.averagePower(forChannel: 0), player.peakPower(forChannel: 0)))
            usleep(20_000)
        }
        XCTAssertEqual(done.withLock { $0 }, true)
        // Readings well inside each part (a reading spans about 21 ms before currentTime).
        let loud = readings.filter { (0.2...0.8).contains($0.time) }, quiet = readings.filter { (1.2...1.8).contains($0.time) }
        XCTAssertGreaterThan(loud.count, 5, "\(readings.count) readings")
        XCTAssertGreaterThan(quiet.count, 5, "\(readings.count) readings")
        for reading in loud {
            XCTAssertEqual(reading.average, -9.03, accuracy: 0.1, "at \(reading.time) s")
            XCTAssertEqual(reading.peak, -6.02, accuracy: 0.1, "at \(reading.time) s")
        }
        for reading in quiet {
            XCTAssertEqual(reading.average, -29.03, accuracy: 0.1, "at \(reading.time) s")
            XCTAssertEqual(reading.peak, -26.02, accuracy: 0.1, "at \(reading.time) s")
        }
        player.isMeteringEnabled = false
        XCTAssertEqual(player.averagePower(forChannel: 0), Player.meterFloor)
    }

    /// `progress()` yields currentTime while playing and finishes at the end.
    func testProgressFollowsThePlayToItsEnd() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let url = setup.card.directory.appending(path: "short.wav")
        try WAVAudio(sampleRate: 48_000, channels: 1, samples: [Float](repeating: 0.1, count: 24_000)).write(to: url)
        let player = try setup.engine.makePlayer(contentsOf: url)
        try player.play()
        let times = Mutex<[Double]>([])
        let done = expectation(description: "progress")
        Task { for await t in player.progress(every: .milliseconds(20)) { times.withLock { $0.append(t) } }; done.fulfill() }
        wait(for: [done], timeout: 10)
        let all = times.withLock { $0 }
        XCTAssertGreaterThan(all.count, 5, "\(all)")
        XCTAssertFalse(player.isPlaying)
        XCTAssertEqual(all, all.sorted(), "no step back")
        XCTAssertGreaterThan(all.last ?? 0, 0.3, "readings while it played, none after: \(all)")
    }
}
