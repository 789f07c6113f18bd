import XCTest
import SFXMedia
import SFXSoundDesign

/// The bundled sounds' loudness, measured with libebur128 in the files the generator makes.
final class SystemSoundLoudnessTests: XCTestCase {
    /// The classes, written out here as the theme's design gives them.
    static let classes: [String: [String]] = [
        "input-feedback": ["tock", "tink", "key-click", "button-pressed", "lock", "unlock", "camera-shutter",
                           "screen-capture", "audio-volume-change"],
        "notification": ["sent", "received", "message-new-instant", "message-new-email", "complete", "device-added",
                         "device-removed", "power-plug", "power-unplug", "service-login", "service-logout", "trash-empty"],
        "dialog": ["bell", "dialog-information", "dialog-question", "dialog-warning"],
        "alarm": ["alarm", "low-power", "suspend-error", "dialog-error"],
    ]
    static let targets: [String: Double] = ["input-feedback": -30, "notification": -26, "dialog": -24, "alarm": -14]

    /// Each generated file as libebur128 hears it: its 16-bit samples, as a decoder reads them.
    static let measured: [String: Loudness] = {
        var result: [String: Loudness] = [:]
        for sound in renderedTheme.sounds {
            let samples = pcm16(sound.wav).map { Float($0) / 32768 }
            result[sound.spec.name] = try? Loudness(interleaved: samples, sampleRate: 48_000, channels: 1, subject: sound.spec.name)
        }
        return result
    }()

    func testEverySoundIsInItsClass() {
        XCTAssertEqual(Self.classes.values.map(\.count).reduce(0, +), SystemSoundCatalog.all.count)
        for (title, names) in Self.classes {
            for name in names {
                XCTAssertEqual(SystemSoundCatalog.sound(named: name)?.loudnessClass.title, title, name)
            }
            XCTAssertEqual(LoudnessClass(rawValue: title)?.target, Self.targets[title], title)
        }
    }

    func testEverySoundIsWithinOneLUOfItsClassTarget() throws {
        for sound in renderedTheme.sounds {
            let name = sound.spec.name
            let loudness = try XCTUnwrap(Self.measured[name], name)
            let lufs = try XCTUnwrap(loudness.lufs, "\(name) measures as silence")
            let target = try XCTUnwrap(Self.targets[sound.spec.loudnessClass.title])
            XCTAssertEqual(lufs, target, accuracy: 1, "\(name) measures \(lufs) LUFS (\(loudness.method)), its class's target is \(target)")
        }
    }

    func testEveryTruePeakIsAtMostMinusOneDBTP() throws {
        for sound in renderedTheme.sounds {
            let truePeak = try XCTUnwrap(Self.measured[sound.spec.name]?.truePeak, sound.spec.name)
            XCTAssertLessThanOrEqual(truePeak, -1, "\(sound.spec.name) has a true peak of \(truePeak) dBTP")
        }
    }

    func testShortSoundsAreMeasuredByTheirLoudestWindow() throws {
        for sound in renderedTheme.sounds {
            let loudness = try XCTUnwrap(Self.measured[sound.spec.name])
            if sound.duration < 0.4 {
                XCTAssertNil(loudness.integrated, "\(sound.spec.name): no whole 400 ms block")
                XCTAssertEqual(loudness.lufs, loudness.momentaryMax, sound.spec.name)
            } else {
                XCTAssertEqual(loudness.lufs, loudness.integrated, sound.spec.name)
            }
        }
    }

    func testTheCataloguedFiguresAreWhatLibebur128Measures() throws {
        // The README prints these; they must be the files' real figures, to the tenth.
        for sound in renderedTheme.sounds {
            let loudness = try XCTUnwrap(Self.measured[sound.spec.name])
            XCTAssertEqual(sound.spec.measured.lufs, try XCTUnwrap(loudness.lufs), accuracy: 0.051, sound.spec.name)
            XCTAssertEqual(sound.spec.measured.truePeak, try XCTUnwrap(loudness.truePeak), accuracy: 0.051, sound.spec.name)
        }
    }

    func testTheMixedThemeHasNoJumpsWithinAClass() throws {
        // sfx's sounds of one class are within 2 LU of each other (±1 LU of one target).
        for (title, names) in Self.classes {
            let levels = try names.map { try XCTUnwrap(Self.measured[$0]?.lufs, $0) }
            XCTAssertLessThanOrEqual(levels.max()! - levels.min()!, 2, title)
        }
    }
}
