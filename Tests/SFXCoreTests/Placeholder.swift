import XCTest
final class SFXCoreTestsPlaceholder: XCTestCase { func testNothing() {} }
