// The capture thread's real-time rule, and overruns recovered and counted.
import Foundation
import XCTest
import CAllocationTrap
import SFX
import SFXCardSupport

final class CaptureThreadTests: XCTestCase {
    /// No heap call on the capture thread while it runs under SCHED_FIFO: through periods
    /// recorded, a pause, a resume and an overrun with its recovery.
    func testNoAllocationOnTheCaptureThread() throws {
        let card = try cardCapturing(Signal.music(seconds: 10, channels: 2), channels: 2)
        defer { try? card.remove() }
        let recorder = try Recorder(settings: settings(.flac, card: card, channels: 2))
        try recorder.record()
        defer { recorder.cancel() }
        // Warm up: every path once.
        Thread.sleep(forTimeInterval: 0.2)
        recorder.pause(); Thread.sleep(forTimeInterval: 0.05); recorder.resume()
        card.injectXrun()
        XCTAssertTrue(eventually { recorder.overruns >= 1 })
        XCTAssertEqual(recorder.realtimeGranted, true, "counted under SCHED_FIFO: run as root")
        let thread = recorder.captureThreadID
        XCTAssertGreaterThan(thread, 0)

        allocation_trap_watch_fifo(thread)
        defer { allocation_trap_watch(0) }
        Thread.sleep(forTimeInterval: 0.3)
        recorder.pause(); Thread.sleep(forTimeInterval: 0.1); recorder.resume()
        card.injectXrun()
        XCTAssertTrue(eventually { recorder.overruns >= 2 })
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(allocation_trap_count(), 0, "heap calls on the capture thread")
    }

    /// An overrun is recovered at once and counted; the recording goes on, and the events say so.
    func testOverrunsAreRecoveredAndCounted() throws {
        let card = try cardCapturing(Signal.music(seconds: 3, channels: 1), channels: 1)
        defer { try? card.remove() }
        var settings = settings(.wav, card: card, channels: 1)
        settings.maxDuration = .seconds(1)
        let events = ManagedEvents()
        let recorder = try Recorder(settings: settings)
        recorder.onEvent = { events.append($0) }
        try recorder.record()
        Thread.sleep(forTimeInterval: 0.3)
        card.injectXrun()
        guard case .finished(_, let duration) = recorder.waitUntilFinished(timeout: .seconds(10)) else { return XCTFail("not finished") }
        XCTAssertEqual(duration, 1)
        XCTAssertEqual(recorder.overruns, 1)
        XCTAssertTrue(eventually { events.all.last?.name == "finished" })
        XCTAssertEqual(events.all.map(\.name), ["started", "overrun", "finished"])
        XCTAssertEqual(events.all[1], .overrun(count: 1))
    }

    /// A device that goes away mid-recording ends it with `.failed(.deviceLost)`; the file keeps
    /// what was captured until then, complete and readable.
    func testALostDeviceEndsTheRecordingAndKeepsTheFile() throws {
        let source = Signal.music(seconds: 5, channels: 1)
        let card = try cardCapturing(source, channels: 1)
        defer { try? card.remove() }
        let settings = settings(.wav, card: card, channels: 1)
        let recorder = try Recorder(settings: settings)
        try recorder.record()
        Thread.sleep(forTimeInterval: 0.5)
        card.disconnect()
        guard case .failed(let error) = recorder.waitUntilFinished(timeout: .seconds(10)) else { return XCTFail("not failed") }
        guard case .deviceLost(let device, _) = error else { return XCTFail("\(error)") }
        XCTAssertEqual(device, card.pcmName)
        XCTAssertTrue(error.description.contains("what was recorded until then is kept"), error.description)
        let saved = try Decoded.soundFile(settings.url!)
        XCTAssertGreaterThan(saved.frames, 12_000)
        assertSamplesEqual(saved.samples, Array(source.prefix(saved.frames)))
    }

    func eventually(_ condition: () -> Bool) -> Bool {
        for _ in 0..<300 {
            if condition() { return true }
            usleep(10_000)
        }
        return false
    }
}
