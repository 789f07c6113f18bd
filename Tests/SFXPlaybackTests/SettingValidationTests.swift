import Foundation
import Synchronization
import XCTest
import SFXCore
import SFXDevice
import SFXCardSupport
import SFX
@testable import SFXPlayback

/// Numbers out of range are refused with one line naming the setting and what it may be; none
/// of them traps.
final class SettingValidationTests: XCTestCase {
    /// Asserts that `body` throws a `SettingError` for `setting` whose line names `allowed`.
    func assertRefused(_ setting: String, allowed: String, file: StaticString = #filePath, line: UInt = #line,
                       _ body: () throws -> Void) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            guard let error = error as? SettingError else {
                return XCTFail("\(error) is not a SettingError", file: file, line: line)
            }
            XCTAssertEqual(error.setting, setting, file: file, line: line)
            // A value to switch on, not only a line.
            switch error {
            case .outOfRange(let named, _, let range):
                XCTAssertEqual(named, setting, file: file, line: line)
                XCTAssertTrue(range.hasPrefix(allowed), range, file: file, line: line)
            }
            let message = error.description
            XCTAssertTrue(message.hasPrefix(setting + " "), message, file: file, line: line)
            XCTAssertTrue(message.contains("out of range: use " + allowed), message, file: file, line: line)
            XCTAssertFalse(message.contains("\n"), file: file, line: line)
        }
    }

    func testAConfigurationOutOfRangeIsRefusedBeforeAnythingOpens() throws {
        let card = try VirtualCard()
        card.makeCurrent()
        defer { try? card.remove() }
        func engine(_ change: (inout SoundEngine.Configuration) -> Void) -> () throws -> Void {
            var configuration = SoundEngine.Configuration()
            configuration.output.device = card.hardwarePCMName
            change(&configuration)
            return { _ = try SoundEngine(configuration: configuration) }
        }
        assertRefused("output.periodFrames", allowed: "16…16384", engine { $0.output.periodFrames = -128 })
        assertRefused("output.periodFrames", allowed: "16…16384", engine { $0.output.periodFrames = .max })
        assertRefused("output.channels", allowed: "1…2", engine { $0.output.channels = -1 })
        assertRefused("output.sampleRate", allowed: "8000…384000", engine { $0.output.sampleRate = 0 })
        assertRefused("output.sampleRate", allowed: "8000…384000", engine { $0.output.sampleRate = .max })
        assertRefused("output.periodCount", allowed: "2…64", engine { $0.output.periodCount = -3 })
        assertRefused("output.periodCount", allowed: "2…64", engine { $0.output.periodCount = .max })
        assertRefused("output.formats", allowed: "one or more", engine { $0.output.formats = [] })
        assertRefused("maxVoices", allowed: "1…4096", engine { $0.maxVoices = 0 })
        assertRefused("maxVoices", allowed: "1…4096", engine { $0.maxVoices = .max })
        assertRefused("realtimePriority", allowed: "1…99", engine { $0.realtimePriority = 0 })
        assertRefused("realtimePriority", allowed: "1…99", engine { $0.realtimePriority = .max })
        assertRefused("idleTimeout", allowed: "0.001 seconds to 86400.0 seconds", engine { $0.idleTimeout = .seconds(Int64.max) })
        assertRefused("idleTimeout", allowed: "0.001 seconds", engine { $0.idleTimeout = .seconds(-1) })
        assertRefused("idleTimeout", allowed: "0.001 seconds", engine { $0.idleTimeout = .zero })
    }

    func testTheDeviceLayerRefusesARequestOutOfRange() throws {
        let card = try VirtualCard()
        card.makeCurrent()
        defer { try? card.remove() }
        let device = card.hardwarePCMName
        for request in [PlaybackRequest(device: device, periodFrames: -128), PlaybackRequest(device: device, periodFrames: .max),
                        PlaybackRequest(device: device, channels: -1), PlaybackRequest(device: device, sampleRate: -48_000),
                        PlaybackRequest(device: device, periodCount: .max)] {
            XCTAssertThrowsError(try PCMPlayback(request)) { error in
                let message = String(describing: error)
                XCTAssertTrue(message.contains("allowed: "), message)
                XCTAssertTrue(message.contains("EINVAL"), message)
                XCTAssertFalse(message.contains("\n"))
            }
        }
    }

    func testFadesVolumesPansAndGainsOutOfRangeAreRefused() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let engine = setup.engine
        let tone = try engine.load(buffer: SoundEngineTests.tone(), sampleRate: 48_000, channels: 1)
        let voice = engine.play(tone, loops: -1)
        assertRefused("fade", allowed: "0.0 seconds to 60.0 seconds") { try voice.stop(fade: .seconds(Int64.max)) }
        assertRefused("fade", allowed: "0.0 seconds to 60.0 seconds") { try voice.stop(fade: .milliseconds(-5)) }
        assertRefused("fade", allowed: "0.0 seconds to 60.0 seconds") { try engine.stopAll(fade: .seconds(Int64.max)) }
        assertRefused("fade", allowed: "0.0 seconds to 60.0 seconds") { try engine.stop(group: .ui, fade: .seconds(61)) }
        assertRefused("volume", allowed: "a number from 0.0 to 16.0") { try voice.setVolume(.nan) }
        assertRefused("volume", allowed: "a number from 0.0 to 16.0") { try voice.setVolume(-1) }
        assertRefused("pan", allowed: "a number from -1.0 to 1.0") { try voice.setPan(.nan) }
        assertRefused("pan", allowed: "a number from -1.0 to 1.0") { try voice.setPan(.infinity) }
        assertRefused("group gain", allowed: "a number from 0.0 to 16.0") { try engine.setGain(.nan, for: .music) }
        assertRefused("master gain", allowed: "a number from 0.0 to 16.0") { try engine.setMasterGain(17) }
        // In range, they go through: the looping voice still stops, with a fade of 60 s at most.
        try voice.setVolume(16)
        try voice.setPan(-1)
        try engine.setMasterGain(0)
        let outcome = Mutex<PlayOutcome?>(nil)
        let second = engine.play(tone, loops: -1) { result in outcome.withLock { $0 = result } }
        try second.stop(fade: .zero)
        XCTAssertTrue(eventually { outcome.withLock { $0 } == .stopped })
        try voice.stop(fade: .milliseconds(1))
        XCTAssertTrue(engine.waitUntilIdle(timeout: .seconds(5)))
    }

    func testAPlayWithANumberOutOfRangeIsRejectedNamingIt() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let engine = setup.engine
        let tock = try engine.systemSound(named: "tock")
        func rejection(_ play: (@escaping @Sendable (PlayOutcome) -> Void) -> Void) -> String? {
            let outcome = Mutex<PlayOutcome?>(nil)
            play { result in outcome.withLock { $0 = result } }
            XCTAssertTrue(eventually { outcome.withLock { $0 } != nil })
            guard case .rejected(let why) = outcome.withLock({ $0 }) else { return nil }
            guard case .invalidSetting(let error) = why else {
                XCTFail("\(why) is not an invalid setting")
                return nil
            }
            XCTAssertEqual(why.description, error.description)
            return why.description
        }
        let cases: [(String, (@escaping @Sendable (PlayOutcome) -> Void) -> Void)] = [
            ("volume nan is out of range: use a number from 0.0 to 16.0", { engine.play(tock, volume: .nan, completion: $0) }),
            ("volume inf is out of range", { engine.play(tock, volume: .infinity, completion: $0) }),
            ("pan nan is out of range: use a number from -1.0 to 1.0", { engine.play(tock, pan: .nan, completion: $0) }),
            ("pan 3.0 is out of range", { engine.play(tock, pan: 3, completion: $0) }),
            ("loops -2 is out of range: use -1…", { engine.play(tock, loops: -2, completion: $0) }),
            ("maxInstances -1 is out of range: use 0…", { engine.play(tock, maxInstances: -1, completion: $0) }),
        ]
        for (expected, play) in cases {
            let why = rejection(play)
            XCTAssertTrue(why?.hasPrefix(expected) == true, "\(why ?? "not rejected at once") — expected \(expected)")
        }
        XCTAssertEqual(rejection { engine.play(tock, volume: 16, pan: -1, loops: 0, maxInstances: 0, completion: $0) }, nil)
        XCTAssertTrue(engine.waitUntilIdle())
    }
}
