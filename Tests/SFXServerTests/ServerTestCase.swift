import Foundation
import Glibc
import SFX
import XCTest

/// A test against a private sound server of its own (`PrivateSoundServer`), started before each
/// test and stopped after it, with the `sfx` program built beside the tests.
class ServerTestCase: XCTestCase {
    var server: PrivateSoundServer!

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: SFXProgram.url.path) else {
            throw ServerTestFailure("\(SFXProgram.url.path) is missing: build it first (swift build --build-tests, as script/test does)")
        }
        server = try PrivateSoundServer()
    }

    override func tearDown() {
        server?.shutdown()
    }

    /// Runs `body` with the server's client environment (`default` → `plugin`) set in this
    /// process, for engines made here: an engine reopens its device on a thread of its own, so
    /// the environment stays until `body` returns.
    func withClientEnvironment<T>(_ plugin: PrivateSoundServer.Plugin, _ body: () throws -> T) rethrows -> T {
        let wanted = server.clientEnvironment(plugin)
        let keys = Array(server.environment.keys) + ["ALSA_CONFIG_PATH"]
        let saved = keys.map { ($0, getenv($0).map { String(cString: $0) }) }
        for key in keys { setenv(key, wanted[key]!, 1) }
        defer { for (key, value) in saved { if let value { setenv(key, value, 1) } else { unsetenv(key) } } }
        return try body()
    }

    /// An engine on ALSA's `default` (inside `withClientEnvironment`), with a mute flag of the test's own.
    func makeEngine() throws -> SoundEngine {
        var configuration = SoundEngine.Configuration()
        configuration.muteFlag = MuteFlag(url: server.directory.appending(path: "muted"))
        return try SoundEngine(configuration: configuration)
    }
}
