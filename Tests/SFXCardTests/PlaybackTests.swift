import CALSA
import Foundation
import SFXCardSupport
import XCTest

/// Playback through the real alsa-lib: real-time consumption, the recording, delay and onsets.
final class PlaybackTests: CardTestCase {
    func testOneSecondTakesOneSecondAndIsRecordedExactly() throws {
        let pcm = try PCM(card.hardwarePCMName)
        try pcm.configure(periodFrames: 960, periods: 4)
        let audio = Signal.noise(frames: 48_000, channels: 2)
        let seconds = try elapsed {
            try pcm.write(audio)
            try pcm.drain()
        }
        XCTAssertGreaterThan(seconds, 0.9)
        XCTAssertLessThan(seconds, 1.5)
        let recording = try WAVAudio(contentsOf: card.recordingURL)
        XCTAssertEqual(recording.sampleRate, 48_000)
        XCTAssertEqual(recording.channels, 2)
        XCTAssertEqual(recording.samples, audio)
    }

    /// snd_pcm_delay at an instant, plus that instant, predicts when the next frame written
    /// reaches the DAC; the card logs that moment for the onset the frame starts.
    func testDelayPredictsTheOnsetsDACTime() throws {
        let pcm = try PCM(card.hardwarePCMName)
        try pcm.configure(periodFrames: 960, periods: 4)
        for _ in 0..<10 { try pcm.write(Signal.silence(frames: 960, channels: 2)) }
        let before = VirtualCard.monotonicNanoseconds()
        let delay = try pcm.delay()
        let after = VirtualCard.monotonicNanoseconds()
        var click = Signal.silence(frames: 960, channels: 2)
        click[0] = 0.8
        click[1] = 0.8
        try pcm.write(click)
        try pcm.write(Signal.silence(frames: 1_920, channels: 2))
        try pcm.drain()

        let frameNanoseconds = 1e9 / 48_000
        let earliest = Double(before) + Double(delay) * frameNanoseconds - frameNanoseconds
        let latest = Double(after) + Double(delay) * frameNanoseconds + frameNanoseconds
        let onsets = try onsets()
        XCTAssertEqual(onsets.count, 1)
        let dac = Double(try XCTUnwrap(onsets.first).dac)
        XCTAssertGreaterThanOrEqual(dac, earliest, "the DAC heard the click before snd_pcm_delay said it could")
        XCTAssertLessThanOrEqual(dac, latest, "the DAC heard the click after snd_pcm_delay said it would")
        XCTAssertEqual(onsets.first?.frame, 9_600, "the click is the first frame after ten periods of silence")
        XCTAssertGreaterThan(delay, 0)
        XCTAssertLessThanOrEqual(delay, 3_840)
    }

    func testOnsetTimesFollowTheStreamStart() throws {
        let pcm = try PCM(card.hardwarePCMName)
        try pcm.configure(rate: 44_100, channels: 1, periodFrames: 882, periods: 3)
        var audio = Signal.silence(frames: 44_100 / 2, channels: 1)
        for start in [0, 4_410, 13_230] {   // sound at 0 ms, 100 ms and 300 ms, each 20 ms long
            for frame in start..<start + 882 { audio[frame] = 0.25 }
        }
        try pcm.write(audio)
        try pcm.drain()
        let events = try card.events()
        let start = try XCTUnwrap(events.first { $0.kind == .start(.playback) }).nanoseconds
        let onsets = try onsets()
        XCTAssertEqual(onsets.map(\.frame), [0, 4_410, 13_230])
        for onset in onsets {
            let expected = start + UInt64(onset.frame) * 1_000_000_000 / 44_100
            XCTAssertEqual(onset.dac, expected, "frame n reaches the DAC at start + n / rate")
        }
    }

    func testMMAPAccessWithWaitPlaysInRealTime() throws {
        let pcm = try PCM(card.hardwarePCMName)
        try pcm.configure(access: SND_PCM_ACCESS_MMAP_INTERLEAVED, periodFrames: 960, periods: 4)
        let audio = Signal.noise(frames: 24_000, channels: 2, seed: 7)
        var written = 0
        let seconds = try elapsed {
            while written < 24_000 {
                let avail = snd_pcm_avail_update(pcm.handle)
                guard avail >= 0 else { throw ALSAError(code: Int32(avail)) }
                if avail < 960 {
                    if pcm.state == SND_PCM_STATE_PREPARED { try check(snd_pcm_start(pcm.handle)) }
                    XCTAssertGreaterThan(try check(snd_pcm_wait(pcm.handle, 1_000)), 0, "snd_pcm_wait timed out")
                    continue
                }
                var areas: UnsafePointer<snd_pcm_channel_area_t>?
                var offset: snd_pcm_uframes_t = 0
                var frames = snd_pcm_uframes_t(min(Int(avail), 24_000 - written))
                try check(snd_pcm_mmap_begin(pcm.handle, &areas, &offset, &frames))
                let area = try XCTUnwrap(areas).pointee
                let base = area.addr! + Int(area.first / 8) + Int(offset) * Int(area.step / 8)
                let floats = base.assumingMemoryBound(to: Float.self)
                for i in 0..<Int(frames) * 2 { floats[i] = audio[written * 2 + i] }
                let committed = snd_pcm_mmap_commit(pcm.handle, offset, frames)
                guard committed >= 0 else { throw ALSAError(code: Int32(committed)) }
                written += committed
            }
            try pcm.drain()
        }
        XCTAssertGreaterThan(seconds, 0.4)
        XCTAssertLessThan(seconds, 1.0)
        XCTAssertEqual(try WAVAudio(contentsOf: card.recordingURL).samples, audio)
        let hw = try card.events().compactMap { if case .hwParams(_, let p) = $0.kind { p } else { nil } }
        XCTAssertEqual(hw.first?.access, "MMAP_INTERLEAVED")
    }

    func testPollDescriptorWakesWhenAPeriodIsFree() throws {
        let pcm = try PCM(card.hardwarePCMName)
        try pcm.configure(periodFrames: 960, periods: 2)
        try pcm.write(Signal.silence(frames: 1_920, channels: 2))   // full buffer; the stream started
        var descriptor = pollfd()
        XCTAssertEqual(snd_pcm_poll_descriptors(pcm.handle, &descriptor, 1), 1)
        var woken = false
        let seconds = elapsed {
            for _ in 0..<20 where !woken {
                descriptor.revents = 0
                guard poll(&descriptor, 1, 1_000) > 0 else { break }
                var revents: UInt16 = 0
                snd_pcm_poll_descriptors_revents(pcm.handle, &descriptor, 1, &revents)
                woken = revents & UInt16(POLLOUT) != 0
            }
        }
        XCTAssertTrue(woken)
        XCTAssertGreaterThan(seconds, 0.015, "a period (20 ms) must pass before there is room")
        XCTAssertLessThan(seconds, 0.5)
        XCTAssertGreaterThanOrEqual(snd_pcm_avail_update(pcm.handle), 960)
    }
}
