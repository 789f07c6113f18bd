import Foundation
import XCTest
@testable import SFXMedia

final class IniAndBundleTests: XCTestCase {
    func testIniParsing() throws {
        let ini = IniFile(parsing: """
            orphan=ignored
            # comment
            [Sound Theme]
            Name = sfx
            Inherits=freedesktop, extra
            ; another comment
            [X-SFX Volumes]
            tock=0.8
            tock=0.9
            not a pair
            [Sound Theme]
            Comment=merged
            """)
        XCTAssertEqual(ini.groups.map(\.name), ["Sound Theme", "X-SFX Volumes"])
        XCTAssertEqual(ini["Sound Theme", "Name"], "sfx")
        XCTAssertEqual(ini["Sound Theme", "Comment"], "merged")
        XCTAssertEqual(ini.list(group: "Sound Theme", key: "Inherits"), ["freedesktop", "extra"])
        XCTAssertEqual(ini["X-SFX Volumes", "tock"], "0.9")
        XCTAssertEqual(ini.group("X-SFX Volumes")?.entries.map(\.key), ["tock"])
        XCTAssertNil(ini["Nope", "x"])
        XCTAssertNil(ini["Sound Theme", "orphan"])
        let directory = try TemporaryDirectory()
        assertMediaError({ try IniFile(contentsOf: directory.file("index.theme")) }) { $0 == .missingFile }
    }

    /// 60,000 sections (issue 9: a 770 KB file took 9.3 s when each header searched every group).
    /// The parser trims as Foundation's `.whitespaces` and `.whitespacesAndNewlines` do, without
    /// Foundation: every scalar either set holds, and their neighbours that neither does.
    func testTrimmingMatchesFoundationsWhiteSpace() throws {
        let scalars = (0...0x3100).compactMap(Unicode.Scalar.init).filter {
            CharacterSet.whitespacesAndNewlines.contains($0) || $0.properties.isWhitespace || [0x08, 0x0E, 0x1F, 0x21, 0x84, 0x86, 0x9F, 0xA1, 0x180E, 0x200B, 0xFEFF].contains($0.value)
        } + [Unicode.Scalar(0xFEFF)!]
        for scalar in scalars {
            let around = "\(scalar)\(scalar)a \(scalar) b\(scalar)"
            XCTAssertEqual(IniFile.trimmed(around, newlines: false), around.trimmingCharacters(in: .whitespaces), "U+\(String(scalar.value, radix: 16))")
            XCTAssertEqual(IniFile.trimmed(around, newlines: true), around.trimmingCharacters(in: .whitespacesAndNewlines), "U+\(String(scalar.value, radix: 16))")
        }
        XCTAssertEqual(IniFile.trimmed(" \t\r\n ", newlines: true), "")
        XCTAssertEqual(IniFile(parsing: "[G]\n\u{3000}key\u{A0}=\tvalue with spaces \r\n")["G", "key"], "value with spaces")
    }

    func testManySectionsParseAndLookUpByName() throws {
        var text = ""
        for index in 0..<60_000 {
            text += "[s\(index)]\nk=\(index)\n"
        }
        text += "[s17]\nextra=yes\n"
        let ini = IniFile(parsing: text)
        XCTAssertEqual(ini.groups.count, 60_000)
        XCTAssertEqual(ini.groups.last?.name, "s59999")
        XCTAssertEqual(ini["s42424", "k"], "42424")
        XCTAssertEqual(ini["s17", "extra"], "yes")
        XCTAssertEqual(ini["s17", "k"], "17")
        XCTAssertNil(ini["s60000", "k"])
    }

    func testBundleSearchOrder() throws {
        let root = try TemporaryDirectory()
        let repository = root.url.appending(path: "repo")
        try root.write("repo/Package.swift")
        try root.write("repo/Sounds/sfx/index.theme")
        let executable = repository.appending(path: ".build/debug/sfx").path
        try root.write("repo/.build/debug/sfx")
        let nowhere = root.url.appending(path: "elsewhere/File.swift").path

        XCTAssertEqual(try SoundBundle.locate(environment: [:], executablePath: executable, sourcePath: nowhere),
                       repository.appending(path: "Sounds").path)

        try root.write("prefix/bin/sfx")
        try root.write("prefix/share/sfx/sounds/sfx/index.theme")
        XCTAssertEqual(try SoundBundle.locate(environment: [:], executablePath: root.url.appending(path: "prefix/bin/sfx").path, sourcePath: nowhere),
                       root.url.appending(path: "prefix/share/sfx/sounds").path)

        XCTAssertEqual(try SoundBundle.locate(environment: [:], executablePath: nil, sourcePath: repository.appending(path: "Sources/SFXMedia/SoundBundle.swift").path),
                       repository.appending(path: "Sounds").path)

        let custom = root.url.appending(path: "prefix/share").path
        XCTAssertEqual(try SoundBundle.locate(environment: ["SFX_SOUNDS_DIR": custom], executablePath: executable, sourcePath: nowhere), custom)
        assertMediaError({ try SoundBundle.locate(environment: ["SFX_SOUNDS_DIR": "/no/such"], executablePath: executable, sourcePath: nowhere) }) {
            if case .failed = $0 { return true } else { return false }
        }
        let none = assertMediaError({ try SoundBundle.locate(environment: [:], executablePath: nil, sourcePath: nowhere) }) {
            if case .soundsDirectoryNotFound = $0 { return true } else { return false }
        }
        XCTAssertTrue(none?.description.contains("SFX_SOUNDS_DIR") ?? false)
    }
}
