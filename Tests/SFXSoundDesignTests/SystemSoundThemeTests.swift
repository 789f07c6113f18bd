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

    func testIndexFollowsTheSoundThemeFormat() {
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
        var entries: [String: (id: Int, description: String)] = [:]
        for line in lines.dropFirst(10) where !line.isEmpty {
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

    func testReadmeListsEverySound() {
        let readme = renderedTheme.readme
        XCTAssertTrue(readme.contains("swift run sfx-make-sounds [Sounds]"))
        for sound in renderedTheme.sounds {
            let ms = Int((sound.duration * 1000).rounded())
            XCTAssertTrue(readme.contains("| \(sound.spec.id) | \(sound.spec.name) | \(sound.spec.description) | \(ms) ms |"),
                          sound.spec.name)
        }
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
