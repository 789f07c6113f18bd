import Foundation
import Synchronization
import XCTest
import CAllocationTrap
import SFXCore
import SFXCardSupport
import SFX
@testable import SFXPlayback

/// The real-time thread's rule through faults: no heap call while it runs its real-time loop,
/// across plays, an xrun and its recovery, and a device that goes away and comes back.
///
/// The counted section is the time the output thread runs under SCHED_FIFO: from the start of
/// `outputLoop` (which asks for it) until `run` drops to normal priority after the loop ends.
/// A lost device is closed and reopened after that drop, at normal priority, where allocation is
/// allowed (alsa-lib allocates to open a PCM), so it is not counted; rendering by the clock
/// while the device is gone is also at normal priority.
final class RealtimeAllocationTests: XCTestCase {
    func testTheTrapCountsOnlyUnderSCHEDFIFO() throws {
        allocation_trap_watch_fifo(sfx_test_gettid())
        defer { allocation_trap_watch(0) }
        UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 8).deallocate()
        XCTAssertEqual(allocation_trap_count(), 0, "not counted at normal priority")
        XCTAssertEqual(allocation_trap_set_fifo(10), 0, "SCHED_FIFO for this test thread: run as root")
        UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 8).deallocate()
        XCTAssertEqual(allocation_trap_set_fifo(0), 0)
        XCTAssertEqual(allocation_trap_count(), 2, "an allocation and a free under SCHED_FIFO")
    }

    func testNoAllocationInTheRealtimeLoopThroughAnXrunAndADeviceLoss() throws {
        let events = Mutex<[EngineEvent]>([])
        let setup = try EngineOnCard(period: 256, periods: 4) { configuration in
            configuration.onEvent = { event in events.withLock { $0.append(event) } }
        }
        defer { setup.close() }
        let engine = setup.engine
        let tock = try engine.systemSound(named: "tock")
        let tone = try engine.load(buffer: SoundEngineTests.tone(), sampleRate: 48_000, channels: 1)
        // Warm up: every code path once, an xrun included.
        for _ in 0..<3 {
            engine.play(tock).stop()
            try engine.play(tone, pan: 0.3).setVolume(0.2)
        }
        setup.card.injectXrun()
        XCTAssertTrue(eventually { engine.metrics.xruns >= 1 })
        XCTAssertTrue(engine.waitUntilIdle())
        XCTAssertTrue(eventually { engine.metrics.realtimeGranted != nil })
        XCTAssertEqual(engine.metrics.realtimeGranted, true, "the section is counted under SCHED_FIFO: run as root")
        let thread = engine.metrics.outputThreadID
        XCTAssertGreaterThan(thread, 0)

        allocation_trap_watch_fifo(thread)
        defer { allocation_trap_watch(0) }
        func plays(_ count: Int) throws {
            for n in 0..<count {
                let voice = engine.play(n % 2 == 0 ? tock : tone, volume: 0.3, pan: Float(n % 5) / 5 - 0.4,
                                        priority: n % 7 == 0 ? .high : .normal)
                if n % 3 == 0 { try voice.setPan(0.5); try voice.setVolume(0.1) }
                if n % 4 == 0 { try voice.stop(fade: .milliseconds(3)) }
                usleep(2_000)
            }
        }
        try plays(50)
        let xruns = engine.metrics.xruns
        setup.card.injectXrun()
        try plays(50)
        XCTAssertTrue(eventually { engine.metrics.xruns > xruns }, "the xrun went through recovery")

        setup.card.disconnect()
        XCTAssertTrue(eventually { events.withLock { $0.contains { if case .deviceLost = $0 { true } else { false } } } })
        try plays(20)
        setup.card.reconnect()
        XCTAssertTrue(eventually { events.withLock { $0.contains { if case .deviceRestored = $0 { true } else { false } } } })
        let rendered = engine.metrics.framesRendered
        try plays(50)
        XCTAssertTrue(engine.waitUntilIdle())
        XCTAssertTrue(eventually { engine.metrics.framesRendered > rendered + 12_000 }, "the real-time loop runs again")
        let calls = allocation_trap_count()
        allocation_trap_watch(0)
        XCTAssertEqual(calls, 0, "the real-time loop called the allocator \(calls) times")
    }
}

/// `Configuration.lockMemory`: the process's pages are locked while the engine runs, and
/// unlocked when it closes.
final class MemoryLockTests: XCTestCase {
    /// VmLck of this process, in kB.
    func lockedKilobytes() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("VmLck:") })
        return try XCTUnwrap(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    func testLockMemoryLocksTheProcessWhileTheEngineRuns() throws {
        let events = Mutex<[EngineEvent]>([])
        // libavformat brings in libssh-gcrypt, whose libgcrypt locks 16 kB of secure memory as it
        // loads: what is locked before the engine is that, at most.
        let before = try lockedKilobytes()
        XCTAssertLessThanOrEqual(before, 16)
        let setup = try EngineOnCard { configuration in
            configuration.lockMemory = true
            configuration.onEvent = { event in events.withLock { $0.append(event) } }
        }
        XCTAssertTrue(setup.engine.metrics.memoryLocked, "mlockall as root")
        XCTAssertGreaterThan(try lockedKilobytes(), before + 1000)
        setup.engine.play(try setup.engine.systemSound(named: "tock"))
        XCTAssertTrue(setup.engine.waitUntilIdle())
        setup.close()
        XCTAssertLessThanOrEqual(try lockedKilobytes(), before, "unlocked at close (munlockall)")
        XCTAssertFalse(events.withLock { $0.contains { if case .memoryLockRefused = $0 { true } else { false } } })
    }

    func testWithoutLockMemoryNothingIsLocked() throws {
        let before = try lockedKilobytes()
        let setup = try EngineOnCard()
        defer { setup.close() }
        XCTAssertFalse(setup.engine.metrics.memoryLocked)
        XCTAssertEqual(try lockedKilobytes(), before, "the engine locked nothing")
    }
}
