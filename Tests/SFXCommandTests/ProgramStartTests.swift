import Foundation
import SFXMedia
import SFXTestSupport
import XCTest

/// What `sfx` loads before its first line runs (sfx-bench --exec measures the time): the Swift
/// runtime and FoundationEssentials are linked into the program, and libcurl (Sources/CSFXCurl), libpulse
/// (Sources/CSFXPulse), libsndfile, libsoxr, libebur128 (Sources/CSFXMedia/on_demand.c) and
/// libgpiod (Sources/CSFXHaptics) are loaded at their first use, so none is a dependency, while
/// fetching a URL (through libcurl) still works and a missing library is named when it is needed.
final class ProgramStartTests: CommandTestCase {
    func testTheProgramLinksNoSwiftRuntimeNorALibraryLoadedOnFirstUse() throws {
        let needed = try Self.neededLibraries(of: Self.program)
        XCTAssertTrue(needed.contains("libasound.so.2"), "\(needed)")
        // The C++ runtime (the Swift runtime's) is linked from its archives too (Sources/SFXCommand/link).
        let shared = needed.filter {
            $0.hasPrefix("libstdc++") || $0.hasPrefix("libgcc_s")
                || $0.hasPrefix("libswift") || $0.hasPrefix("libFoundation") || $0.hasPrefix("lib_Foundation") || $0.hasPrefix("libdispatch")
                || $0.hasPrefix("libcurl") || $0.hasPrefix("libpulse") || $0.hasPrefix("libsoxr") || $0.hasPrefix("libebur128")
                || $0.hasPrefix("libgpiod") || $0.hasPrefix("libsndfile")
        }
        XCTAssertEqual(shared, [], "sfx loads these at every start")
    }

    /// No full Foundation in the program (its ICU data and FoundationNetworking were most of its
    /// size): FoundationEssentials alone, and HTTP through libcurl. Its dynamic symbol table holds
    /// mpg123_new alone (libsndfile must find sfx's quiet wrapper), none of the Swift inside.
    func testTheProgramHoldsNoFoundationNorICUAndExportsOnlyTheMpg123Wrapper() throws {
        let program = ELFFile(Self.program)
        let modules = try program.swiftModules()
        XCTAssertTrue(modules.contains("FoundationEssentials"), "\(modules.sorted())")
        XCTAssertTrue(modules.contains("SFXPlayback"), "\(modules.sorted())")
        for absent in ["Foundation", "FoundationInternationalization", "FoundationNetworking", "ICU"] {
            XCTAssertFalse(modules.contains(absent), "\(absent) is linked into \(Self.program.path)")
        }
        XCTAssertEqual(try program.exportedSymbols(), ["mpg123_new"])
        // libsfx.so, built from the same targets, likewise.
        let library = try ELFFile(Self.buildDirectory.appending(path: "libSFXC.so")).swiftModules()
        for absent in ["Foundation", "FoundationInternationalization", "FoundationNetworking", "ICU"] {
            XCTAssertFalse(library.contains(absent), "\(absent) is linked into libSFXC.so")
        }
    }

