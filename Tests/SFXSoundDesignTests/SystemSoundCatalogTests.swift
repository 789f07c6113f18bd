import XCTest
import SFXSoundDesign

final class SystemSoundCatalogTests: XCTestCase {
    /// Ids are a promise to programs that store them: this table only ever grows.
    static let assignedIDs: [String: Int] = [
        "tock": 1000, "tink": 1001, "key-click": 1002, "lock": 1003, "unlock": 1004,
        "camera-shutter": 1005, "sent": 1006, "received": 1007, "alarm": 1008, "low-power": 1009,
        "bell": 1010, "message-new-instant": 1011, "dialog-warning": 1012, "dialog-error": 1013,
        "dialog-information": 1014, "complete": 1015, "device-added": 1016, "device-removed": 1017,
        "message-new-email": 1018, "power-plug": 1019, "power-unplug": 1020, "screen-capture": 1021,
        "audio-volume-change": 1022, "service-login": 1023, "service-logout": 1024, "trash-empty": 1025,
        "suspend-error": 1026, "button-pressed": 1027, "dialog-question": 1028,
    ]

    func testThereAreAtLeastTwentySounds() {
        XCTAssertGreaterThanOrEqual(SystemSoundCatalog.all.count, 20)
    }

    func testThePhoneAndFreedesktopSoundsArePresent() {
        let required = [
            "tock", "tink", "key-click", "lock", "unlock", "camera-shutter", "sent", "received", "alarm", "low-power",
            "bell", "message-new-instant", "dialog-warning", "dialog-error", "dialog-information", "complete",
            "device-added", "device-removed",
        ]
        let names = Set(SystemSoundCatalog.all.map(\.name))
        for name in required {
            XCTAssertTrue(names.contains(name), "missing \(name)")
        }
    }

    func testAssignedIDsNeverChange() {
        for (name, id) in Self.assignedIDs {
            XCTAssertEqual(SystemSoundCatalog.sound(named: name)?.id, id, name)
        }
    }

    func testIDsAreUniqueAndAppendedFrom1000() {
        let ids = SystemSoundCatalog.all.map(\.id)
        XCTAssertEqual(ids, Array(1000..<(1000 + ids.count)), "ids start at 1000 and are appended in order")
        XCTAssertEqual(Set(SystemSoundCatalog.all.map(\.name)).count, ids.count, "names are unique")
    }

    func testNamesAndDescriptionsFitTheThemeIndex() {
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789-")
        for sound in SystemSoundCatalog.all {
            XCTAssertTrue(sound.name.allSatisfy(allowed.contains), "\(sound.name): lower case, digits and dashes only")
            XCTAssertFalse(sound.description.isEmpty, sound.name)
            XCTAssertFalse(sound.description.contains("\n"), "\(sound.name): one line")
        }
    }

    func testLookupByNameAndID() {
        XCTAssertEqual(SystemSoundCatalog.sound(named: "bell")?.id, 1010)
        XCTAssertEqual(SystemSoundCatalog.sound(id: 1000)?.name, "tock")
        XCTAssertNil(SystemSoundCatalog.sound(named: "no-such-sound"))
        XCTAssertNil(SystemSoundCatalog.sound(id: 999))
    }
}
