import Foundation
import XCTest

/// Rewind mode through a real sound server (a private PipeWire): PipeWire's own ALSA plugin
/// rewinds for real, so plays start by rewinding; ALSA's `pulse` plugin answers rewindable and
/// rewind but plays everything written, so the engine sees that the delay did not drop and
/// falls back to the classic path. `sfx play -v` reports which.
final class RewindServerTests: ServerTestCase {
    func verboseSetup(_ plugin: PrivateSoundServer.Plugin) throws -> String {
        let run = try SFXProgram(["play", "tock", "-v"], environment: server.clientEnvironment(plugin), in: server.directory)
        XCTAssertEqual(run.wait(seconds: 20), 0, run.output + run.errors)
        return run.output
    }

    func testThePipeWirePluginRewinds() throws {
        let output = try verboseSetup(.pipewire)
        XCTAssertTrue(output.contains("rewind active"), output)
    }

    func testThePulsePluginsIgnoredRewindIsDetected() throws {
        let output = try verboseSetup(.pulse)
        XCTAssertTrue(output.contains("rewind unsupported (the device accepted a rewind and ignored it), classic path"), output)
    }
}
