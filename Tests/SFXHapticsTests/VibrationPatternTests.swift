import SFXHaptics
import XCTest

final class VibrationPatternTests: XCTestCase {
    func testDefaultIsOneBuzzOfFourHundredMilliseconds() {
        XCTAssertEqual(VibrationPattern.default.segments, [.init(milliseconds: 400, amplitude: 1)])
        XCTAssertEqual(VibrationPattern.default.repeatIndex, -1)
    }

    func testTimingsAlternateOnAndOffStartingWithOn() throws {
        let pattern = try VibrationPattern(parsing: "200, 100,200")
        XCTAssertEqual(pattern.segments.map(\.milliseconds), [200, 100, 200])
        XCTAssertEqual(pattern.segments.map(\.amplitude), [1, 0, 1])
        XCTAssertEqual(pattern.timingsText, "200,100,200")
        XCTAssertEqual(pattern.amplitudesText, "1,0,1")
        XCTAssertEqual(pattern.totalMilliseconds, 500)
    }

    func testOneAmplitudeAppliesToEveryOnSegmentAndAListToEach() throws {
        XCTAssertEqual(try VibrationPattern(parsing: "200,100,200", amplitude: "0.5").segments.map(\.amplitude), [0.5, 0, 0.5])
        XCTAssertEqual(try VibrationPattern(parsing: "100,100,100", amplitude: "0,1,0.25").segments.map(\.amplitude), [0, 1, 0.25])
    }

    func testNamedEffectsParse() throws {
        XCTAssertEqual(try VibrationPattern(parsing: "double-click"), .doubleClick)
        XCTAssertEqual(try VibrationPattern(parsing: "click"), .click)
        XCTAssertEqual(try VibrationPattern(parsing: "heavy-click"), .heavyClick)
        XCTAssertEqual(try VibrationPattern(parsing: "tick"), .tick)
        XCTAssertLessThan(VibrationPattern.tick.totalMilliseconds, VibrationPattern.click.totalMilliseconds)
        XCTAssertLessThan(VibrationPattern.click.totalMilliseconds, VibrationPattern.heavyClick.totalMilliseconds)
    }

    func testRepeatIndex() throws {
        let pattern = try VibrationPattern(parsing: "300,200", repeatIndex: 0)
        XCTAssertEqual(pattern.repeatIndex, 0)
        XCTAssertEqual(pattern.description, "300,200 ms at 1,0, repeat from 0")
    }

    private func assertRefused(_ text: String, amplitude: String? = nil, repeatIndex: Int = -1, _ message: String,
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try VibrationPattern(parsing: text, amplitude: amplitude, repeatIndex: repeatIndex), file: file, line: line) { error in
            XCTAssertEqual((error as? PatternError)?.description, message, file: file, line: line)
        }
    }

    func testBadInputGivesOneLineNamingTheFix() {
        assertRefused(" ", "the vibration pattern is empty — give on/off durations in ms, e.g. 200,100,200")
        assertRefused("200,-5", "vibration duration -5 ms is negative — give 0…10000 ms")
        assertRefused("20000", "vibration duration 20000 ms is too long — give at most 10000 ms per segment")
        assertRefused("200,abc", "vibration duration 'abc' in '200,abc' is not a number — write e.g. 200,100,200")
        assertRefused("200,,100", "vibration duration an empty field in '200,,100' is not a number — write e.g. 200,100,200")
        assertRefused("200", amplitude: "1.5", "vibration amplitude 1.5 is out of range — give 0…1")
        assertRefused("200", amplitude: "loud", "vibration amplitude 'loud' in 'loud' is not a number — write e.g. 0.5 or 1,0,0.5")
        assertRefused("200,100,200", amplitude: "1,0",
                      "2 amplitudes for 3 durations — give one amplitude per duration, or one for all")
        assertRefused("200", amplitude: "0",
                      "the vibration pattern never switches on — give at least one non-zero duration with an amplitude above 0")
        assertRefused("200,100", repeatIndex: 2, "repeat index 2 is out of range — give -1 (no repeat) or 0…1")
        assertRefused("200,0", repeatIndex: 1, "the repeated part lasts 0 ms — make it at least 10 ms")
        let tooMany = Array(repeating: "10", count: 257).joined(separator: ",")
        assertRefused(tooMany, "the vibration pattern has 257 segments — give at most 256")
    }
}
