import XCTest
final class SFXTestsPlaceholder: XCTestCase { func testNothing() {} }
