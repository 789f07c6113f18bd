// AVAudioRecorder's calls: record(forDuration:), stop() with the delegate told, observable states.
import Foundation
import XCTest
import SFX
import SFXCardSupport

final class RecorderParityTests: XCTestCase {
    /// `record(forDuration:)` stops by itself with exactly that many frames, and the events of a
    /// `maxDuration` stop; `states` goes recording → ended.
    func testRecordForDurationStopsWithExactlyThatManyFrames() throws {
        let source = Signal.sine(frequency: 440, amplitude: 0.5, seconds: 2)
        let card = try cardCapturing(source, channels: 1)
        defer { try? card.remove() }
        let settings = settings(.wav, card: card, channels: 1)
        let recorder = try Recorder(settings: settings)
        let got = ManagedEvents()
        recorder.onEvent = { got.append($0) }
        try recorder.record(forDuration: .milliseconds(300))
        XCTAssertEqual(recorder.waitUntilFinished(timeout: .seconds(10)), .finished(url: settings.url!, duration: 0.3))
        XCTAssertEqual(got.all.map(\.name), ["started", "finished"], "onEvent has had the last event when the wait returns")
        let saved = try Decoded.soundFile(settings.url!).samples
        XCTAssertEqual(saved.count, 14_400)
        assertSamplesEqual(saved, Array(source.prefix(14_400)))
        let states = ManagedStates()
        let done = expectation(description: "states")
        Task { for await s in recorder.states { states.append(s) }; done.fulfill() }
        wait(for: [done], timeout: 5)
        XCTAssertEqual(states.all, [.recording, .ended(.finished(url: settings.url!, duration: 0.3))])
        XCTAssertThrowsError(try Recorder(settings: settings).record(forDuration: .zero))
    }

    /// `progress()` counts up from the start to the recording's length, then finishes.
    func testProgressCountsUpAndEndsWithTheLength() throws {
        let card = try cardCapturing(Signal.sine(frequency: 440, amplitude: 0.5, seconds: 2), channels: 1)
        defer { try? card.remove() }
        let recorder = try Recorder(settings: settings(.wav, card: card, channels: 1))
        try recorder.record(forDuration: .milliseconds(500))
        let times = ManagedTimes()
        let done = expectation(description: "progress")
        Task { for await t in recorder.progress(every: .milliseconds(20)) { times.append(t) }; done.fulfill() }
        wait(for: [done], timeout: 10)
        let all = times.all
        XCTAssertGreaterThan(all.count, 3, "\(all)")
        XCTAssertEqual(all, all.sorted(), "a count-up never goes back")
        XCTAssertEqual(all.last ?? 0, 0.5, accuracy: 1e-9, "the last reading is the length")
    }

    /// `stop()` returns after `onEvent` has been called with the last event, which it returns.
    func testStopReturnsAfterOnEventHasTheLastEvent() throws {
        let card = try cardCapturing(Signal.sine(frequency: 440, amplitude: 0.5, seconds: 2), channels: 1)
        defer { try? card.remove() }
        let recorder = try Recorder(settings: settings(.flac, card: card, channels: 1))
        let got = ManagedEvents()
        recorder.onEvent = { event in
            Thread.sleep(forTimeInterval: 0.05)       // a slow handler must still be waited for
            got.append(event)
        }
        try recorder.record()
        Thread.sleep(forTimeInterval: 0.3)
        recorder.pause()
        let last = recorder.stop()
        guard case .finished = last else { return XCTFail("not finished: \(String(describing: last))") }
        XCTAssertEqual(got.all.map(\.name), ["started", "paused", "finished"])
        XCTAssertEqual(got.all.last, last)
    }
}

final class ManagedStates: @unchecked Sendable {
    private let lock = NSLock()
    private var states: [RecorderState] = []
    func append(_ state: RecorderState) { lock.lock(); states.append(state); lock.unlock() }
    var all: [RecorderState] { lock.lock(); defer { lock.unlock() }; return states }
}

final class ManagedTimes: @unchecked Sendable {
    private let lock = NSLock()
    private var times: [Double] = []
    func append(_ t: Double) { lock.withLock { times.append(t) } }
    var all: [Double] { lock.withLock { times } }
}
