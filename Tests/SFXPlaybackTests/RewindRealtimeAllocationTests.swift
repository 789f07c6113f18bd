import Foundation
import Synchronization
import XCTest
import CAllocationTrap
import SFXCore
import SFXCardSupport
import SFX
@testable import SFXPlayback

/// Rewind mode keeps the real-time rule: no heap call while the output thread runs under
/// SCHED_FIFO, across plays started by rewinding (snapshots saved and restored, events held and
/// delivered), stops and changes, an xrun and a device that goes away and comes back.
final class RewindRealtimeAllocationTests: XCTestCase {
    func testNoAllocationWhileRewinding() throws {
        let events = Mutex<[EngineEvent]>([])
        let setup = try EngineOnCard(period: 256, periods: 4, rewind: true, card: VirtualCard(pointer: .frame)) { configuration in
            configuration.onEvent = { event in events.withLock { $0.append(event) } }
        }
        defer { setup.close() }
        let engine = setup.engine
        let tock = try engine.systemSound(named: "tock")
        let tone = try engine.load(buffer: SoundEngineTests.tone(), sampleRate: 48_000, channels: 1)
        XCTAssertTrue(eventually { engine.metrics.rewind == .active })
        for _ in 0..<3 {
            engine.play(tock).stop()
            try engine.play(tone, pan: 0.3).setVolume(0.2)
        }
        setup.card.injectXrun()
        XCTAssertTrue(eventually { engine.metrics.xruns >= 1 })
        XCTAssertTrue(engine.waitUntilIdle())
        XCTAssertEqual(engine.metrics.realtimeGranted, true, "the section is counted under SCHED_FIFO: run as root")
        let thread = engine.metrics.outputThreadID

        allocation_trap_watch_fifo(thread)
        defer { allocation_trap_watch(0) }
        func plays(_ count: Int) throws {
            for n in 0..<count {
                let voice = engine.play(n % 2 == 0 ? tock : tone, volume: 0.3, pan: Float(n % 5) / 5 - 0.4)
                if n % 3 == 0 { try voice.setPan(0.5) }
                if n % 4 == 0 { try voice.stop(fade: .milliseconds(3)) }
                usleep(2_000)
            }
        }
        let rewinds = engine.metrics.rewinds
        try plays(60)
        XCTAssertGreaterThan(engine.metrics.rewinds, rewinds + 30, "the plays were started by rewinding")
        let xruns = engine.metrics.xruns
        setup.card.injectXrun()
        try plays(30)
        XCTAssertTrue(eventually { engine.metrics.xruns > xruns })
        setup.card.disconnect()
        XCTAssertTrue(eventually { events.withLock { $0.contains { if case .deviceLost = $0 { true } else { false } } } })
        setup.card.reconnect()
        XCTAssertTrue(eventually { events.withLock { $0.contains { if case .deviceRestored = $0 { true } else { false } } } })
        try plays(30)
        XCTAssertTrue(engine.waitUntilIdle())
        let calls = allocation_trap_count()
        allocation_trap_watch(0)
        XCTAssertEqual(calls, 0, "the rewind loop called the allocator \(calls) times")
        XCTAssertEqual(engine.metrics.rewind, .active)
    }
}
