import XCTest
final class SFXSoundDesignTestsPlaceholder: XCTestCase { func testNothing() {} }
