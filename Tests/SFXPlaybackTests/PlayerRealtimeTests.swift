import Foundation
import Synchronization
import XCTest
import CAllocationTrap
import SFXCore
import SFXCardSupport
import SFX
@testable import SFXPlayback

/// The real-time rule with streaming voices: players (one starved by a slow reader), seeks,
/// pauses of voices, groups and everything, rate changes, fade-ins and ducking, and not one
/// heap call from the output thread while it runs under SCHED_FIFO (see RealtimeAllocationTests
/// for how the trap counts).
final class PlayerRealtimeTests: XCTestCase {
    func testStreamingPausingRateAndDuckingNeverAllocateOnTheRealtimeThread() throws {
        let setup = try EngineOnCard(period: 256, periods: 4)
        defer { setup.close() }
        let engine = setup.engine
        let url = setup.card.directory.appending(path: "music.wav")
        try WAVAudio(sampleRate: 44_100, channels: 2, samples: (0..<(44_100 * 20 * 2)).map { Float(sin(Double($0) * 0.001)) * 0.2 })
            .write(to: url)
        let alert = try engine.load(buffer: (0..<4800).map { _ in Float(0.1) }, sampleRate: 48_000, channels: 1)
        let players = try (0..<4).map { _ in try engine.makePlayer(contentsOf: url) }
        players[3].slowReader(by: 1_000_000)
        // Warm up every path once.
        for player in players { try player.play() }
        engine.play(alert, group: .alerts, fadeIn: .milliseconds(10), rate: 1.5).pause()
        XCTAssertTrue(eventually { engine.metrics.realtimeGranted != nil })
        XCTAssertEqual(engine.metrics.realtimeGranted, true, "the section is counted under SCHED_FIFO: run as root")

        allocation_trap_watch_fifo(engine.metrics.outputThreadID)
        defer { allocation_trap_watch(0) }
        for n in 0..<40 {
            let voice = engine.play(alert, group: n % 2 == 0 ? .alerts : .effects, fadeIn: .milliseconds(n % 20), rate: 0.5 + Float(n % 4) / 2)
            if n % 3 == 0 { voice.pause() }
            if n % 3 == 1 { try voice.setRate(1.25) }
            if n % 5 == 0 { engine.pause(group: .music) }
            if n % 5 == 2 { engine.resume(group: .music) }
            if n % 7 == 0 { engine.pauseAll() }
            if n % 7 == 3 { engine.resumeAll() }
            if n % 4 == 0 { try players[n % 3].seek(to: Double(n % 10)) }
            players[n % 3].rate = 0.75 + Float(n % 3) / 4
            if n % 9 == 0 { try engine.setDucking(.effects, ducks: .music, by: -6) }
            usleep(10_000)
        }
        engine.resumeAll()
        engine.resume(group: .music)
        let rendered = engine.metrics.framesRendered
        XCTAssertTrue(eventually { engine.metrics.framesRendered > rendered + 12_000 })
        let calls = allocation_trap_count()
        allocation_trap_watch(0)
        XCTAssertEqual(calls, 0, "the real-time loop called the allocator \(calls) times")
        XCTAssertGreaterThan(players[3].underruns, 0, "the slow reader starved its voice meanwhile")
        for player in players { player.stop() }
    }
}
