import CALSA
import Foundation
import SFXCardSupport
import XCTest

/// VirtualCard itself: its files, the plugin search, several cards in one process, the event log.
final class VirtualCardTests: CardTestCase {
    func testConfigurationNamesThePluginTheDirectoryAndTheDefaults() throws {
        let text = try String(contentsOf: card.configURL, encoding: .utf8)
        XCTAssertTrue(text.contains("</usr/share/alsa/alsa.conf>"))
        XCTAssertTrue(text.contains("pcm_type.sfxcard { lib \"\(card.pluginURL.path)\" }"))
        XCTAssertTrue(text.contains("dir \"\(card.directory.path)\""))
        XCTAssertTrue(text.contains("pcm.!default \"sfxcard\""))
        XCTAssertEqual(card.environment["ALSA_CONFIG_PATH"], card.configURL.path)
        XCTAssertTrue(card.masterSwitch)
        XCTAssertEqual(card.masterVolume, 100)
        XCTAssertFalse(card.isDisconnected)
    }

    func testTheDefaultDeviceIsTheCard() throws {
        let pcm = try PCM("default")
        try pcm.configure(periodFrames: 480, periods: 2)
        XCTAssertTrue(try card.events().contains { $0.kind == .open(.playback) })
    }

    func testSeveralCardsInOneProcess() throws {
        let other = try VirtualCard()
        defer { try? other.remove() }
        let first = try PCM(card.hardwarePCMName)
        try first.configure(rate: 44_100, periodFrames: 441, periods: 2)
        other.makeCurrent()
        let second = try PCM(other.hardwarePCMName)
        try second.configure(rate: 48_000, periodFrames: 480, periods: 2)
        try first.write(Signal.silence(frames: 882, channels: 2))
        try first.drain()
        let rates = { (card: VirtualCard) in
            try card.events().compactMap { if case .hwParams(_, let p) = $0.kind { p.rate } else { nil } }
        }
        XCTAssertEqual(try rates(card), [44_100])
        XCTAssertEqual(try rates(other), [48_000])
        XCTAssertTrue(try card.events().contains { $0.kind == .stop(.playback, frame: 882) })
    }

    func testRecordingCanBeTurnedOffAndTheLogStays() throws {
        let quiet = try VirtualCard(record: false)
        defer { try? quiet.remove() }
        quiet.makeCurrent()
        let pcm = try PCM(quiet.hardwarePCMName)
        try pcm.configure(periodFrames: 480, periods: 2)
        try pcm.write(Signal.silence(frames: 960, channels: 2))
        try pcm.drain()
        XCTAssertEqual(quiet.recordingURLs(), [], "no playback.wav")
        XCTAssertTrue(try quiet.events().contains { $0.kind == .stop(.playback, frame: 960) })
        card.makeCurrent()
    }

    func testAPluginPathThatDoesNotExistIsNamed() throws {
        setenv("SFXCARD_PLUGIN", "/nonexistent/libsfxcard.so", 1)
        defer { unsetenv("SFXCARD_PLUGIN") }
        XCTAssertThrowsError(try VirtualCard.locatePlugin()) { error in
            XCTAssertTrue("\(error)".contains("/nonexistent/libsfxcard.so"), "\(error)")
        }
    }

    func testTheBuiltPluginIsFound() throws {
        let plugin = try VirtualCard.locatePlugin()
        XCTAssertEqual(plugin.lastPathComponent, "libsfxcard.so")
        XCTAssertTrue(FileManager.default.fileExists(atPath: plugin.path))
    }

    func testAForeignEventLogIsRefusedWithTheLine() throws {
        try Data("not an event\n".utf8).write(to: card.eventsURL)
        XCTAssertThrowsError(try card.events()) { error in
            XCTAssertTrue("\(error)".contains("not an event"), "\(error)")
        }
    }

    func testAForeignStateFileIsRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "sfxcard-foreign-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(repeating: 7, count: 64).write(to: directory.appending(path: "state"))
        XCTAssertThrowsError(try VirtualCard(directory: directory)) { error in
            XCTAssertTrue("\(error)".contains("not a card state file"), "\(error)")
        }
    }

    func testWAVRoundTrip() throws {
        let audio = WAVAudio(sampleRate: 44_100, channels: 2, samples: Signal.noise(frames: 100, channels: 2))
        let url = card.directory.appending(path: "round-trip.wav")
        try audio.write(to: url)
        XCTAssertEqual(try WAVAudio(contentsOf: url), audio)
        XCTAssertEqual(audio.channel(1), stride(from: 1, to: 200, by: 2).map { audio.samples[$0] })
    }
}
