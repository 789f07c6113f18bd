import Foundation
import XCTest
import SFXMedia

/// The small edges of the new user's issue: M4A from `sfx render`, "aac" as a format, a word
/// that names a file here, errors in one line on the virtual card, a mistyped subcommand.
final class NewUserEdgeTests: CommandTestCase {
    func testRenderWritesM4AThroughFFmpegAndAACIsItsName() throws {
        let named = try sfx("render", "tock", "-o", "out.m4a")
        XCTAssertEqual(named.status, 0, named.stderr)
        XCTAssertTrue(named.stdout.hasPrefix("wrote out.m4a (m4a)"), named.stdout)
        let info = try sfx("info", "out.m4a")
        XCTAssertTrue(info.stdout.contains("audio/mp4") && info.stdout.contains("AAC") && info.stdout.contains("48000 Hz  2 ch"), info.stdout)
        // A file already there is replaced whole, and nothing but it is left behind.
        let again = try sfx("render", "bell", "-o", "out.m4a", "--format", "AAC", "-q")
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.contains("out.m4a") }, ["out.m4a"])
        XCTAssertGreaterThan(try AudioFileInfo(file: RawFilePath(scratch.appending(path: "out.m4a").path)).duration ?? 0, 0.5)
        let piped = try sfx("render", "tock", "-o", "-", "--format", "aac")
        XCTAssertEqual(piped.status, 64)
        XCTAssertTrue(piped.stderr.contains("M4A to a file only"), piped.stderr)
        let record = try sfx("record", "--format", "aac", "-o", "take.m4a", "--max", "0.2", "-q")
        XCTAssertEqual(record.status, 0, record.stderr)
        XCTAssertTrue(try sfx("info", "take.m4a").stdout.contains("audio/mp4"))
    }

    func testAWordThatNamesAFileOrDirectoryHereSaysHowToPlayIt() throws {
        try FileManager.default.createDirectory(at: scratch.appending(path: "adir"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: scratch.appending(path: "beep"))
        let directory = try sfx("play", "adir", "-q")
        XCTAssertEqual(directory.status, 1)
        XCTAssertEqual(directory.stderr, "sfx: no system sound named 'adir' (`sfx list` shows them); a directory named adir is here: name a sound file in it (./adir/…)\n")
        let file = try sfx("play", "beep", "-q")
        XCTAssertEqual(file.status, 1)
        XCTAssertTrue(file.stderr.hasSuffix("a file named beep is here: write ./beep (or -f beep) to play it\n"), file.stderr)
        let nothing = try sfx("play", "nothing-here", "-q")
        XCTAssertTrue(nothing.stderr.contains("no system sound named 'nothing-here' in theme 'sfx'"), nothing.stderr)
    }

    /// On the virtual card (as on a machine with no sound card) an error is the only line:
    /// the card's notice comes only once the sounds are loaded, or capture has started.
    func testAnErrorOnTheVirtualCardIsOneLine() throws {
        try Data("x".utf8).write(to: scratch.appending(path: "there.wav"))
        for arguments in [["play", "no-such-sound"], ["play", "tock", "--then", "no-such-sound"], ["alert", "no-such-sound"],
                          ["play", "there.wav"], ["record", "-o", "there.wav"]] {
            let run = try sfx(arguments)
            XCTAssertEqual(run.status, 1, "\(arguments)")
            XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, "\(arguments): \(run.stderr)")
            XCTAssertFalse(run.stderr.contains("virtual card"), "\(arguments): \(run.stderr)")
        }
        // Once it plays, the notice is still there.
        let played = try sfx("play", "tock")
        XCTAssertEqual(played.status, 0, played.stderr)
        XCTAssertTrue(played.stderr.contains("SFX_VIRTUAL_CARD=1: playing through sfx's virtual card"), played.stderr)
    }

    /// A sound over the 30 s a cue may last, where the command cannot stream it, says what to
    /// type: the library's advice to Swift callers (CueLimits, a Player) is not for the shell.
    func testASoundTooLongToHoldSaysWhatToTypeInstead() throws {
        let long = scratch.appending(path: "long.wav")
        try AudioFileWriter.write([Float](repeating: 0.1, count: 8_000 * 31), sampleRate: 8_000, channels: 1, to: long, as: .wavPCM16)
        try Data(count: 2 * 8_000 * 31).write(to: scratch.appending(path: "long.raw"))
        let bytes = try Data(contentsOf: long)
        for (arguments, input, instead) in [(["alert", "long.wav"], nil, "`sfx play long.wav` alone streams it"),
                                            (["play", "tock", "long.wav"], nil, "`sfx play long.wav` alone streams it"),
                                            (["render", "long.wav", "-o", "out.wav"], nil, "`sfx play long.wav` alone streams it"),
                                            (["play", "-"], bytes, "save it to a file and `sfx play` that alone"),
                                            (["play", "long.raw", "--format", "S16_LE", "--rate", "8000"], nil, "raw PCM is played whole")] as [([String], Data?, String)] {
            let run = try sfx(arguments + ["-q"], input: input)
            XCTAssertEqual(run.status, 1, "\(arguments)")
            XCTAssertTrue(run.stderr.contains(": is 31.0 s long, over the 30 s a sound held in memory may last; \(instead)"), "\(arguments): \(run.stderr)")
            XCTAssertFalse(run.stderr.contains("CueLimits") || run.stderr.contains("Player"), "\(arguments): \(run.stderr)")
            XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, "\(arguments): \(run.stderr)")
        }
    }

    func testAMistypedSubcommandSuggestsTheNearest() throws {
        for (typed, meant) in [("plya", "play"), ("recrod", "record"), ("lsit", "list"), ("alret", "alert")] {
            let run = try sfx(typed)
            XCTAssertEqual(run.status, 64)
            XCTAssertEqual(run.stderr, "sfx: unknown subcommand '\(typed)'; did you mean '\(meant)'? see 'sfx --help'\n")
        }
        let far = try sfx("frobnicate")
        XCTAssertEqual(far.stderr, "sfx: unknown subcommand 'frobnicate'; see 'sfx --help'\n")
    }
}
