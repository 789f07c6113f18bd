import Foundation
import SFXCardSupport
import SFXTestSupport
import XCTest

/// What opening the card costs an ALSA client before its first frame: loading libsfxcard.so and
/// what it links. A hardware card's plugin (hw) is part of alsa-lib; the virtual card must add
/// as little, or every client's exec → DAC time (aplay's most of all) measures the card.
final class PluginLinkTests: XCTestCase {
    /// The DT_NEEDED entries of an ELF library.
    static func neededLibraries(of library: URL) throws -> [String] { try ELFFile(library).neededLibraries() }

    func testThePluginLinksNoSwiftRuntime() throws {
        let plugin = try VirtualCard.locatePlugin()
        let needed = try Self.neededLibraries(of: plugin)
        XCTAssertTrue(needed.contains("libasound.so.2"), "\(plugin.path) needs \(needed)")
        XCTAssertEqual(needed.filter { $0.hasPrefix("libswift") || $0.hasPrefix("libFoundation") || $0 == "libdispatch.so" }, [],
                       "\(plugin.path) loads the Swift runtime into every client that opens the card")
    }

    /// libsndfile and libsoxr (with FLAC, Vorbis, Opus, MPEG and OpenMP under them) are for a
    /// capture file, loaded when a capture stream with one opens; recordings are written by the
    /// card itself (recording.c). CaptureTests and FormatTests show both still work.
    func testThePluginLoadsNoCodecLibraryUntilACaptureFileIsRead() throws {
        let plugin = try VirtualCard.locatePlugin()
        let needed = try Self.neededLibraries(of: plugin)
        XCTAssertEqual(needed.filter { $0.hasPrefix("libsndfile") || $0.hasPrefix("libsoxr") }, [], "\(plugin.path) needs \(needed)")
    }

    /// All it loads is alsa-lib and the C library (not libstdc++, which swiftc's link of the
    /// Swift runtime names: Sources/SFXCardPlugin/link).
    func testThePluginLoadsOnlyAlsaLibAndTheCLibrary() throws {
        let plugin = try VirtualCard.locatePlugin()
        let needed = try Self.neededLibraries(of: plugin)
        XCTAssertEqual(Set(needed).subtracting(["libasound.so.2", "libm.so.6", "libc.so.6"]), [], "\(plugin.path) needs \(needed)")
    }
}
