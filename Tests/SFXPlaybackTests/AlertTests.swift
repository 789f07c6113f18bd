import Foundation
import Synchronization
import XCTest
import SFXCardSupport
import SFX
@testable import SFXPlayback

/// `alert` end to end on the virtual card: muted by the card's Master switch or by sfx's flag,
/// it vibrates (through a callback backend that records what it was told) and plays nothing.
final class AlertTests: XCTestCase {
    final class Buzzes: Sendable {
        let events = Mutex<[HapticEvent]>([])
        var ons: Int { events.withLock { $0.filter { if case .on = $0 { true } else { false } }.count } }
    }

    func makeSetup(_ buzzes: Buzzes, when: AlertVibration = .whenMuted) throws -> EngineOnCard {
        try EngineOnCard { configuration in
            configuration.haptics.callback = { event in buzzes.events.withLock { $0.append(event) } }
            configuration.hapticBackend = .callback
            configuration.alertVibration = when
        }
    }

    func onsets(_ card: VirtualCard) throws -> Int {
        try card.events().filter { if case .onset = $0.kind { true } else { false } }.count
    }

    func testMasterSwitchOffVibratesAndPlaysNothingThenOnPlays() throws {
        let buzzes = Buzzes()
        let setup = try makeSetup(buzzes)
        defer { setup.close() }
        let bell = try setup.engine.systemSound(named: "bell")

        setup.card.masterSwitch = false
        XCTAssertTrue(eventually { setup.engine.muteState().reasons == [.mixerSwitchOff(control: "Master")] })
        let muted = setup.engine.alert(bell)
        XCTAssertFalse(muted.played)
        XCTAssertTrue(muted.vibrated)
        setup.engine.waitForVibration()
        // Switched off when opened, one 400 ms buzz, and left off.
        XCTAssertEqual(buzzes.events.withLock { $0 }, [.off, .on(amplitude: 1, milliseconds: 400), .off])
        usleep(300_000)
        XCTAssertEqual(try onsets(setup.card), 0, "nothing reached the DAC")

        setup.card.masterSwitch = true
        XCTAssertTrue(eventually { !setup.engine.muteState().isMuted })
        let heard = setup.engine.alert(bell)
        XCTAssertTrue(heard.played)
        XCTAssertFalse(heard.vibrated)
        XCTAssertTrue(setup.engine.waitUntilIdle())
        XCTAssertTrue(eventually { (try? self.onsets(setup.card)) == 1 }, "the bell reached the DAC")
        XCTAssertEqual(buzzes.ons, 1, "no vibration while it can be heard")
    }

    func testMasterVolumeAtZeroCountsAsMuted() throws {
        let setup = try makeSetup(Buzzes())
        defer { setup.close() }
        setup.card.masterVolume = 0
        XCTAssertTrue(eventually { setup.engine.muteState().reasons == [.mixerVolumeZero(control: "Master")] })
    }

    func testTheMuteFlagMutesLikewise() throws {
        let buzzes = Buzzes()
        let setup = try makeSetup(buzzes)
        defer { setup.close() }
        let tock = try setup.engine.systemSound(named: "tock")
        try setup.engine.configuration.muteFlag.set(true)
        XCTAssertEqual(setup.engine.muteState().reasons, [.flag])
        XCTAssertTrue(setup.engine.alert(tock).vibrated)
        setup.engine.waitForVibration()
        usleep(200_000)
        XCTAssertEqual(try onsets(setup.card), 0)

        try setup.engine.configuration.muteFlag.set(false)
        XCTAssertTrue(setup.engine.alert(tock).played)
        XCTAssertTrue(setup.engine.waitUntilIdle())
        XCTAssertTrue(eventually { (try? self.onsets(setup.card)) == 1 })
        XCTAssertEqual(buzzes.ons, 1)
    }

    func testAlwaysVibratesAndPlays() throws {
        let buzzes = Buzzes()
        let setup = try makeSetup(buzzes, when: .always)
        defer { setup.close() }
        let result = setup.engine.alert(try setup.engine.systemSound(named: "tock"))
        XCTAssertTrue(result.played && result.vibrated)
        setup.engine.waitForVibration()
        XCTAssertEqual(buzzes.ons, 1)
    }

    func testAnAlertThatCanNeitherPlayNorVibrateSaysSo() throws {
        let setup = try EngineOnCard { configuration in
            configuration.haptics.inputDirectory = "/nonexistent"
            configuration.haptics.sysRoot = "/nonexistent"
        }
        defer { setup.close() }
        let events = Mutex<[EngineEvent]>([])
        setup.engine.onEvent = { event in events.withLock { $0.append(event) } }
        try setup.engine.configuration.muteFlag.set(true)
        let result = setup.engine.alert(try setup.engine.systemSound(named: "tock"))
        XCTAssertFalse(result.wasNoticed)
        let problem = try XCTUnwrap(result.vibrationProblem)
        XCTAssertTrue(problem.contains("sfx haptics"), problem)
        XCTAssertTrue(eventually { events.withLock { $0.contains { if case .alertUnheard = $0 { true } else { false } } } })
    }
}
