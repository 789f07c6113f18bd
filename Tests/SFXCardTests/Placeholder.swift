import XCTest
final class SFXCardTestsPlaceholder: XCTestCase { func testNothing() {} }
