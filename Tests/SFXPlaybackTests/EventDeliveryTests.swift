import Foundation
import Synchronization
import XCTest
import SFXCore
import SFXDevice
import SFXCardSupport
import SFX
@testable import SFXPlayback

/// Completions and events when a handler is slow: nothing is lost, nothing arrives twice, and
/// the delay is visible in `metrics` and as an event.
final class EventDeliveryTests: XCTestCase {
    /// A completion that blocks while far more plays end than the real-time thread's event ring
    /// holds (32,768): every play still completes once, with how it really ended.
    func testABlockingCompletionLosesNothing() throws {
        let events = Mutex<[EngineEvent]>([])
        // 5.3 ms periods; more voices than the real-time thread starts in one period, so no
        // play is stolen and every one finishes.
        let setup = try EngineOnCard(period: 256, periods: 4, maxVoices: 512) { configuration in
            configuration.onEvent = { event in events.withLock { $0.append(event) } }
        }
        defer { setup.close() }
        let blip = try setup.engine.load(buffer: [0.01, 0.02, 0.01, 0], sampleRate: 48_000, channels: 1)
        let plays = 40_000
        let release = DispatchSemaphore(value: 0)
        let blocked = Atomic<Bool>(false)
        let outcomes = Mutex<[PlayOutcome]>([])
        let counts = Mutex<[UInt64: Int]>([:])
        var sent = 0
        while sent < plays {
            for _ in 0..<500 {
                let n = UInt64(sent)
                setup.engine.play(blip) { outcome in
                    if !blocked.exchange(true, ordering: .relaxed) { release.wait() }
                    outcomes.withLock { $0.append(outcome) }
                    counts.withLock { $0[n, default: 0] += 1 }
                }
                sent += 1
            }
            usleep(20_000)
        }
        XCTAssertTrue(eventually(timeout: 10) { setup.engine.metrics.undeliveredEvents >= plays - 1 },
                      "the real-time thread kept handing completions over while the handler blocked")
        XCTAssertEqual(setup.engine.metrics.lostEvents, 0)
        release.signal()
        XCTAssertTrue(setup.engine.waitUntilIdle(timeout: .seconds(60)))
        XCTAssertEqual(outcomes.withLock { $0.count }, plays, "one completion a play")
        XCTAssertEqual(outcomes.withLock { $0.filter { $0 == .finished }.count }, plays, "each with its real outcome")
        XCTAssertEqual(counts.withLock { $0.count }, plays)
        XCTAssertTrue(counts.withLock { $0.values.allSatisfy { $0 == 1 } }, "none delivered twice")
        XCTAssertEqual(setup.engine.metrics.lostEvents, 0)
        XCTAssertEqual(setup.engine.metrics.undeliveredEvents, 0)
        XCTAssertTrue(events.withLock { $0.contains { if case .deliveryBehind = $0 { true } else { false } } },
                      "the backlog was reported")
    }

    /// When nothing drains the real-time thread's notice ring, the thread stops taking commands
    /// before the ring could overflow: commands wait, counted in `heldCommandPeriods`, and no
    /// notice is lost; once the ring is drained, the waiting commands are taken and every play
    /// reports exactly once.
    func testTheRealtimeThreadHoldsCommandsRatherThanLoseEvents() throws {
        let card = try VirtualCard()
        card.makeCurrent()
        defer { try? card.remove() }
        var request = PlaybackRequest(device: card.hardwarePCMName, periodFrames: 256, periodCount: 4)
        request.formats = [.float32]
        let pcm = try PCMPlayback(request)
        let mixer = Mixer(format: pcm.parameters.audioFormat, configuration: Mixer.Configuration(sampleRate: 48_000, maxVoices: 64))
        let commands = SPSCRing<MixerCommand>(capacity: 4096)
        let notices = SPSCRing<OutputNotice>(capacity: 2048)
        let budget = OutputThread.commandBudget(periodFrames: 256)
        let reserve = OutputThread.noticeReserve(slots: 64 + 16, commandBudget: budget)
        XCTAssertLessThan(reserve, notices.capacity)
        let output = OutputThread(device: pcm, parameters: pcm.parameters, mixer: mixer, commands: commands, notices: notices,
                                  settings: .init(request: request, realtimePriority: 70, idleFrames: 0),
                                  commandBudget: budget, noticeReserve: reserve)
        let cue = Cue(name: "blip", format: AudioFormat(sampleRate: 48_000, channels: 1), interleaved: [0.01, 0.02, 0.01, 0])
        let plays = 4000
        for n in 0..<plays { XCTAssertTrue(commands.push(.play(PlayRequest(voice: VoiceID(UInt64(n)), cue: cue)))) }
        output.start()
        XCTAssertTrue(eventually { output.heldCommandPeriods.load(ordering: .relaxed) > 0 }, "commands held back")
        XCTAssertGreaterThan(commands.count, 0, "some commands still wait")
        XCTAssertLessThanOrEqual(notices.count, notices.capacity - reserve + 2 * (64 + 16) + 2 * budget)

        var ended: [UInt64: Int] = [:]
        XCTAssertTrue(eventually(timeout: 20) {
            while let notice = notices.pop() {
                if case .mixer(let event) = notice, let voice = event.voice { ended[voice.rawValue, default: 0] += 1 }
            }
            return ended.count == plays
        })
        output.stop(drain: false)
        XCTAssertEqual(ended.count, plays, "every play reported")
        XCTAssertTrue(ended.values.allSatisfy { $0 == 1 }, "once each")
        XCTAssertEqual(output.lostNotices.load(ordering: .relaxed), 0)
        withExtendedLifetime(cue) {}
    }
}

