import Foundation
import XCTest
import SFXSoundDesign

final class SystemSoundThemeTests: XCTestCase {
    func testCommittedFilesMatchTheGenerator() throws {
        for file in renderedTheme.files {
            let url = committedSounds.appendingPathComponent(file.path)
            let committed = try XCTUnwrap(FileManager.default.contents(atPath: url.path),
                                          "\(file.path) is not committed; run `swift run sfx-make-sounds`")
            XCTAssertTrue(Array(committed) == file.bytes,
                          "\(file.path) differs from what the code makes; run `swift run sfx-make-sounds`")
        }
    }

    func testNoStraySoundFilesAreCommitted() throws {
        let folder = committedSounds.appendingPathComponent("sfx/stereo")
        let committed = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        XCTAssertEqual(committed, SystemSoundCatalog.all.map { "\($0.name).wav" }.sorted())
    }

    func testIndexFollowsTheSoundThemeFormat() throws {
        let lines = renderedTheme.index.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(Array(lines.prefix(10)), [
            "[Sound Theme]",
            "Name=sfx",
            "Comment=sfx's own system sounds, synthesised by sfx-make-sounds",
            "Inherits=freedesktop",
            "Directories=stereo",
            "",
            "[stereo]",
            "OutputProfile=stereo",
            "",
            "[X-SFX Sounds]",
        ])
        let loudnessHeader = try XCTUnwrap(lines.firstIndex(of: "[X-SFX Loudness Classes]"))
        var entries: [String: (id: Int, description: String)] = [:]
        for line in lines[10..<loudnessHeader] where !line.isEmpty {
            let keyValue = line.split(separator: "=", maxSplits: 1).map(String.init)
            let idDescription = keyValue[1].split(separator: ";", maxSplits: 1).map(String.init)
            entries[keyValue[0]] = (Int(idDescription[0]) ?? -1, idDescription[1])
        }
        XCTAssertEqual(entries.count, SystemSoundCatalog.all.count)
        for sound in SystemSoundCatalog.all {
            XCTAssertEqual(entries[sound.name]?.id, sound.id, sound.name)
            XCTAssertEqual(entries[sound.name]?.description, sound.description, sound.name)
        }
    }

    func testIndexGivesTheLoudnessClassOfEveryEvent() throws {
        let lines = renderedTheme.index.split(separator: "\n").map(String.init)
        let header = try XCTUnwrap(lines.firstIndex(of: "[X-SFX Loudness Classes]"))
        var classes: [String: String] = [:]
        for line in lines[(header + 1)...] {
            let keyValue = line.split(separator: "=", maxSplits: 1).map(String.init)
            XCTAssertEqual(keyValue.count, 2, line)
            XCTAssertNil(classes[keyValue[0]], "\(keyValue[0]) is listed twice")
            classes[keyValue[0]] = keyValue.last
        }
        for (title, names) in SystemSoundLoudnessTests.classes {
            for name in names { XCTAssertEqual(classes[name], title, name) }
        }
        // Inherited freedesktop events have their class too; the speaker tests have none.
        XCTAssertEqual(classes["message"], "notification")
        XCTAssertEqual(classes["window-attention"], "dialog")
        XCTAssertEqual(classes["phone-incoming-call"], "alarm")
        XCTAssertNil(classes["audio-channel-front-left"])
    }

    func testReadmeListsEverySound() {
        let readme = renderedTheme.readme
        XCTAssertTrue(readme.contains("swift run sfx-make-sounds [Sounds]"))
        for sound in renderedTheme.sounds {
            let ms = Int((sound.duration * 1000).rounded())
            XCTAssertTrue(readme.contains("| \(sound.spec.id) | \(sound.spec.name) | \(sound.spec.description) | \(ms) ms "
                                          + "| \(sound.spec.loudnessClass.title) | \(minus(sound.spec.loudnessClass.target)) "
                                          + "| \(minus(sound.spec.measured.lufs)) | \(minus(sound.spec.measured.truePeak)) |"),
                          sound.spec.name)
        }
    }

    func testReadmeGivesEachClassItsTargetAndReasonAndTheFreedesktopLevels() {
        let readme = renderedTheme.readme
        for loudnessClass in LoudnessClass.allCases {
            XCTAssertTrue(readme.contains("| \(loudnessClass.title) | \(minus(loudnessClass.target)) | \(loudnessClass.reason) |"),
                          loudnessClass.title)
        }
        for level in FreedesktopLevels.all {
            XCTAssertTrue(readme.contains("| \(level.name) | \(level.loudnessClass?.title ?? "—") | \(Int((level.seconds * 1000).rounded())) ms "
                                          + "| \(minus(level.lufs)) | \(minus(level.truePeak)) |"), level.name)
        }
    }

    /// A level to the tenth as the README writes it: −23.9.
    func minus(_ value: Double) -> String {
        String(format: "%.1f", value).replacingOccurrences(of: "-", with: "−")
    }

    func testSoundFilesAreCanonical48kHzMono16Bit() {
        for sound in renderedTheme.sounds {
            let wav = sound.wav
            XCTAssertEqual(wav.count, 44 + 2 * sound.samples.count, sound.spec.name)
            XCTAssertEqual(Array(wav[0..<4]), Array("RIFF".utf8))
            XCTAssertEqual(Array(wav[8..<16]), Array("WAVEfmt ".utf8))
            XCTAssertEqual(Array(wav[20..<24]), [1, 0, 1, 0], "PCM, mono")
            XCTAssertEqual(Array(wav[24..<28]), [0x80, 0xBB, 0, 0], "48000 Hz")
            XCTAssertEqual(Array(wav[34..<40]), [16, 0] + Array("data".utf8), "16-bit, then the data chunk")
        }
    }
}