    /// 0.2 s of a 440 Hz tone at 0.25, 16-bit mono WAV at `rate`.
    func writeTone(to url: URL, rate: Int) throws -> [Float] {
        let tone = (0..<rate / 5).map { 0.25 * sin(Float($0) * 2 * .pi * 440 / Float(rate)) }
        var wav = Data()
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { wav.append(contentsOf: $0) } }
        wav.append(contentsOf: Array("RIFF".utf8)); append(UInt32(36 + tone.count * 2)); wav.append(contentsOf: Array("WAVE".utf8))
        wav.append(contentsOf: Array("fmt ".utf8)); append(UInt32(16)); append(UInt16(1)); append(UInt16(1))
        append(UInt32(rate)); append(UInt32(rate * 2)); append(UInt16(2)); append(UInt16(16))
        wav.append(contentsOf: Array("data".utf8)); append(UInt32(tone.count * 2))
        for sample in tone { append(Int16((sample * 32_767).rounded())) }
        try wav.write(to: url)
        return tone
    }

    /// An http URL goes through libcurl (Sources/CSFXCurl), loaded at the first transfer.
    func testAURLPlaysThroughCurlLoadedOnFirstUse() throws {
        let served = scratch.appending(path: "served", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        let tone = try writeTone(to: served.appending(path: "tone.wav"), rate: 48_000)

        let server = try LocalHTTPServer(script: "stream-server.py", serving: served)
        defer { server.stop() }
        let port = server.port

        let run = try sfx("play", "http://127.0.0.1:\(port)/normal/tone.wav")
        XCTAssertEqual(run.status, 0, run.stderr)
        // The card recorded the tone: its loudest sample is the tone's (0.25), give or take the
        // 16-bit quantisation.
        let recording = try AudioDecoder(format: .standard).decode(contentsOf: URL(filePath: try XCTUnwrap(run.recording, run.stdout)))
        XCTAssertGreaterThanOrEqual(recording.frameCount, tone.count, "the tone reached the card")
        XCTAssertEqual(recording.samples.map(abs).max() ?? 0, 0.25, accuracy: 0.001)
    }

    /// Without libcurl the program starts and plays, and an upload or a URL to play says in one
    /// line what to install: nothing links libcurl, and its loader's failure is an error, not a stop.
    func testWithoutLibcurlSfxStartsAndATransferSaysWhatToInstall() throws {
        let tock = try sfx(hiding: ["libcurl.so.4"], ["play", "tock"])
        XCTAssertEqual(tock.status, 0, tock.stderr)
        _ = try writeTone(to: scratch.appending(path: "tone.wav"), rate: 48_000)
        for arguments in [["upload", "tone.wav", "http://127.0.0.1:9/tone.wav"], ["play", "http://127.0.0.1:9/tone.wav"]] {
            let run = try sfx(hiding: ["libcurl.so.4"], arguments)
            XCTAssertEqual(run.status, 1, run.stderr)
            let lines = run.stderr.split(separator: "\n").filter { !$0.contains("virtual card") }
            XCTAssertEqual(lines.count, 1, run.stderr)
            XCTAssertTrue(run.stderr.contains("http://127.0.0.1:9/tone.wav: "), run.stderr)
            XCTAssertTrue(run.stderr.contains("libcurl.so.4 cannot be loaded for http(s)"), run.stderr)
            XCTAssertTrue(run.stderr.contains("install libcurl4"), run.stderr)
        }
    }

    /// Without libsndfile the program starts, and a sound to decode says in one line what to install.
    func testWithoutLibsndfileSfxStartsAndADecodeSaysWhatToInstall() throws {
        let version = try sfx(hiding: ["libsndfile.so.1"], ["--version"])
        XCTAssertEqual(version.status, 0, version.stderr)
        let play = try sfx(hiding: ["libsndfile.so.1"], ["play", "tock"])
        XCTAssertEqual(play.status, 1, play.stderr)
        assertOneLineToInstall(play, library: "libsndfile.so.1", package: "libsndfile1")
    }

    /// Without libsoxr (its file hidden in a mount namespace), a tock at the card's rate plays and
    /// a file that needs resampling says in one line what to install.
    func testWithoutLibsoxrOnlyAFileToResampleFailsAndSaysWhatToInstall() throws {
        func withoutSoxr(_ arguments: [String]) throws -> Run { try sfx(hiding: ["libsoxr.so.0"], arguments) }
        let tock = try withoutSoxr(["play", "tock"])
        XCTAssertEqual(tock.status, 0, tock.stderr)
        _ = try writeTone(to: scratch.appending(path: "tone44.wav"), rate: 44_100)
        let resampled = try withoutSoxr(["play", "tone44.wav"])
        XCTAssertEqual(resampled.status, 1, resampled.stderr)
        assertOneLineToInstall(resampled, library: "libsoxr.so.0", package: "libsoxr0")
    }

    /// `run`'s error is one line (besides the virtual card's) saying `library` cannot be loaded
    /// and which Debian package to install.
    func assertOneLineToInstall(_ run: Run, library: String, package: String, file: StaticString = #filePath, line: UInt = #line) {
        let lines = run.stderr.split(separator: "\n").filter { !$0.contains("virtual card") }
        XCTAssertEqual(lines.count, 1, run.stderr, file: file, line: line)
        XCTAssertTrue(run.stderr.contains("\(library) cannot be loaded"), run.stderr, file: file, line: line)
        XCTAssertTrue(run.stderr.contains("install Debian's \(package)"), run.stderr, file: file, line: line)
    }

    /// The front (bin/sfx) is what every `sfx` command starts with, and all a play through the
    /// daemon runs: it loads the C library alone, not the Swift runtime swiftc links into every
    /// product (about 2 ms, most of its round trip to the daemon).
    func testTheFrontLoadsOnlyTheCLibrary() throws {
        let needed = try Self.neededLibraries(of: Self.front)
        XCTAssertTrue(needed.contains("libc.so.6"), "\(needed)")
        XCTAssertEqual(Set(needed).subtracting(["libc.so.6", "libm.so.6"]), [], "the front needs \(needed)")
    }
}
