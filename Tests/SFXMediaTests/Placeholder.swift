import XCTest
final class SFXMediaTestsPlaceholder: XCTestCase { func testNothing() {} }
