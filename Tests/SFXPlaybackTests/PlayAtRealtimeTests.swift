import Foundation
import XCTest
import CAllocationTrap
import SFXCore
import SFXCardSupport
@testable import SFXPlayback

/// Plays at a time keep the real-time rule: no heap call on the output thread while it
/// schedules, starts, cancels and reports late plays, and publishes the clock, on either path.
final class PlayAtRealtimeTests: XCTestCase {
    func testNoAllocationInTheRealtimeLoopWhilePlaysAtATimeComeAndGo() throws {
        for rewind in [false, true] {
            let setup = rewind ? try PlayAtTests.rewindEngine(pointer: .frame) : try PlayAtTests.classicEngine(pointer: .period)
            defer { setup.close() }
            let engine = setup.engine
            if rewind { XCTAssertTrue(eventually { engine.metrics.rewind == .active }) }
            let blip = try engine.load(buffer: PlayAtTests.blip, sampleRate: 48_000, channels: 1)
            func plays(_ count: Int) {
                for n in 0..<count {
                    let now = engine.clock.now
                    let voice = engine.play(blip, at: now.advanced(by: Int64(n % 3 == 0 ? -480 : 240 + 97 * n)), volume: 0.2)
                    if n % 4 == 0 { voice.stop() }
                    if n % 9 == 0 { _ = engine.play(blip, at: now.advanced(by: 48_000 * 60), volume: 0.2) }   // waits, then stopped
                    usleep(2_000)
                }
                engine.stopAll()
            }
            plays(20)   // warm up: every path once
            XCTAssertTrue(engine.waitUntilIdle())
            XCTAssertTrue(eventually { engine.metrics.realtimeGranted != nil })
            XCTAssertEqual(engine.metrics.realtimeGranted, true, "the section is counted under SCHED_FIFO: run as root")
            allocation_trap_watch_fifo(engine.metrics.outputThreadID)
            plays(60)
            XCTAssertTrue(engine.waitUntilIdle())
            let calls = allocation_trap_count()
            allocation_trap_watch(0)
            XCTAssertEqual(calls, 0, "rewind \(rewind): the real-time loop called the allocator \(calls) times")
        }
    }
}
