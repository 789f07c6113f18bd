import Foundation
import SFXMedia
import XCTest

/// Usage errors name the flag, never a Swift property, and exit 64 (EX_USAGE), as docs/cli.md
/// says: every numeric option of every subcommand is given values it cannot take, and the
/// settings the library checks across options (the recorder's --min and --max, Opus's rates)
/// are given values the options alone allow.
final class UsageErrorTests: CommandTestCase {
    /// Placeholders of options that take a number.
    static let numeric: Set<String> = ["SECONDS", "HZ", "N", "FRAMES", "MS", "BPS", "Q", "GAIN", "DB", "PAN", "LUFS", "R", "INDEX"]

    /// Arguments that make each subcommand otherwise valid, so that the option tested is the
    /// only thing wrong.
    static let base: [String: [String]] = [
        "play": ["tock", "-q"], "alert": ["tock", "-q"], "render": ["tock", "-o", "out.wav", "-q"], "info": ["tock"],
        "record": ["-o", "take.wav", "--max", "0.2", "-q"], "meter": ["--seconds", "0.2"], "vibrate": ["--pattern", "10"],
        "upload": ["take.wav", "http://127.0.0.1:9/"], "load": ["take.wav"], "completion": ["bash"],
    ]

    /// A word as Swift code spells a property (two lower-case letters, then a capital:
    /// `maxDuration`, `output.periodFrames`), which no message to a shell user should hold.
    func swiftProperty(in text: String) -> String? {
        guard let range = text.range(of: #"\b[a-z]{2,}[A-Z][A-Za-z]*\b"#, options: .regularExpression) else { return nil }
        return String(text[range])
    }

    /// Every `--name VALUE` option of `subcommand` with a numeric value, from its help.
    func numericOptions(_ subcommand: String) throws -> [String] {
        let help = try sfx(subcommand, "--help")
        XCTAssertEqual(help.status, 0, subcommand)
        return help.stdout.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: #"--[a-z-]+ [A-Z]+\b"#, options: .regularExpression) else { return nil }
            let parts = line[range].split(separator: " ")
            return Self.numeric.contains(String(parts[1])) ? String(parts[0].dropFirst(2)) : nil
        }
    }

    func testEveryNumericOptionGivenAValueItCannotTakeIsAUsageErrorNamingIt() throws {
        try AudioFileWriter.write([Float](repeating: 0.1, count: 800), sampleRate: 8_000, channels: 1,
                                  to: scratch.appending(path: "take.wav"), as: .wavPCM16)
        let main = try sfx("--help")
        let subcommands = main.stdout.components(separatedBy: "SUBCOMMANDS:\n")[1].components(separatedBy: "\n\n")[0]
            .split(separator: "\n").filter { !$0.hasPrefix("   ") }.compactMap { $0.split(separator: " ").first.map(String.init) }
        var checked = 0
        for subcommand in subcommands {
            for option in try numericOptions(subcommand) {
                var base = Self.base[subcommand] ?? []
                if let index = base.firstIndex(of: "--\(option)") { base.removeSubrange(index...(index + 1)) }
                // Decibels go down to -inf (silence): only too loud is out of range.
                for value in ["abc", "99999999999"] + (option == "decibels" ? [] : ["-99999999999"]) {
                    let run = try sfx([subcommand] + base + ["--\(option)", value])
                    let what = "sfx \(subcommand) --\(option) \(value)"
                    XCTAssertEqual(run.status, 64, "\(what): \(run.stderr)")
                    XCTAssertTrue(run.stderr.hasPrefix("sfx: ") && run.stderr.contains("--\(option)"), "\(what): \(run.stderr)")
                    XCTAssertNil(swiftProperty(in: run.stderr), "\(what): \(run.stderr)")
                    checked += 1
                }
            }
        }
        XCTAssertGreaterThan(checked, 90, "too few options found in the help texts")
    }

    func testSettingsTheLibraryChecksAcrossOptionsNameTheFlags() throws {
        let cases: [([String], [String])] = [
            (["record", "--max", "0.5", "--min", "1", "-o", "a.wav"], ["--min 1", "--max 0.5"]),
            (["record", "--format", "opus", "--rate", "44100", "-o", "a.opus"], ["--rate", "Opus takes 8000, 12000, 16000, 24000, 48000 Hz"]),
            (["record", "--format", "opus", "--rate", "44100"], ["--rate"]),
            (["play", "tock", "--verbose", "--quiet"], ["--verbose", "--quiet"]),
        ]
        for (arguments, words) in cases {
            let run = try sfx(arguments)
            XCTAssertEqual(run.status, 64, "\(arguments): \(run.stderr)")
            for word in words { XCTAssertTrue(run.stderr.contains(word), "\(arguments): \(run.stderr)") }
            XCTAssertNil(swiftProperty(in: run.stderr), "\(arguments): \(run.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.appending(path: "a.wav").path), "a recording was made")
        }
    }
}
