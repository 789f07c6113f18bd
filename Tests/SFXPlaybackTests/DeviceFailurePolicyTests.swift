// The output thread's failure policy (OutputThread.FailurePolicy) on a scripted device injected
// through the engine's device factory: no ALSA, no card; the device fails exactly when told.
import Foundation
import Glibc
import Synchronization
import XCTest
import SFXCore
import SFXDevice
import SFX
@testable import SFXPlayback

final class DeviceFailurePolicyTests: XCTestCase {
    private final class Setup: Sendable {
        let engine: SoundEngine
        let devices: ScriptedDevices
        let events = Mutex<[EngineEvent]>([])
        let directory: URL

        init(engine: SoundEngine, devices: ScriptedDevices, directory: URL) {
            self.engine = engine
            self.devices = devices
            self.directory = directory
        }

        func close() {
            engine.close()
            try? FileManager.default.removeItem(at: directory)
        }

        func count(_ matching: (EngineEvent) -> Bool) -> Int { events.withLock { $0.filter(matching).count } }
    }

    /// An engine on a scripted device: 10 ms periods, three to a buffer.
    private func makeEngine() throws -> Setup {
        let directory = FileManager.default.temporaryDirectory.appending(path: "sfx-scripted-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        let devices = ScriptedDevices()
        var configuration = SoundEngine.Configuration()
        configuration.output = PlaybackRequest(device: "scripted", sampleRate: 48_000, channels: 2, periodFrames: 480, periodCount: 3)
        configuration.devices = devices
        configuration.muteFlag = MuteFlag(url: directory.appending(path: "muted"))
        let setup = Setup(engine: try SoundEngine(configuration: configuration), devices: devices, directory: directory)
        setup.engine.onEvent = { [unowned setup] event in setup.events.withLock { $0.append(event) } }
        return setup
    }

    private func isLost(_ event: EngineEvent) -> Bool { if case .deviceLost = event { true } else { false } }
    private func isRestored(_ event: EngineEvent) -> Bool { if case .deviceRestored = event { true } else { false } }
    private func isXrun(_ event: EngineEvent) -> Bool { if case .xrun = event { true } else { false } }

    /// A plugin that answers every write with EPIPE while recover reports success: one xrun is
    /// counted for the whole storm, the device is lost after `maxConsecutiveFailures` writes (not
    /// retried at once for ever), and once it plays again the engine reopens it through the factory.
    func testAnEPIPEStormIsALostDeviceThatTheFactoryReopens() throws {
        let setup = try makeEngine()
        defer { setup.close() }
        let first = try XCTUnwrap(setup.devices.device)
        XCTAssertTrue(eventually { setup.engine.metrics.framesRendered > 4800 }, "it plays")

        first.writeError.store(-EPIPE, ordering: .relaxed)
        XCTAssertTrue(eventually { setup.count(self.isLost) == 1 }, "the storm is a lost device")
        XCTAssertEqual(first.failedWrites.load(ordering: .relaxed), OutputThread.FailurePolicy.maxConsecutiveFailures)
        XCTAssertEqual(first.recovers.load(ordering: .relaxed), OutputThread.FailurePolicy.maxConsecutiveFailures - 1)
        XCTAssertTrue(first.closed.load(ordering: .relaxed), "the lost device was closed")
        XCTAssertEqual(setup.engine.metrics.xruns, 1, "one xrun for the streak")
        XCTAssertTrue(eventually { setup.count(self.isXrun) == 1 })

        XCTAssertTrue(eventually { setup.count(self.isRestored) == 1 }, "a fresh device opens")
        XCTAssertEqual(setup.devices.attempts.load(ordering: .relaxed), 2)
        let second = try XCTUnwrap(setup.devices.device)
        XCTAssertFalse(second === first)
        XCTAssertTrue(eventually { second.writes.load(ordering: .relaxed) > 10 }, "and plays")
        XCTAssertFalse(setup.engine.metrics.deviceLost)
    }

    /// ENODEV is lost at the first write; while the factory keeps refusing, the engine plays on the
    /// null device by the clock (a play still finishes), tries again after 0.25, 0.5 and 1 s, and
    /// comes back once the factory opens again.
    func testAVanishedDeviceIsLostAtOnceAndReopenedWithBackOff() throws {
        let setup = try makeEngine()
        defer { setup.close() }
        let first = try XCTUnwrap(setup.devices.device)
        XCTAssertTrue(eventually { setup.engine.metrics.framesRendered > 4800 })
        setup.devices.openError.store(-ENODEV, ordering: .relaxed)
        first.writeError.store(-ENODEV, ordering: .relaxed)

        XCTAssertTrue(eventually { setup.count(self.isLost) == 1 })
        XCTAssertEqual(first.failedWrites.load(ordering: .relaxed), 1, "no retry of a device that is gone")
        XCTAssertEqual(first.recovers.load(ordering: .relaxed), 0)
        XCTAssertTrue(setup.events.withLock { $0.contains { "\($0)".contains("ENODEV") } }, "the event names the errno")
        XCTAssertEqual(setup.engine.metrics.xruns, 0)
        XCTAssertTrue(setup.engine.metrics.deviceLost)

        // A 50 ms sound finishes while the device is away: the stand-in consumes it by the clock.
        let blip = try setup.engine.load(buffer: [Float](repeating: 0.1, count: 2_400), sampleRate: 48_000, channels: 1)
        let outcome = Mutex<PlayOutcome?>(nil)
        let before = setup.engine.metrics.framesRendered
        setup.engine.play(blip) { result in outcome.withLock { $0 = result } }
        XCTAssertTrue(eventually { outcome.withLock { $0 } != nil })
        XCTAssertEqual(outcome.withLock { $0 }, .finished)
        XCTAssertGreaterThanOrEqual(setup.engine.metrics.framesRendered - before, 2_400)

        // Tries at about 0.25, 0.75 and 1.75 s after the loss: two or three within 1.5 s, not dozens.
        let attemptsAtLoss = setup.devices.attempts.load(ordering: .relaxed)
        usleep(1_500_000)
        let tries = setup.devices.attempts.load(ordering: .relaxed) - 1
        XCTAssertGreaterThanOrEqual(tries, 2)
        XCTAssertLessThanOrEqual(tries, 3, "attempts at the loss \(attemptsAtLoss)")
        XCTAssertEqual(setup.count(self.isRestored), 0)

        setup.devices.openError.store(0, ordering: .relaxed)
        XCTAssertTrue(eventually { setup.count(self.isRestored) == 1 })
        XCTAssertFalse(setup.engine.metrics.deviceLost)
        XCTAssertEqual(setup.engine.metrics.parameters.periodFrames, 480)
    }

    /// A stream that takes nothing (every wait times out) is not playing: lost after
    /// `maxSilentWaits` waits of 200 ms, with ETIMEDOUT.
    func testAStreamThatTakesNothingIsLost() throws {
        let setup = try makeEngine()
        defer { setup.close() }
        let first = try XCTUnwrap(setup.devices.device)
        XCTAssertTrue(eventually { setup.engine.metrics.framesRendered > 4800 })
        first.timesOut.store(true, ordering: .relaxed)
        XCTAssertTrue(eventually { setup.count(self.isLost) == 1 })
        XCTAssertTrue(setup.events.withLock { $0.contains { "\($0)".contains("ETIMEDOUT") || "\($0)".contains("errno \(ETIMEDOUT)") } },
                      "\(setup.events.withLock { $0 })")
        XCTAssertTrue(first.closed.load(ordering: .relaxed))
        XCTAssertTrue(eventually { setup.count(self.isRestored) == 1 }, "a fresh device opens")
    }

    /// A device that cannot recover from an xrun is lost at once; the xrun is still counted.
    func testAnUnrecoverableXrunIsALostDevice() throws {
        let setup = try makeEngine()
        defer { setup.close() }
        let first = try XCTUnwrap(setup.devices.device)
        XCTAssertTrue(eventually { setup.engine.metrics.framesRendered > 4800 })
        first.recoverResult.store(-EIO, ordering: .relaxed)
        first.writeError.store(-EPIPE, ordering: .relaxed)
        XCTAssertTrue(eventually { setup.count(self.isLost) == 1 })
        XCTAssertEqual(first.failedWrites.load(ordering: .relaxed), 1)
        XCTAssertEqual(first.recovers.load(ordering: .relaxed), 1)
        XCTAssertEqual(setup.engine.metrics.xruns, 1)
    }
}

/// An engine opened on the null device by name plays by the clock, with no card at all.
final class NullDeviceEngineTests: XCTestCase {
    func testAnEngineOnTheNullDevicePlaysByTheClock() throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "sfx-null-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = SoundEngine.Configuration()
        configuration.output = PlaybackRequest(device: "null", periodFrames: 480, periodCount: 3)
        configuration.muteFlag = MuteFlag(url: directory.appending(path: "muted"))
        let engine = try SoundEngine(configuration: configuration)
        defer { engine.close() }
        XCTAssertEqual(engine.metrics.parameters.device, "null")
        // 0.5 s of sound: it cannot end sooner than the clock plays it, less the 30 ms buffer and
        // the 10 ms period the mixer renders ahead of the "DAC".
        let tone = try engine.load(buffer: [Float](repeating: 0.1, count: 24_000), sampleRate: 48_000, channels: 1)
        let outcome = Mutex<PlayOutcome?>(nil)
        let start = ContinuousClock.now
        engine.play(tone) { result in outcome.withLock { $0 = result } }
        XCTAssertTrue(engine.waitUntilIdle(timeout: .seconds(10)))
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .milliseconds(450))
        XCTAssertEqual(outcome.withLock { $0 }, .finished)
    }
}