/// The event thread's pace: it polls often only while something happens, so an engine left
/// playing a looping sound does not wake it 500 times a second.
final class EventPaceTests: XCTestCase {
    func testThePaceQuickensOnActivityAndSlowsWhenNothingCanEnd() {
        var pace = EventDelivery.Pace()
        XCTAssertEqual(pace.next(busy: true, anyCanEnd: true), 0.002)
        XCTAssertEqual((0..<6).map { _ in pace.next(busy: false, anyCanEnd: true) }, [0.004, 0.008, 0.016, 0.020, 0.020, 0.020])
        XCTAssertEqual(pace.next(busy: true, anyCanEnd: true), 0.002, "back to fast at once")
        XCTAssertEqual((0..<8).map { _ in pace.next(busy: false, anyCanEnd: false) },
                       [0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.2, 0.2], "nothing can end by itself: up to 200 ms")
        XCTAssertEqual(pace.next(busy: false, anyCanEnd: true), 0.020, "a play that can end brings it back to 20 ms")
    }

    /// Its voluntary context switches (each wake-up is one) over a second with one voice
    /// playing on the classic path: about 50 with a long sound, which can end by itself (20 ms),
    /// and 5 with an endless loop, which only a command ends (200 ms); the old 2 ms poll made
    /// 500. A loaded machine only wakes it less often, so the bounds cannot fail for load.
    func testAnEngineLeftPlayingWakesTheEventThreadRarely() throws {
        let setup = try EngineOnCard(period: 480, periods: 3)
        defer { setup.close() }
        let loop = try setup.engine.load(buffer: RewindTests.sine(seconds: 0.1, frequency: 440), sampleRate: 48_000, channels: 1)
        XCTAssertTrue(eventually { setup.engine.delivery.threadID.load(ordering: .acquiring) != 0 })
        let thread = setup.engine.delivery.threadID.load(ordering: .acquiring)
        XCTAssertEqual(try String(contentsOfFile: "/proc/self/task/\(thread)/comm", encoding: .utf8), "sfx-events\n",
                       "the event thread is named")
        for (loops, most) in [(30, 150), (-1, 25)] {
            let voice = setup.engine.play(loop, volume: 0.1, loops: loops)
            usleep(300_000)   // past the first notices
            let before = try Self.voluntarySwitches(thread)
            usleep(1_000_000)
            let wakeUps = try Self.voluntarySwitches(thread) - before
            XCTAssertLessThan(wakeUps, most, "loops \(loops): \(wakeUps) wake-ups in a second")
            XCTAssertGreaterThan(wakeUps, 2, "it still polls")
            // A command after the quiet spell is handed on: the stop completes.
            voice.stop()
            XCTAssertTrue(setup.engine.waitUntilIdle(timeout: .seconds(5)))
        }
    }

    static func voluntarySwitches(_ tid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/task/\(tid)/status", encoding: .utf8)
        let line = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") })
        return try XCTUnwrap(Int(line.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? ""))
    }
}
