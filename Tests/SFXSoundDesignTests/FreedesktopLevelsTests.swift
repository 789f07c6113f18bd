import Foundation
import XCTest
import SFXMedia
import SFXSoundDesign

/// The freedesktop theme's levels the class targets were set against (and the README prints)
/// are what libebur128 measures in the installed files.
final class FreedesktopLevelsTests: XCTestCase {
    func testEveryInstalledSoundIsListed() throws {
        let installed = try FileManager.default.contentsOfDirectory(atPath: FreedesktopLevels.directory)
            .filter { $0.hasSuffix(".oga") }.map { String($0.dropLast(4)) }.sorted()
        XCTAssertEqual(installed, FreedesktopLevels.all.map(\.name).sorted(),
                       "the installed sound-theme-freedesktop differs from the measured one; measure it again")
    }

    func testTheFiguresAreWhatLibebur128Measures() throws {
        for level in FreedesktopLevels.all {
            let url = URL(filePath: FreedesktopLevels.directory).appending(path: "\(level.name).oga")
            let loudness = try Loudness(contentsOf: url)
            XCTAssertEqual(try XCTUnwrap(loudness.lufs, level.name), level.lufs, accuracy: 0.051, level.name)
            XCTAssertEqual(try XCTUnwrap(loudness.truePeak, level.name), level.truePeak, accuracy: 0.051, level.name)
            XCTAssertEqual(loudness.duration, level.seconds, accuracy: 0.006, level.name)
        }
    }

    func testTheClassTargetsSitInsideTheFreedesktopRangeOfTheirClass() {
        // A target outside every freedesktop level of its class would make inherited sounds jump.
        for loudnessClass in LoudnessClass.allCases {
            let levels = FreedesktopLevels.all.filter { $0.loudnessClass == loudnessClass }.map(\.lufs)
            XCTAssertFalse(levels.isEmpty, loudnessClass.title)
            XCTAssertLessThanOrEqual(loudnessClass.target, levels.max()!, loudnessClass.title)
            XCTAssertGreaterThanOrEqual(loudnessClass.target, levels.min()!, loudnessClass.title)
        }
    }
}
