import Foundation
import Synchronization
import XCTest
import CAllocationTrap
import SFXCore
import SFXDevice
import SFXCardSupport
import SFX
@testable import SFXPlayback

/// The engine through the real alsa-lib and sfx's virtual card: what reaches the card, how
/// completions arrive, and how the engine lives through xruns, unplugging and disposal.
final class SoundEngineTests: XCTestCase {
    /// A 0.5 s two-tone test sound at 48 kHz mono with a soft start: easy to find in a recording.
    static func tone(seconds: Double = 0.5) -> [Float] {
        (0..<Int(48_000 * seconds)).map { i in
            let t = Double(i) / 48_000
            return Float(0.4 * sin(2 * .pi * 440 * t) + 0.2 * sin(2 * .pi * 1250 * t)) * Float(min(1, Double(i) / 480))
        }
    }

    /// The frame at which `reference` stands in `recording`, matching sample by sample, looked
    /// for just before the first audible frame (a voice's declick fade starts at exact zero).
    static func align(_ reference: [Float], in recording: [Float], near heard: Int,
                      _ same: (Float, Float) -> Bool) -> Int? {
        for start in stride(from: heard, through: max(0, heard - 64), by: -1) {
            let got = recording[(2 * start)...].prefix(reference.count)
            if got.count == reference.count, zip(got, reference).allSatisfy(same) { return start }
        }
        return nil
    }

    /// Index of the first non-zero sample's frame, or nil.
    static func firstSound(_ samples: [Float], channels: Int) -> Int? {
        samples.firstIndex { $0 != 0 }.map { $0 / channels }
    }

    func testWhatReachesTheCardIsTheOfflineRender() throws {
        let setup = try EngineOnCard()
        let tock = try setup.engine.systemSound(named: "tock")
        let tone = try setup.engine.load(buffer: Self.tone(), sampleRate: 48_000, channels: 1, name: "tone")
        let completions = Completions()
        let a = setup.engine.play(tock, volume: 0.7, pan: -0.4) { completions.record(VoiceID(1), $0) }
        let b = setup.engine.play(tone, volume: 0.5, pan: 0.6) { completions.record(VoiceID(2), $0) }
        XCTAssertNotEqual(a, b)
        XCTAssertTrue(setup.engine.waitUntilIdle(timeout: .seconds(5)))
        setup.engine.close()
        XCTAssertEqual(completions.all, [VoiceID(1): [.finished], VoiceID(2): [.finished]])

        let recording = try setup.recording()
        XCTAssertEqual(recording.sampleRate, 48_000)
        XCTAssertEqual(recording.channels, 2)
        let heard = try XCTUnwrap(Self.firstSound(recording.samples, channels: 2))
        // Both plays start at a period boundary: the second in the same period as the first or
        // a later one. The recording must equal the offline render for one of those offsets.
        let period = setup.engine.metrics.parameters.periodFrames
        var matched = false
        for periods in 0..<4 where !matched {
            let reference = try OfflineMix.render([
                OfflineMix.Play(sound: tock, at: 0, volume: 0.7, pan: -0.4),
                OfflineMix.Play(sound: tone, at: Double(periods * period) / 48_000, volume: 0.5, pan: 0.6),
            ], library: setup.engine.library)
            matched = Self.align(reference, in: recording.samples, near: heard) { $0 == $1 } != nil
        }
        XCTAssertTrue(matched, "the card's recording is not the offline render of the same plays")
        try? setup.card.remove()
    }

    func testSixteenBitOutputIsTheOfflineRenderQuantised() throws {
        let setup = try EngineOnCard(formats: [.s16])
        defer { setup.close() }
        XCTAssertEqual(setup.engine.metrics.parameters.format, .s16)
        let bell = try setup.engine.systemSound(named: "bell")
        setup.engine.play(bell, volume: 0.8)
        XCTAssertTrue(setup.engine.waitUntilIdle(timeout: .seconds(5)))
        setup.engine.close()
        let recording = try setup.recording()
        let heard = try XCTUnwrap(Self.firstSound(recording.samples, channels: 2))
        let reference = try OfflineMix.render([OfflineMix.Play(sound: bell, volume: 0.8)], library: setup.engine.library)
        let sixteenBit = reference.map { Float(max(-32768, min(32767, ($0 * 32768).rounded()))) / 32768 }
        XCTAssertNotNil(Self.align(sixteenBit, in: recording.samples, near: heard) { abs($0 - $1) <= 1e-7 },
                        "each sample is the offline sample rounded to 16 bits")
    }

