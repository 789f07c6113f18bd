import Foundation
import SFXPlayback
import XCTest

/// Which channels an alert uses under each policy setting, and the do-not-disturb window.
final class AlertPolicyTests: XCTestCase {
    func testEachRuleMutedAndUnmuted() {
        for rule in AlertChannelRule.allCases {
            for muted in [false, true] {
                let want = rule == .always || (rule == .whenMuted && muted)
                let channels = AlertPolicy(sound: rule, vibrate: rule, flash: rule, caption: rule).channels(muted: muted)
                XCTAssertEqual(channels.vibrate, want, "\(rule) muted \(muted)")
                XCTAssertEqual(channels.flash, want, "\(rule) muted \(muted)")
                XCTAssertEqual(channels.caption, want, "\(rule) muted \(muted)")
                XCTAssertEqual(channels.sound, want && !muted, "\(rule) muted \(muted)")
            }
        }
    }

    func testOldVibrationSettingMapsOntoPolicy() {
        XCTAssertEqual(AlertPolicy(vibration: .never).vibrate, .never)
        XCTAssertEqual(AlertPolicy(vibration: .whenMuted).vibrate, .whenMuted)
        XCTAssertEqual(AlertPolicy(vibration: .always).vibrate, .always)
    }

    func testQuietHoursWrapMidnight() throws {
        let window = try XCTUnwrap(QuietHours(text: "22:00-07:00"))
        XCTAssertTrue(window.contains(minute: 23 * 60))
        XCTAssertTrue(window.contains(minute: 0))
        XCTAssertTrue(window.contains(minute: 6 * 60 + 59))
        XCTAssertFalse(window.contains(minute: 7 * 60))
        XCTAssertFalse(window.contains(minute: 12 * 60))
        XCTAssertFalse(window.contains(minute: 21 * 60 + 59))
        XCTAssertNil(QuietHours(text: "25:00-07:00"))
    }

    func testQuietHoursCaptionOnlyBelowPriority() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try XCTUnwrap(TimeZone(identifier: "UTC"))
        let night = try XCTUnwrap(calendar.date(from: DateComponents(year: 2026, month: 1, day: 1, hour: 23)))
        let policy = AlertPolicy(sound: .always, vibrate: .always, flash: .always,
                                 quietHours: QuietHours(text: "22:00-07:00"), quietHoursPriority: .high)
        let low = policy.channels(muted: false, priority: .normal, at: night, calendar: calendar)
        XCTAssertEqual(low, AlertChannels(sound: false, vibrate: false, flash: false, caption: true, quiet: true))
        let high = policy.channels(muted: false, priority: .high, at: night, calendar: calendar)
        XCTAssertTrue(high.sound && high.vibrate && high.flash && !high.quiet)
    }
}
