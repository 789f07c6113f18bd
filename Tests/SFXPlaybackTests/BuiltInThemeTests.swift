import Foundation
import XCTest
import SFXCore
import SFX
@testable import SFXPlayback

/// A program that finds no Sounds/ directory (a game binary copied away from its build) still
/// has every bundled sound: the `sfx` theme is synthesised in memory, sample for sample what the
/// checkout's Sounds/ decodes to, and everything on disk still comes first.
final class BuiltInThemeTests: XCTestCase {
    var scratch: URL!

    override func setUpWithError() throws {
        scratch = FileManager.default.temporaryDirectory.appending(path: "sfx-builtin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch.appending(path: "bin"), withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: scratch)
    }

    /// The checkout's Sounds/, found from this test program's place in .build.
    var checkoutSounds: String {
        get throws { try SoundBundle.locate(environment: [:]) }
    }

    /// A library for a program at `scratch/bin/game` (no Sounds/ anywhere near it) that sees only
    /// `dataDirs` and a private `XDG_DATA_HOME`.
    func makeLibrary(dataDirs: String = "/nonexistent", extra: [String: String] = [:]) throws -> SoundLibrary {
        var configuration = SoundLibrary.Configuration()
        configuration.environment = ["XDG_DATA_DIRS": dataDirs, "XDG_DATA_HOME": scratch.appending(path: "data").path, "LANG": "C"]
            .merging(extra) { $1 }
        return SoundLibrary(configuration: configuration,
                            themes: try SoundLibrary.Themes(configuration: configuration, executablePath: scratch.appending(path: "bin/game").path))
    }

    func makeCheckoutLibrary() throws -> SoundLibrary {
        var configuration = SoundLibrary.Configuration()
        configuration.environment = ["XDG_DATA_DIRS": "/nonexistent", "XDG_DATA_HOME": scratch.appending(path: "data").path, "LANG": "C"]
        configuration.bundledSounds = try checkoutSounds
        return try SoundLibrary(configuration: configuration)
    }

    func testWithNoSoundsDirectoryEveryBundledSoundIsSynthesisedAsItsFileDecodes() throws {
        let memory = try makeLibrary()
        let disk = try makeCheckoutLibrary()
        let names = try FileManager.default.contentsOfDirectory(atPath: checkoutSounds + "/sfx/stereo")
            .filter { $0.hasSuffix(".wav") }.map { String($0.dropLast(4)) }.sorted()
        XCTAssertEqual(names.count, 29)
        for name in names {
            let file = try memory.systemSoundFile(named: name)
            XCTAssertEqual(file.file, "/dev/null/built-in/sfx/stereo/\(name).wav")
            XCTAssertEqual(file.theme, "sfx")
            let id = try memory.systemSound(named: name)
            XCTAssertEqual(id, try disk.systemSound(named: name), name)
            let synthesised = try XCTUnwrap(memory.cue(for: id)), decoded = try XCTUnwrap(disk.cue(for: id))
            XCTAssertEqual(synthesised.format, decoded.format, name)
            XCTAssertEqual(synthesised.frameCount, decoded.frameCount, name)
            withExtendedLifetime((synthesised, decoded)) {
                XCTAssertTrue(synthesised.samples.elementsEqual(decoded.samples), "\(name): samples differ from Sounds/")
            }
        }
    }

    func testTheListIsTheBundledOneWithItsIDsAndDescriptions() throws {
        let memory = try makeLibrary().systemSounds()
        let disk = try makeCheckoutLibrary().systemSounds()
        XCTAssertEqual(memory.count, 29)
        XCTAssertEqual(memory.map(\.name), disk.map(\.name))
        XCTAssertEqual(memory.map(\.id), disk.map(\.id))
        XCTAssertEqual(memory.map(\.description), disk.map(\.description))
        XCTAssertEqual(memory.map(\.file), disk.map { "/dev/null/built-in/sfx/stereo/" + URL(filePath: $0.file).lastPathComponent })
    }

    func testTheIndexInMemoryIsTheCheckoutsIndex() throws {
        let index = try String(contentsOfFile: checkoutSounds + "/sfx/index.theme", encoding: .utf8)
        XCTAssertEqual(BuiltInTheme().directory.indexes["sfx"], index)
    }

    func testOnlyTheSoundPlayedIsSynthesised() throws {
        let library = try makeLibrary()
        _ = try library.systemSound(named: "tock")
        XCTAssertNotNil(library.cue(for: SoundID(rawValue: 1000)))
        XCTAssertNil(library.cue(for: SoundID(rawValue: 1010)), "bell is made when it is asked for")
    }

    func testTheUsersThemeSFXSoundsDirAndInstalledThemesStillComeFirst() throws {
        // A user's own tock in the sfx theme's directory replaces the synthesised one; a
        // .disabled marker silences bell.
        let user = scratch.appending(path: "data/sounds/sfx/stereo")
        try FileManager.default.createDirectory(at: user, withIntermediateDirectories: true)
        let tockFile = try URL(filePath: checkoutSounds).appending(path: "sfx/stereo/tink.wav")
        try FileManager.default.copyItem(at: tockFile, to: user.appending(path: "tock.wav"))
        try Data().write(to: user.appending(path: "bell.disabled"))
        let library = try makeLibrary(dataDirs: "/usr/share")
        XCTAssertEqual(try library.systemSoundFile(named: "tock").file, user.appending(path: "tock.wav").path)
        XCTAssertThrowsError(try library.systemSound(named: "bell")) { error in
            XCTAssertEqual(String(describing: error), "system sound 'bell' is disabled by theme 'sfx' (it has bell.disabled): it plays nothing")
        }
        XCTAssertEqual(try library.systemSoundFile(named: "tink").file, "/dev/null/built-in/sfx/stereo/tink.wav")
        // Names sfx does not bundle come from the installed freedesktop theme, as before.
        XCTAssertEqual(try library.systemSoundFile(named: "phone-incoming-call").file,
                       "/usr/share/sounds/freedesktop/stereo/phone-incoming-call.oga")
        // SFX_SOUNDS_DIR names the bundle: nothing is synthesised.
        let pointed = try makeLibrary(extra: ["SFX_SOUNDS_DIR": checkoutSounds])
        XCTAssertNil(pointed.builtIn)
        XCTAssertEqual(try pointed.systemSoundFile(named: "tink").file, try checkoutSounds + "/sfx/stereo/tink.wav")
        // So does an installed <prefix>/share/sfx/sounds beside the program.
        try FileManager.default.createDirectory(at: scratch.appending(path: "share/sfx"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: scratch.appending(path: "share/sfx/sounds").path, withDestinationPath: checkoutSounds)
        XCTAssertEqual(try makeLibrary().systemSoundFile(named: "tink").file, scratch.appending(path: "share/sfx/sounds/sfx/stereo/tink.wav").path)
    }

    func testAnSFXSoundsDirThatNamesNothingIsStillAnError() throws {
        XCTAssertThrowsError(try makeLibrary(extra: ["SFX_SOUNDS_DIR": "/no/such/sounds"])) { error in
            XCTAssertTrue(String(describing: error).contains("SFX_SOUNDS_DIR names no directory"), "\(error)")
        }
    }
}