    func testAThousandTriggersFromFourThreadsCompleteOnceEach() throws {
        let setup = try EngineOnCard(maxVoices: 32)
        defer { setup.close() }
        let click = try setup.engine.load(buffer: Self.tone(seconds: 0.02), sampleRate: 48_000, channels: 1)
        let completions = Completions()
        let ids = Mutex<[VoiceID]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for n in 0..<250 {
                let priority: VoicePriority = (n + thread) % 3 == 0 ? .high : .normal
                let voice = completions.play(click, on: setup.engine, volume: 0.1, priority: priority)
                ids.withLock { $0.append(voice) }
                if n % 10 == 0 { usleep(1_000) }
            }
        }
        XCTAssertTrue(setup.engine.waitUntilIdle(timeout: .seconds(20)))
        let all = completions.all
        XCTAssertEqual(Set(ids.withLock { $0 }).count, 1000, "every voice has its own id")
        XCTAssertEqual(all.count, 1000, "no completion lost")
        XCTAssertTrue(all.values.allSatisfy { $0.count == 1 }, "none delivered twice")
        let outcomes = all.values.map { $0[0] }
        XCTAssertGreaterThan(outcomes.filter { $0 == .finished }.count, 0)
        XCTAssertGreaterThan(outcomes.filter { $0 == .stolen }.count, 0, "32 voices cannot hold 1000 clicks")
        XCTAssertTrue(outcomes.allSatisfy { if case .rejected(let why) = $0 { why == .outranked } else { true } })
    }

    func testCallingTheEngineFromACompletionIsSafe() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let tock = try setup.engine.systemSound(named: "tock")
        let chain = Mutex(0)
        @Sendable func next(_ outcome: PlayOutcome) {
            guard chain.withLock({ $0 += 1; return $0 }) < 3 else { return }
            _ = try? setup.engine.systemSound(named: "tink")
            try? setup.engine.setGain(0.9, for: .effects)
            setup.engine.play(tock, completion: next)
        }
        setup.engine.play(tock, completion: next)
        XCTAssertTrue(eventually { chain.withLock { $0 } == 3 })
    }

    func testAnInjectedXrunIsSurvived() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let events = Mutex<[EngineEvent]>([])
        setup.engine.onEvent = { event in events.withLock { $0.append(event) } }
        let tone = try setup.engine.load(buffer: Self.tone(), sampleRate: 48_000, channels: 1)
        let voice = setup.engine.play(tone, volume: 0.5, loops: -1)
        usleep(300_000)
        setup.card.injectXrun()
        XCTAssertTrue(eventually { setup.engine.metrics.xruns >= 1 })
        XCTAssertTrue(eventually { events.withLock { $0.contains(.xrun(total: 1)) || $0.contains { if case .xrun = $0 { true } else { false } } } })
        let framesAtXrun = setup.engine.metrics.framesRendered
        usleep(400_000)
        XCTAssertGreaterThan(setup.engine.metrics.framesRendered, framesAtXrun + 9_600, "rendering goes on")
        voice.stop()
        XCTAssertTrue(setup.engine.waitUntilIdle(timeout: .seconds(5)))
        setup.engine.close()
        let log = try setup.card.events()
        let xrun = try XCTUnwrap(log.firstIndex { if case .xrun = $0.kind { true } else { false } })
        XCTAssertTrue(log[xrun...].contains { $0.kind == .start(.playback) }, "the stream started again after the xrun")
        let recording = try setup.recording()
        XCTAssertGreaterThan(recording.samples.suffix(48_000).map(abs).max() ?? 0, 0.1, "sound after the xrun")
    }

    func testUnplugAndReplugAreSurvived() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let events = Mutex<[EngineEvent]>([])
        setup.engine.onEvent = { event in events.withLock { $0.append(event) } }
        let tock = try setup.engine.systemSound(named: "tock")
        setup.engine.play(tock)
        XCTAssertTrue(setup.engine.waitUntilIdle(timeout: .seconds(5)))

        setup.card.disconnect()
        XCTAssertTrue(eventually { events.withLock { $0.contains { if case .deviceLost = $0 { true } else { false } } } },
                      "the loss is reported")
        XCTAssertTrue(eventually { !setup.engine.metrics.deviceOpen })
        // Plays still complete while the device is gone: the mixer runs by the clock.
        let outcome = Mutex<PlayOutcome?>(nil)
        setup.engine.play(tock) { result in outcome.withLock { $0 = result } }
        XCTAssertTrue(eventually { outcome.withLock { $0 } == .finished })

        setup.card.reconnect()
        XCTAssertTrue(eventually { events.withLock { $0.contains { if case .deviceRestored = $0 { true } else { false } } } },
                      "the engine reopens the device by itself")
        XCTAssertTrue(setup.engine.metrics.deviceOpen)
        setup.engine.play(tock)
        XCTAssertTrue(setup.engine.waitUntilIdle(timeout: .seconds(5)))
        setup.engine.close()
        XCTAssertGreaterThanOrEqual(setup.card.recordingURLs().count, 2, "a new stream after the replug")
        let onsetsAfter = try setup.card.events().drop { $0.kind != .reconnect }.filter {
            if case .onset = $0.kind { true } else { false }
        }
        XCTAssertFalse(onsetsAfter.isEmpty, "sound reached the card after the replug")
    }

    func testDisposingASoundWhileItPlaysStopsItAndFreesItLater() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let tone = try setup.engine.load(buffer: Self.tone(), sampleRate: 48_000, channels: 1)
        weak let cue = setup.engine.library.cue(for: tone)
        XCTAssertNotNil(cue)
        let outcomes = Completions()
        for n in 0..<3 {
            setup.engine.play(tone, loops: -1) { outcomes.record(VoiceID(UInt64(n)), $0) }
        }
        usleep(200_000)
        try setup.engine.dispose(tone)
        XCTAssertTrue(eventually { outcomes.all.count == 3 })
        XCTAssertEqual(Set(outcomes.all.values.map { $0 }), [[.stopped]])
        XCTAssertTrue(eventually { cue == nil }, "freed once the real-time thread let go of it")
        let late = Mutex<PlayOutcome?>(nil)
        setup.engine.play(tone) { result in late.withLock { $0 = result } }
        XCTAssertTrue(eventually { late.withLock { $0 } != nil })
        XCTAssertEqual(late.withLock { $0 }, .rejected(.unknownSound(tone)), "a disposed sound cannot play")
    }

    func testTheOutputMixerControlIsReadable() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        XCTAssertEqual(setup.engine.outputMaster()?.isMuted, false)
        setup.card.masterSwitch = false
        XCTAssertTrue(eventually { setup.engine.outputMaster()?.switchOn == false })
        XCTAssertEqual(setup.engine.outputMaster()?.isMuted, true)
        setup.card.masterSwitch = true
        setup.card.masterVolume = 0
        XCTAssertTrue(eventually { setup.engine.outputMaster()?.volume == 0 })
        XCTAssertEqual(setup.engine.outputMaster()?.isMuted, true)
    }

    func testTheRealtimeThreadNeverAllocates() throws {
        // The trap itself must see an allocation on the watched thread.
        allocation_trap_watch(sfx_test_gettid())
        let probe = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 8)
        probe.deallocate()
        XCTAssertGreaterThan(allocation_trap_count(), 0, "the allocation trap works")
        allocation_trap_watch(0)

        let setup = try EngineOnCard(period: 256, periods: 4)
        defer { setup.close() }
        let tock = try setup.engine.systemSound(named: "tock")
        let tone = try setup.engine.load(buffer: Self.tone(), sampleRate: 48_000, channels: 1)
        // Warm up: every code path once.
        for _ in 0..<3 {
            setup.engine.play(tock).stop()
            try? setup.engine.play(tone, pan: 0.3).setVolume(0.2)
        }
        XCTAssertTrue(setup.engine.waitUntilIdle())
        let thread = setup.engine.metrics.outputThreadID
        XCTAssertGreaterThan(thread, 0)
        allocation_trap_watch(thread)
        for n in 0..<200 {
            let voice = setup.engine.play(n % 2 == 0 ? tock : tone, volume: 0.3, pan: Float(n % 5) / 5 - 0.4,
                                          priority: n % 7 == 0 ? .high : .normal)
            if n % 3 == 0 { try voice.setPan(0.5); try voice.setVolume(0.1) }
            if n % 4 == 0 { try voice.stop(fade: .milliseconds(3)) }
            if n % 50 == 0 { try setup.engine.setGain(0.8, for: .effects) }
            usleep(2_000)
        }
        XCTAssertTrue(setup.engine.waitUntilIdle())
        usleep(100_000)
        let calls = allocation_trap_count()
        allocation_trap_watch(0)
        XCTAssertEqual(calls, 0, "the real-time thread called the allocator \(calls) times")
        XCTAssertGreaterThan(setup.engine.metrics.framesRendered, 48_000 / 4)
    }

    func testIdleTimeoutClosesTheDeviceAndThePlayReopensIt() throws {
        let setup = try EngineOnCard(idleTimeout: .milliseconds(200))
        defer { setup.close() }
        XCTAssertTrue(eventually { !setup.engine.metrics.deviceOpen }, "closed after 200 ms of silence")
        let tock = try setup.engine.systemSound(named: "tock")
        let outcome = Mutex<PlayOutcome?>(nil)
        setup.engine.play(tock) { result in outcome.withLock { $0 = result } }
        XCTAssertTrue(eventually { outcome.withLock { $0 } == .finished })
        setup.engine.close()
        XCTAssertTrue(try setup.card.events().contains { if case .onset = $0.kind { true } else { false } },
                      "the play reopened the device and was heard")
    }

    func testAnAbsentDeviceIsOneClearLine() throws {
        var configuration = SoundEngine.Configuration()
        configuration.output.device = "hw:7,0"
        configuration.whileNoDevice = .fail
        XCTAssertThrowsError(try SoundEngine(configuration: configuration)) { error in
            let message = String(describing: error)
            XCTAssertTrue(message.hasPrefix("audio device 'hw:7,0': open for playback failed"), message)
            XCTAssertTrue(message.contains("sfx devices"), message)
            XCTAssertFalse(message.contains("\n"))
        }
    }

    func testMetricsSayWhatWasNegotiated() throws {
        let setup = try EngineOnCard(period: 480, periods: 3)
        defer { setup.close() }
        let metrics = setup.engine.metrics
        XCTAssertEqual(metrics.parameters.periodFrames, 480)
        XCTAssertEqual(metrics.parameters.bufferFrames, 1440)
        XCTAssertEqual(metrics.parameters.startThreshold, 480)
        XCTAssertEqual(metrics.parameters.format, .float32)
        XCTAssertTrue(eventually { setup.engine.metrics.realtimeGranted != nil })
        let log = try setup.card.events()
        XCTAssertTrue(log.contains { if case .swParams(_, startThreshold: 480, availMin: 480, _) = $0.kind { true } else { false } })
    }

    func testAPluginDeviceWithoutAMixerPlaysAndSaysMuteDetectionIsUnavailable() throws {
        let setup = try EngineOnCard(device: "plug:sfxcard_hw")
        defer { setup.close() }
        XCTAssertNil(setup.engine.outputMaster())
        let mute = setup.engine.muteState()
        XCTAssertFalse(mute.mixerAvailable)
        XCTAssertFalse(mute.isMuted)
        XCTAssertTrue(mute.description.contains("no mixer control"), mute.description)
        setup.engine.play(try setup.engine.systemSound(named: "tock"))
        XCTAssertTrue(setup.engine.waitUntilIdle())
        setup.engine.close()
        XCTAssertTrue(try setup.card.events().contains { if case .onset = $0.kind { true } else { false } })
    }

    func testARefusedRealtimePriorityIsReported() throws {
        // Priority 100 is beyond SCHED_FIFO's range (1…99): the kernel refuses it even for root.
        let events = Mutex<[EngineEvent]>([])
        let setup = try EngineOnCard(validating: false) { configuration in
            configuration.realtimePriority = 100
            configuration.onEvent = { event in events.withLock { $0.append(event) } }
        }
        defer { setup.close() }
        XCTAssertTrue(eventually { setup.engine.metrics.realtimeGranted == false })
        XCTAssertTrue(eventually { events.withLock { $0.contains { if case .realtimePriorityRefused = $0 { true } else { false } } } })
        setup.engine.play(try setup.engine.systemSound(named: "tock"))
        XCTAssertTrue(setup.engine.waitUntilIdle(), "it plays all the same")
    }

    func testPlaysAfterCloseAreRejected() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let tock = try setup.engine.systemSound(named: "tock")
        let looping = Mutex<PlayOutcome?>(nil)
        setup.engine.play(tock, loops: -1) { result in looping.withLock { $0 = result } }
        setup.engine.close()
        XCTAssertEqual(looping.withLock { $0 }, .stopped, "what still played completes as stopped")
        let late = Mutex<PlayOutcome?>(nil)
        setup.engine.play(tock) { result in late.withLock { $0 = result } }
        XCTAssertTrue(eventually { late.withLock { $0 } != nil })
        XCTAssertEqual(late.withLock { $0 }, .rejected(.engineClosed))
        XCTAssertEqual(late.withLock { $0 }?.description, "rejected: the engine is closed")
    }
}
