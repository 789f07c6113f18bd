import Foundation
import SFXMedia
import XCTest

/// sfx loads FFmpeg's libraries only when a file needs them (Sources/CSFXFFmpeg): they are not
/// among the program's dependencies, every other command works without them, and a file that
/// needs them says in one line what to install.
final class FFmpegOnDemandTests: CommandTestCase {
    /// The libraries' real files, as the dynamic loader finds them.
    static let libraries = ["libavformat.so.59", "libavcodec.so.59", "libswresample.so.4", "libavutil.so.57"]

    func testTheProgramDoesNotLinkFFmpeg() throws {
        let needed = try Self.neededLibraries(of: Self.program)
        XCTAssertFalse(needed.isEmpty)
        for library in ["libavformat", "libavcodec", "libswresample", "libavutil"] {
            XCTAssertFalse(needed.contains { $0.contains(library) }, "sfx links \(library): \(needed)")
        }
    }

    /// FFmpeg's codecs need libstdc++.so.6, which loads beside the C++ runtime linked into sfx
    /// from its archives (ProgramStartTests): an AAC file decodes and plays all the same.
    func testAnM4ADecodesThroughFFmpegBesideTheProgramsOwnCxxRuntime() throws {
        let url = scratch.appending(path: "memo.m4a")
        let encoder = try RecordingFile.create(url, encoding: RecordingEncoding(format: .m4a, sampleRate: 48_000, channels: 1))
        let tone = (0..<24_000).map { 0.25 * sin(Float($0) * 2 * .pi * 440 / 48_000) }
        try tone.withUnsafeBufferPointer { try encoder.append($0) }
        try encoder.finish()

        let info = try sfx("info", url.path)
        XCTAssertEqual(info.status, 0, info.stderr)
        XCTAssertTrue(info.stdout.contains("48000 Hz  1 ch"), info.stdout)
        let play = try sfx("play", url.path)
        XCTAssertEqual(play.status, 0, play.stderr)
        let recording = try XCTUnwrap(play.recording, play.stdout)
        XCTAssertEqual(try peak(URL(filePath: recording)), 0.25, accuracy: 0.05, "the tone is not what the card played")
    }

    /// Runs sfx with FFmpeg's library files hidden (as if not installed).
    func sfxWithoutFFmpeg(_ arguments: [String]) throws -> Run { try sfx(hiding: Self.libraries, arguments) }

    func testWithoutFFmpegAnM4ASaysWhatToInstallAndEverythingElseWorks() throws {
        // An MPEG-4 file's first box: libsndfile does not read it, FFmpeg would.
        var m4a = Data([0, 0, 0, 0x18]) + Data("ftypM4A ".utf8) + Data([0, 0, 0, 0]) + Data("M4A mp42".utf8)
        m4a += Data(count: 4096)
        try m4a.write(to: scratch.appending(path: "memo.m4a"))

        let info = try sfxWithoutFFmpeg(["info", "memo.m4a"])
        XCTAssertEqual(info.status, 1, info.stderr)
        let lines = info.stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, info.stderr)
        XCTAssertTrue(info.stderr.contains("memo.m4a"), info.stderr)
        XCTAssertTrue(info.stderr.contains("memo.m4a: libsndfile cannot read it and FFmpeg's libavutil.so.57 cannot be loaded"), info.stderr)
        XCTAssertTrue(info.stderr.contains("install Debian's libavformat59"), info.stderr)

        let play = try sfxWithoutFFmpeg(["play", "tock"])
        XCTAssertEqual(play.status, 0, play.stderr)
        XCTAssertNotNil(play.recording, play.stdout)
        let wav = try sfxWithoutFFmpeg(["info", "/usr/share/sounds/freedesktop/stereo/bell.oga"])
        XCTAssertEqual(wav.status, 0, wav.stderr)
    }
}
