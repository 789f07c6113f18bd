import CALSA
import Foundation
import SFXCardSupport
import XCTest

/// Capture: the source file, sample for sample, in real time; looping; overruns.
final class CaptureTests: CardTestCase {
    private func cardCapturing(_ source: WAVAudio, loop: Bool = false) throws -> VirtualCard {
        let url = card.directory.appending(path: "source.wav")   // removed with the card
        try source.write(to: url)
        card = try VirtualCard(directory: card.directory, captureSource: url, loopCapture: loop)
        card.makeCurrent()
        return card
    }

    func testCaptureDeliversTheSourceSampleForSampleInRealTime() throws {
        let source = WAVAudio(sampleRate: 48_000, channels: 2, samples: Signal.noise(frames: 14_400, channels: 2, seed: 3))
        let card = try cardCapturing(source)
        let pcm = try PCM(card.hardwarePCMName, stream: SND_PCM_STREAM_CAPTURE)
        try pcm.configure(periodFrames: 960, periods: 4)
        var captured: [Float] = []
        let seconds = try elapsed { captured = try pcm.read(frames: 19_200) }
        XCTAssertGreaterThan(seconds, 0.35, "0.4 s of capture cannot arrive sooner")
        XCTAssertLessThan(seconds, 0.9)
        XCTAssertEqual(Array(captured.prefix(source.samples.count)), source.samples)
        XCTAssertEqual(Array(captured.dropFirst(source.samples.count)), Signal.silence(frames: 4_800, channels: 2))
    }

    func testLoopingCaptureRepeatsTheSource() throws {
        let source = WAVAudio(sampleRate: 48_000, channels: 1, samples: Signal.noise(frames: 1_000, channels: 1, seed: 5))
        let card = try cardCapturing(source, loop: true)
        let pcm = try PCM(card.hardwarePCMName, stream: SND_PCM_STREAM_CAPTURE)
        try pcm.configure(channels: 1, periodFrames: 480, periods: 4)
        let captured = try pcm.read(frames: 4_800)
        XCTAssertEqual(captured, Array((0..<5).map { _ in source.samples }.joined()).prefix(4_800).map { $0 })
    }

    func testCaptureConvertsToTheNegotiatedFormat() throws {
        let source = WAVAudio(sampleRate: 48_000, channels: 1, samples: Signal.noise(frames: 4_800, channels: 1, seed: 9))
        let card = try cardCapturing(source)
        let pcm = try PCM(card.hardwarePCMName, stream: SND_PCM_STREAM_CAPTURE)
        try pcm.configure(format: SND_PCM_FORMAT_S16_LE, channels: 2, periodFrames: 480, periods: 4)
        let captured = try pcm.read(frames: 4_800)
        for (index, expected) in source.samples.enumerated() {
            XCTAssertEqual(captured[index * 2], captured[index * 2 + 1], "mono is copied to both sides")
            XCTAssertEqual(captured[index * 2], expected, accuracy: 1.0 / 32_768, "frame \(index)")
        }
    }

    func testCaptureResamplesASourceAtAnotherRate() throws {
        let source = WAVAudio(sampleRate: 44_100, channels: 1, samples: Signal.tone(frames: 4_410, channels: 1, rate: 44_100))
        let card = try cardCapturing(source)
        let pcm = try PCM(card.hardwarePCMName, stream: SND_PCM_STREAM_CAPTURE)
        try pcm.configure(channels: 1, periodFrames: 480, periods: 4)
        let captured = try pcm.read(frames: 6_000)
        let sound = captured.lastIndex { abs($0) > 0.01 } ?? 0
        XCTAssertEqual(sound, 4_800, accuracy: 20, "0.1 s of source is 4800 frames at 48 kHz")
        let peak = captured.map(abs).max() ?? 0
        XCTAssertEqual(peak, 0.5, accuracy: 0.02)
    }

    func testReaderThatSleepsOverruns() throws {
        let pcm = try PCM(card.hardwarePCMName, stream: SND_PCM_STREAM_CAPTURE)
        try pcm.configure(periodFrames: 960, periods: 4)   // an 80 ms buffer
        _ = try pcm.read(frames: 960)
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertThrowsError(try pcm.read(frames: 960)) { error in
            XCTAssertEqual(error as? ALSAError, ALSAError(code: -EPIPE))
        }
        XCTAssertEqual(pcm.state, SND_PCM_STATE_XRUN)
        XCTAssertEqual(try xruns(), [.overrun])
        try check(snd_pcm_prepare(pcm.handle))
        XCTAssertEqual(try pcm.read(frames: 960).count, 1_920, "capture runs again after prepare")
    }

    func testAMissingCaptureSourceFailsTheOpen() throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "sfxcard-bad-\(UUID().uuidString)")
        let source = directory.appending(path: "gone.wav")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try WAVAudio(sampleRate: 48_000, channels: 1, samples: [0]).write(to: source)
        let card = try VirtualCard(directory: directory, captureSource: source)
        try FileManager.default.removeItem(at: source)
        card.makeCurrent()
        XCTAssertThrowsError(try PCM(card.hardwarePCMName, stream: SND_PCM_STREAM_CAPTURE)) { error in
            XCTAssertEqual(error as? ALSAError, ALSAError(code: -ENOENT))
        }
        XCTAssertNoThrow(try PCM(card.hardwarePCMName), "playback does not need the capture file")
        try card.remove()
    }
}
