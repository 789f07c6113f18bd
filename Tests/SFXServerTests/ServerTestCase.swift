import Foundation
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
}
