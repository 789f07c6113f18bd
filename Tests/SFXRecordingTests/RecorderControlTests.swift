// Pause and resume, the minimum length, cancel, and the prompt tone, through the virtual card.
import Foundation
import XCTest
import SFX
import SFXCardSupport

final class RecorderControlTests: XCTestCase {
    /// Pausing leaves no gap (no silence is written for the paused time) and no click (the join
    /// moves by no more than the sine's own largest step between samples). The part before the
    /// pause is the signal from frame 0, and the file is as long as the time recorded.
    func testPauseAndResumeLeaveNoGapAndNoClick() throws {
        // A sine on a DC offset, 0 … 0.5: it never crosses zero, so a cut anywhere would jump.
        let amplitude = 0.25, frequency = 440.0
        let sine = (0..<48_000 * 6).map { Signal.quantise(amplitude + amplitude * sin(2 * Double.pi * frequency * Double($0) / 48_000)) }
        let card = try cardCapturing(sine, channels: 1)
        defer { try? card.remove() }
        let settings = settings(.wav, card: card, channels: 1)
        let recorder = try Recorder(settings: settings)
        try recorder.record()
        Thread.sleep(forTimeInterval: 0.8)
        recorder.pause()
        let pausedAt = recorder.currentTime
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(recorder.currentTime, pausedAt, accuracy: 0.011, "nothing is recorded while paused (one fading period at most)")
        recorder.resume()
        Thread.sleep(forTimeInterval: 0.8)
        guard case .finished(_, let duration) = recorder.stop() else { return XCTFail("not finished") }
        let saved = try Decoded.soundFile(settings.url!).samples
        XCTAssertEqual(Double(saved.count) / 48_000, duration, accuracy: 1e-9)
        XCTAssertLessThan(duration, 2.0, "the 0.5 s pause is not in the file")
        XCTAssertGreaterThan(duration, 1.4)
        // The sine's largest step between samples, plus what a 10 ms fade of the 0.5 peak adds,
        // plus 16-bit rounding. An unfaded join jumps by the signal's value there (0 … 0.5).
        let largestStep = amplitude * 2 * Double.pi * frequency / 48_000 + 0.5 / 480 + 2.0 / 32_768
        var worst = 0.0
        for i in 1..<saved.count { worst = max(worst, Double(abs(saved[i] - saved[i - 1]))) }
        XCTAssertLessThanOrEqual(worst, largestStep, "a click at the join")
        // No gap: no run of 10 zero samples (the signal touches 0 once a cycle; the join adds two).
        var zeros = 0, longest = 0
        for x in saved { zeros = x == 0 ? zeros + 1 : 0; longest = max(longest, zeros) }
        XCTAssertLessThan(longest, 10)
        // Before the pause's fade the file is the signal from frame 0.
        let before = Int(pausedAt * 48_000) - 480
        assertSamplesEqual(Array(saved.prefix(before)), Array(sine.prefix(before)))
        let events = collect(recorder)
        XCTAssertEqual(events.map(\.name), ["started", "paused", "resumed", "finished"])
    }

    /// Shorter than `minDuration`: the file is removed and `.discarded` says why.
    func testARecordingShorterThanTheMinimumIsDiscarded() throws {
        let card = try cardCapturing(Signal.sine(frequency: 440, amplitude: 0.5, seconds: 2), channels: 1)
        defer { try? card.remove() }
        var settings = settings(.flac, card: card, channels: 1)
        settings.minDuration = .seconds(1)
        let recorder = try Recorder(settings: settings)
        try recorder.record()
        Thread.sleep(forTimeInterval: 0.3)
        guard case .discarded(let url, let reason) = recorder.stop() else { return XCTFail("not discarded") }
        XCTAssertEqual(url, settings.url)
        XCTAssertTrue(reason.contains("shorter than the minimum of 1.00 s"), reason)
        XCTAssertFalse(FileManager.default.fileExists(atPath: url.path))
    }

    /// `cancel()` deletes the file.
    func testCancelDeletesTheFile() throws {
        let card = try cardCapturing(Signal.sine(frequency: 440, amplitude: 0.5, seconds: 2), channels: 1)
        defer { try? card.remove() }
        let settings = settings(.m4a, card: card, channels: 1)
        let recorder = try Recorder(settings: settings)
        try recorder.record()
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertTrue(FileManager.default.fileExists(atPath: settings.url!.path))
        XCTAssertEqual(recorder.cancel(), .discarded(url: settings.url!, reason: "cancelled"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: settings.url!.path))
    }

