// An engine that opens before its device exists (a card unplugged, a sound server not up yet):
// it runs on the clock, says why once, and attaches when the device can be opened
// (`Configuration.whileNoDevice`). On sfx's virtual card, unplugged at open and plugged in later.
import Foundation
import Synchronization
import XCTest
import SFXCore
import SFXCardSupport
import SFXDevice
import SFX
@testable import SFXPlayback

final class NoDeviceTests: XCTestCase {
    /// A card unplugged before the engine opens, and the engine's configuration for it.
    private func unpluggedCard(_ policy: NoDevicePolicy, rewind: Bool = false) throws -> (VirtualCard, SoundEngine.Configuration) {
        let card = try VirtualCard()
        card.makeCurrent()
        card.disconnect()
        var configuration = SoundEngine.Configuration()
        configuration.output.device = card.hardwarePCMName
        configuration.output.periodFrames = 960
        configuration.output.periodCount = 4
        configuration.rewind = rewind
        configuration.whileNoDevice = policy
        configuration.muteFlag = MuteFlag(url: card.directory.appending(path: "muted"))
        return (card, configuration)
    }

    private func onsets(_ card: VirtualCard) throws -> [CardEvent] {
        try card.events().filter { if case .onset = $0.kind { true } else { false } }
    }

    func testAnEngineOpensWithoutItsDeviceRunsOnTheClockAndAttachesWhenItComes() throws {
        for rewind in [false, true] {
            let (card, configuration) = try unpluggedCard(.mix, rewind: rewind)
            defer { try? card.remove() }
            let engine = try SoundEngine(configuration: configuration)
            defer { engine.close() }
            // A handler set after `init` still hears why there is no device, once.
            let events = Mutex<[(Double, EngineEvent)]>([])
            engine.onEvent = { event in events.withLock { $0.append((Date().timeIntervalSince1970, event)) } }
            XCTAssertTrue(eventually { events.withLock { !$0.isEmpty } })
            let first = try XCTUnwrap(events.withLock { $0.first?.1 })
            guard case .deviceUnavailable(let why) = first else { return XCTFail("rewind \(rewind): first event \(first)") }
            XCTAssertTrue(why.contains("'\(card.hardwarePCMName)'"), why)
            XCTAssertFalse(why.contains("\n"), why)
            let metrics = engine.metrics
            XCTAssertTrue(metrics.deviceLost)
            XCTAssertFalse(metrics.deviceOpen)
            XCTAssertEqual(metrics.deviceProblem, why)
            XCTAssertEqual(metrics.parameters.sampleRate, 48_000)

            // Plays run their course on the clock, unheard.
            let tock = try engine.systemSound(named: "tock")
            let outcome = Mutex<PlayOutcome?>(nil)
            engine.play(tock) { result in outcome.withLock { $0 = result } }
            XCTAssertTrue(eventually { outcome.withLock { $0 } == .finished }, "rewind \(rewind)")
            usleep(1_500_000)   // several retries fail meanwhile: still one report
            XCTAssertEqual(events.withLock { $0.count }, 1, "rewind \(rewind): \(events.withLock { $0.map(\.1) })")

            let plugged = Date().timeIntervalSince1970
            card.reconnect()
            XCTAssertTrue(eventually(timeout: 3) { engine.metrics.deviceOpen }, "rewind \(rewind): attached")
            let restoredEvent = { events.withLock { $0.first { if case .deviceRestored = $0.1 { true } else { false } } } }
            XCTAssertTrue(eventually { restoredEvent() != nil })
            let restored = try XCTUnwrap(restoredEvent())
            XCTAssertLessThan(restored.0 - plugged, 1.2, "rewind \(rewind): within a second of the device coming")
            XCTAssertNil(engine.metrics.deviceProblem)
            engine.play(tock)
            XCTAssertTrue(engine.waitUntilIdle(timeout: .seconds(5)))
            engine.close()
            XCTAssertFalse(try onsets(card).isEmpty, "rewind \(rewind): heard once the card came")
            print("rewind \(rewind): attached \(String(format: "%.3f", restored.0 - plugged)) s after the card came back")
        }
    }

    func testQueuedPlaysWaitForTheDeviceAndBeyondTheLimitAreRefused() throws {
        let (card, configuration) = try unpluggedCard(.queue(limit: 2))
        defer { try? card.remove() }
        let engine = try SoundEngine(configuration: configuration)
        defer { engine.close() }
        let tone = try engine.load(buffer: (0..<4800).map { Float(0.4 * sin(Double($0) * 0.05)) }, sampleRate: 48_000, channels: 1)
        let outcomes = Mutex<[Int: PlayOutcome]>([:])
        for n in 0..<3 {
            engine.play(tone) { result in outcomes.withLock { $0[n] = result } }
        }
        XCTAssertTrue(eventually { outcomes.withLock { $0[2] } != nil })
        guard case .rejected(.noDevice(let why))? = outcomes.withLock({ $0[2] }) else {
            return XCTFail("the third play: \(String(describing: outcomes.withLock { $0[2] }))")
        }
        XCTAssertTrue(why.contains(card.hardwarePCMName), why)
        usleep(600_000)
        XCTAssertNil(outcomes.withLock { $0[0] }, "a held play waits for the device")
        XCTAssertFalse(engine.waitUntilIdle(timeout: .milliseconds(100)), "held plays are not done")
        card.reconnect()
        XCTAssertTrue(eventually(timeout: 5) { outcomes.withLock { $0[0] == .finished && $0[1] == .finished } })
        engine.close()
        // Both played on the card, at once when it opened.
        let heard = try WAVAudio(contentsOf: XCTUnwrap(card.recordingURLs().last))
        XCTAssertGreaterThan(heard.samples.map(abs).max() ?? 0, 0.7, "the two held plays sounded together (0.4 each)")
    }

