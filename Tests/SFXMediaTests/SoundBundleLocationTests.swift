import Foundation
import XCTest
@testable import SFXMedia

/// Where the bundled sounds come from: places relative to the running program (its installed
/// prefix, the SwiftPM package whose build directory holds it), never where sfx was built.
final class SoundBundleLocationTests: TemporaryDirectoryTestCase {
    static let nobody: uid_t = 65_534

    func testACopiedProgramFindsNoSoundsAboveItOrWhereItWasBuilt() throws {
        try directory.write("Package.swift")
        try directory.write("Sounds/sfx/index.theme")
        let program = try directory.write("copy/sfx").path
        for executable in [program, nil] {
            assertMediaError({ try SoundBundle.locate(environment: [:], executablePath: executable) }) {
                if case .soundsDirectoryNotFound = $0 { return true } else { return false }
            }
        }
    }

    func testTheSoundsOfThePackageWhoseBuildDirectoryHoldsTheProgram() throws {
        try directory.write("repo/Package.swift")
        try directory.write("repo/Sounds/sfx/index.theme")
        let sounds = directory.file("repo/Sounds").path
        for layout in ["repo/.build/debug/sfx", "repo/.build/x86_64-unknown-linux-gnu/release/sfx"] {
            let program = try directory.write(layout).path
            XCTAssertEqual(try SoundBundle.locate(environment: [:], executablePath: program), sounds, layout)
        }
        try directory.write("repo/elsewhere/bin/sfx")
        assertMediaError({ try SoundBundle.locate(environment: [:], executablePath: self.directory.file("repo/elsewhere/bin/sfx").path) }) {
            if case .soundsDirectoryNotFound = $0 { return true } else { return false }
        }
    }

    func testInstalledSoundsAnotherUserControlsAreRefused() throws {
        let program = try directory.write("prefix/bin/sfx").path
        try directory.write("prefix/share/sfx/sounds/sfx/index.theme")
        XCTAssertEqual(try SoundBundle.locate(environment: [:], executablePath: program), directory.file("prefix/share/sfx/sounds").path)
        let share = directory.file("prefix/share/sfx")
        XCTAssertEqual(chown(share.path, Self.nobody, Self.nobody), 0)
        let error = assertMediaError({ try SoundBundle.locate(environment: [:], executablePath: program) }) {
            if case .failed = $0 { return true } else { return false }
        }
        XCTAssertTrue(error?.description.contains("\(share.path): belongs to uid 65534") ?? false, "\(String(describing: error))")
        XCTAssertEqual(chown(share.path, 0, 0), 0)
    }

    func testALibraryInAMultiarchDirectoryFindsThePrefixsSounds() throws {
        try directory.write("prefix/share/sfx/sounds/sfx/index.theme")
        let sounds = directory.file("prefix/share/sfx/sounds").path
        for layout in ["prefix/lib/libsfx.so.0", "prefix/lib/x86_64-linux-gnu/libsfx.so.0", "prefix/lib/arm-linux-gnueabihf/libsfx.so.0"] {
            let library = try directory.write(layout).path
            XCTAssertEqual(try SoundBundle.locate(environment: [:], executablePath: library), sounds, layout)
        }
        // Only a triplet under lib/ is skipped: another directory below lib/ is not a prefix's.
        let elsewhere = try directory.write("prefix/lib/games/libsfx.so.0").path
        assertMediaError({ try SoundBundle.locate(environment: [:], executablePath: elsewhere) }) {
            if case .soundsDirectoryNotFound = $0 { return true } else { return false }
        }
        for name in ["x86_64-linux-gnu", "aarch64-linux-gnu", "arm-linux-gnueabihf", "i386-linux-gnu"] {
            XCTAssertTrue(SoundBundle.isMultiarchTriplet(name), name)
        }
        for name in ["games", "sfx", "x86_64-linux", "linux-gnu", "X86_64-linux-gnu", "a-linux-gnu-b", "-linux-gnu"] {
            XCTAssertFalse(SoundBundle.isMultiarchTriplet(name), name)
        }
    }

    func testThisTestProgramFindsTheCheckoutsSounds() throws {
        let checkout = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        XCTAssertEqual(try SoundBundle.locate(environment: [:]), checkout.appending(path: "Sounds").path)
    }
}
