import Foundation
import SFXCore
import SFXDevice
import XCTest
import SFX
@testable import SFXPlayback

/// `Configuration.preloadedSystemSounds`: decoded with the library while the device opens, at the
/// format asked for; a device that grants another format gets a library of its own format.
final class PreloadedSoundsTests: XCTestCase {
    /// The null device, granting `sampleRate` whatever was asked.
    private struct GrantingDevices: PlaybackDeviceFactory {
        let sampleRate: Int

        func open(_ request: PlaybackRequest) throws(ALSAError) -> any PlaybackDevice {
            var granted = request
            granted.sampleRate = sampleRate
            return try NullPlaybackDevice(granted)
        }
    }

    private func engine(preload: [String], grantedRate: Int? = nil) throws -> SoundEngine {
        var configuration = SoundEngine.Configuration()
        configuration.output.device = "null"
        configuration.rewind = false
        configuration.deferredStart = true
        configuration.preloadedSystemSounds = preload
        if let grantedRate { configuration.devices = GrantingDevices(sampleRate: grantedRate) }
        return try SoundEngine(configuration: configuration)
    }

    private func tockID(_ library: SoundLibrary) throws -> SoundID {
        try XCTUnwrap(library.systemSounds().first { $0.name == "tock" }?.id)
    }

    func testAPreloadedSoundIsDecodedByTheTimeTheEngineIsMade() throws {
        let engine = try engine(preload: ["tock", "no-such-sound"])
        defer { engine.close() }
        let tock = try tockID(engine.library)
        let cue = try XCTUnwrap(engine.library.cue(for: tock), "tock was not decoded with the engine")
        XCTAssertEqual(cue.format, AudioFormat(sampleRate: 48_000, channels: 2))
        XCTAssertEqual(cue.frameCount, 3_840)
        XCTAssertEqual(try engine.systemSound(named: "tock"), tock)
        XCTAssertIdentical(engine.library.cue(for: tock), cue, "decoded again")
        // A name the theme lacks is reported where it is asked for, as without the preload.
        XCTAssertThrowsError(try engine.systemSound(named: "no-such-sound")) { error in
            guard case SoundError.unknownSystemSound(name: "no-such-sound", theme: _) = error else { return XCTFail("\(error)") }
        }

        let plain = try self.engine(preload: [])
        defer { plain.close() }
        XCTAssertNil(plain.library.cue(for: tock), "without the preload a sound waits for its first use")
    }

    func testADeviceThatGrantsAnotherRateGetsItsSoundsAtThatRate() throws {
        let engine = try engine(preload: ["tock"], grantedRate: 44_100)
        defer { engine.close() }
        XCTAssertEqual(engine.metrics.parameters.sampleRate, 44_100)
        XCTAssertEqual(engine.library.configuration.format, AudioFormat(sampleRate: 44_100, channels: 2))
        let tock = try engine.systemSound(named: "tock")
        let cue = try XCTUnwrap(engine.library.cue(for: tock))
        XCTAssertEqual(cue.format.sampleRate, 44_100)
        XCTAssertEqual(Double(cue.frameCount), 3_840 * 44_100 / 48_000, accuracy: 2)   // the 80 ms tock
    }
}