    /// A card configured by its index is followed by its id: unplugged, and plugged in again at
    /// another index, it is reopened as soon as the hot-plug watcher (synthetic udev events here)
    /// reports it, not at the next try of the back-off.
    func testACardBackAtAnotherIndexIsReopenedByItsNameWhenTheWatcherSeesIt() throws {
        let card = try VirtualCard()
        defer { try? card.remove() }
        card.makeCurrent()
        card.cardID = "Speaker"
        card.makeAsoundTree()
        let events = SyntheticCardEvents()
        var configuration = SoundEngine.Configuration()
        configuration.output.device = "sfxcard_card:0"
        configuration.output.periodFrames = 960
        configuration.output.periodCount = 4
        configuration.rewind = false
        configuration.asoundRoot = card.asoundRoot.path
        configuration.cardEvents = { events }
        configuration.muteFlag = MuteFlag(url: card.directory.appending(path: "muted"))
        let engine = try SoundEngine(configuration: configuration)
        defer { engine.close() }
        XCTAssertEqual(engine.metrics.parameters.device, "sfxcard_card:CARD=Speaker", "followed by its id")
        XCTAssertFalse(engine.deviceWatch.isWatching, "no watcher while the device plays")
        let tock = try engine.systemSound(named: "tock")
        engine.play(tock)
        XCTAssertTrue(engine.waitUntilIdle(timeout: .seconds(5)))

        card.disconnect()
        events.sendCard("remove", index: 0, id: "Speaker")
        XCTAssertTrue(eventually { engine.metrics.deviceLost })
        XCTAssertTrue(eventually { engine.deviceWatch.isWatching }, "watching once the device is lost: \(engine.deviceWatch.problem ?? "")")
        usleep(2_500_000)   // the back-off is at its longest (1 s) by now
        card.reconnect(index: 3)
        let plugged = Date()
        events.sendCard("add", index: 3, id: "Speaker")
        XCTAssertTrue(eventually(timeout: 3) { engine.metrics.deviceOpen })
        let attached = Date().timeIntervalSince(plugged)
        print(String(format: "back at index 3: reopened by its id %.3f s after the watcher saw it", attached))
        XCTAssertLessThan(attached, 0.5, "the watcher's word cut the back-off short")
        XCTAssertTrue(eventually { !engine.deviceWatch.isWatching }, "the watcher stops once the device plays")
        engine.play(tock)
        XCTAssertTrue(engine.waitUntilIdle(timeout: .seconds(5)))
        engine.close()
        let onsets = try card.events().drop { $0.kind != .reconnect }.filter { if case .onset = $0.kind { true } else { false } }
        XCTAssertEqual(onsets.count, 1, "heard after the card came back at its new index")
    }

    func testAChangeMattersWhenItIsTheDevicesCardOrTheDeviceNamesNone() throws {
        let (card, configuration) = try unpluggedCard(.mix)
        defer { try? card.remove() }
        let engine = try SoundEngine(configuration: configuration)
        defer { engine.close() }
        func watch(_ device: String) -> DeviceWatch {
            DeviceWatch(device: device, asoundRoot: card.asoundRoot.path, source: nil, output: engine.outputThread)
        }
        let speaker = CardChange(action: .add, cardIndex: 2, cardID: "Speaker", sysname: "card2", devnode: nil)
        XCTAssertTrue(watch("hw:CARD=Speaker,DEV=0").matters(speaker))
        XCTAssertTrue(watch("plughw:2").matters(speaker))
        XCTAssertFalse(watch("hw:CARD=Headset,DEV=0").matters(speaker))
        XCTAssertTrue(watch("default").matters(speaker), "a plugin's device may be any card")
        XCTAssertFalse(watch("hw:CARD=Speaker,DEV=0").matters(
            CardChange(action: .remove, cardIndex: 2, cardID: "Speaker", sysname: "card2", devnode: nil)))
    }

    func testFailThrowsTheDevicesError() throws {
        let (card, configuration) = try unpluggedCard(.fail)
        defer { try? card.remove() }
        XCTAssertThrowsError(try SoundEngine(configuration: configuration)) { error in
            XCTAssertTrue(error is ALSAError, "\(error)")
            XCTAssertTrue("\(error)".contains(card.hardwarePCMName))
        }
    }

    func testAnAlertWithNoDeviceVibratesInstead() throws {
        let (card, configuration) = try unpluggedCard(.mix)
        defer { try? card.remove() }
        var adjusted = configuration
        let buzzes = Mutex(0)
        adjusted.hapticBackend = .callback
        adjusted.haptics.callback = { event in if case .on = event { buzzes.withLock { $0 += 1 } } }
        let engine = try SoundEngine(configuration: adjusted)
        defer { engine.close() }
        let outcome = Mutex<PlayOutcome?>(nil)
        engine.alert(try engine.systemSound(named: "bell")) { result in outcome.withLock { $0 = result } }
        XCTAssertTrue(eventually { outcome.withLock { $0 } != nil })
        guard case .rejected(.muted(let state))? = outcome.withLock({ $0 }) else {
            return XCTFail("\(String(describing: outcome.withLock { $0 }))")
        }
        XCTAssertTrue(state.reasons.contains(.noOutput), "\(state)")
        engine.waitForVibration()
        XCTAssertEqual(buzzes.withLock { $0 }, 1, "it vibrated")
    }
}
