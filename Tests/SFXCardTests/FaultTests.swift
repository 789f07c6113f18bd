import CALSA
import Foundation
import SFXCardSupport
import XCTest

/// Faults: underruns when the writer stops, injected xruns, unplugging and replugging.
final class FaultTests: CardTestCase {
    func testWriterThatStopsFeedingUnderruns() throws {
        let pcm = try PCM(card.hardwarePCMName)
        try pcm.configure(periodFrames: 960, periods: 3)
        try pcm.write(Signal.tone(frames: 2_880, channels: 2))
        Thread.sleep(forTimeInterval: 0.25)
        XCTAssertEqual(snd_pcm_avail_update(pcm.handle), -Int(EPIPE))
        XCTAssertEqual(pcm.state, SND_PCM_STATE_XRUN)
        XCTAssertThrowsError(try pcm.write(Signal.silence(frames: 960, channels: 2))) { error in
            XCTAssertEqual(error as? ALSAError, ALSAError(code: -EPIPE))
        }
        XCTAssertEqual(try xruns(), [.underrun])
        XCTAssertEqual(try WAVAudio(contentsOf: card.recordingURL).frameCount, 2_880, "everything written was played")

        try check(snd_pcm_prepare(pcm.handle))
        try pcm.write(Signal.silence(frames: 1_920, channels: 2))
        try pcm.drain()
        XCTAssertEqual(try xruns(), [.underrun], "a fed stream plays on after recovery")
    }

    func testInjectedXrunStopsARunningStreamOnce() throws {
        let pcm = try PCM(card.hardwarePCMName)
        try pcm.configure(periodFrames: 960, periods: 4)
        try pcm.write(Signal.silence(frames: 3_840, channels: 2))
        card.injectXrun()
        XCTAssertThrowsError(try pcm.write(Signal.silence(frames: 3_840, channels: 2))) { error in
            XCTAssertEqual(error as? ALSAError, ALSAError(code: -EPIPE))
        }
        try check(snd_pcm_prepare(pcm.handle))
        try pcm.write(Signal.silence(frames: 7_680, channels: 2))
        try pcm.drain()
        XCTAssertEqual(try xruns(), [.injected])
    }

    func testUnpluggedCardFailsWithENODEVUntilReconnected() throws {
        let pcm = try PCM(card.hardwarePCMName)
        try pcm.configure(periodFrames: 960, periods: 4)
        try pcm.write(Signal.silence(frames: 3_840, channels: 2))
        card.disconnect()
        var failure: ALSAError?
        for _ in 0..<50 where failure == nil {
            do { try pcm.write(Signal.silence(frames: 960, channels: 2)) } catch { failure = error as? ALSAError }
        }
        XCTAssertEqual(failure, ALSAError(code: -ENODEV))
        XCTAssertEqual(pcm.state, SND_PCM_STATE_DISCONNECTED)
        XCTAssertThrowsError(try pcm.delay()) { XCTAssertEqual($0 as? ALSAError, ALSAError(code: -ENODEV)) }
        XCTAssertThrowsError(try PCM(card.hardwarePCMName)) { XCTAssertEqual($0 as? ALSAError, ALSAError(code: -ENODEV)) }
        XCTAssertThrowsError(try PCM(card.pcmName)) { XCTAssertEqual($0 as? ALSAError, ALSAError(code: -ENODEV)) }

        card.reconnect()
        let reopened = try PCM(card.hardwarePCMName)
        try reopened.configure(periodFrames: 960, periods: 4)
        try reopened.write(Signal.silence(frames: 1_920, channels: 2))
        try reopened.drain()
        let kinds = try card.events().map(\.kind)
        let disconnect = try XCTUnwrap(kinds.firstIndex(of: .disconnect))
        let noticed = try XCTUnwrap(kinds.firstIndex(of: .disconnected(.playback)))
        let reconnect = try XCTUnwrap(kinds.firstIndex(of: .reconnect))
        XCTAssertLessThan(disconnect, noticed)
        XCTAssertLessThan(noticed, reconnect)
        XCTAssertEqual(kinds.filter { $0 == .start(.playback) }.count, 2)
    }
}
