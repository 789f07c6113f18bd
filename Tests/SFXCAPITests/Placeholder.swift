import XCTest
final class Placeholder: XCTestCase {}