    /// A recording never replaces a file, nor writes through a symbolic link.
    func testAnExistingFileOrLinkIsNeverOverwritten() throws {
        let card = try cardCapturing(Signal.sine(frequency: 440, amplitude: 0.5, seconds: 1), channels: 1)
        defer { try? card.remove() }
        var settings = settings(.wav, card: card, channels: 1)
        try Data("keep".utf8).write(to: settings.url!)
        XCTAssertThrowsError(try Recorder(settings: settings).record()) { error in
            XCTAssertTrue("\(error)".contains("already exists; recordings never overwrite a file"), "\(error)")
        }
        XCTAssertEqual(try Data(contentsOf: settings.url!), Data("keep".utf8))
        let target = card.directory.appending(path: "target")
        settings.url = card.directory.appending(path: "link.wav")
        try FileManager.default.createSymbolicLink(at: settings.url!, withDestinationURL: target)
        XCTAssertThrowsError(try Recorder(settings: settings).record())
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.path))
    }

    /// Timestamped names in the default directory, created 0700; a second recording in the same
    /// second gets the next free name.
    func testTimestampedNamesInAPrivateDirectoryNeverCollide() throws {
        let card = try cardCapturing(Signal.sine(frequency: 440, amplitude: 0.5, seconds: 1), channels: 1)
        defer { try? card.remove() }
        var settings = settings(.wav, card: card, channels: 1)
        settings.url = nil
        settings.directory = card.directory.appending(path: "data/sfx/recordings")
        settings.maxDuration = .milliseconds(100)
        var urls: [URL] = []
        for _ in 0..<2 {
            let recorder = try Recorder(settings: settings)
            try recorder.record()
            guard case .finished(let url, _) = recorder.waitUntilFinished(timeout: .seconds(10)) else { return XCTFail("not finished") }
            urls.append(url)
        }
        XCTAssertNotEqual(urls[0], urls[1])
        XCTAssertTrue(urls.allSatisfy { $0.lastPathComponent.range(of: #"^\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d(-\d+)?\.wav$"#, options: .regularExpression) != nil }, "\(urls)")
        var st = stat()
        XCTAssertEqual(stat(settings.directory!.path, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o700)
        let listed = RecordingStore.list(in: settings.directory!)
        XCTAssertEqual(Set(listed.map(\.name)), Set(urls.map(\.lastPathComponent)))
        XCTAssertEqual(listed.first?.duration ?? 0, 0.1, accuracy: 1e-9)
        XCTAssertEqual(listed.first?.format, "wav")
        try RecordingStore.remove(named: urls[0].lastPathComponent, in: settings.directory!)
        XCTAssertEqual(RecordingStore.list(in: settings.directory!).map(\.name), [urls[1].lastPathComponent])
        XCTAssertThrowsError(try RecordingStore.remove(named: "../x", in: settings.directory!))
    }

    /// The prompt tone plays through the engine on the card's playback, and capture opens only
    /// after its last frame reached the DAC: the card's capture starts later than that instant,
    /// and the file is the capture source from its frame 0 (the card gives frame n of the
    /// source as frame n of every stream), so nothing from before — the tone — is in it.
    func testThePromptToneEndsBeforeCaptureBegins() throws {
        let source = Signal.music(seconds: 2, channels: 2)
        let card = try cardCapturing(source, channels: 2)
        defer { try? card.remove() }
        var configuration = SoundEngine.Configuration()
        configuration.output.device = card.pcmName
        let engine = try SoundEngine(configuration: configuration)
        defer { engine.close() }
        let tone = (0..<4_800).map { Float(0.5 * sin(Double($0) * 0.1)) }          // 100 ms
        let prompt = try engine.load(buffer: tone, sampleRate: 48_000, channels: 1)
        var settings = settings(.wav, card: card, channels: 2)
        settings.prompt = prompt
        settings.maxDuration = .milliseconds(500)
        let recorder = try Recorder(settings: settings, engine: engine)
        try recorder.record()
        XCTAssertEqual(recorder.waitUntilFinished(timeout: .seconds(10)), .finished(url: settings.url!, duration: 0.5))
        assertSamplesEqual(try Decoded.soundFile(settings.url!).samples, Array(source.prefix(24_000 * 2)))

        let events = try card.events()
        let onset = try XCTUnwrap(events.compactMap { event -> UInt64? in
            if case .onset(_, let dac, _) = event.kind { return dac } else { return nil }
        }.first, "the tone reached the DAC")
        let toneEnd = onset + UInt64(4_800) * 1_000_000_000 / 48_000
        let captureStart = try XCTUnwrap(events.first { if case .start(.capture) = $0.kind { true } else { false } })
        XCTAssertGreaterThan(captureStart.nanoseconds, toneEnd, "capture started before the tone had ended")
    }

    private func collect(_ recorder: Recorder) -> [RecorderEvent] {
        let got = ManagedEvents()
        let done = expectation(description: "events")
        Task {
            for await event in recorder.events { got.append(event) }
            done.fulfill()
        }
        wait(for: [done], timeout: 5)
        return got.all
    }
}

final class ManagedEvents: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [RecorderEvent] = []
    func append(_ event: RecorderEvent) { lock.lock(); events.append(event); lock.unlock() }
    var all: [RecorderEvent] { lock.lock(); defer { lock.unlock() }; return events }
}

extension RecorderEvent {
    var name: String {
        switch self {
        case .started: "started"
        case .paused: "paused"
        case .resumed: "resumed"
        case .overrun: "overrun"
        case .finished: "finished"
        case .discarded: "discarded"
        case .failed: "failed"
        }
    }
}
