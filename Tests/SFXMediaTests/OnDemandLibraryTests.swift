import Foundation
import XCTest

/// Sources/CSFXOnDemand/include/sfx_on_demand.h, which loads every library sfx loads on first use
/// (libsndfile, libsoxr, libebur128, FFmpeg, libcurl, libpulse, libgpiod; the virtual card's
/// libsndfile and libsoxr), checked from C: Tests/Support/OnDemandCheck/check.c, built with the
/// system's cc and run. What the loaders make of it is checked through sfx (ProgramStartTests,
/// FFmpegOnDemandTests).
final class OnDemandLibraryTests: TemporaryDirectoryTestCase {
    func testTheHeaderFromC() throws {
        let checkout = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let program = directory.file("on-demand-check")
        let build = try runProgramForOutput("/usr/bin/cc", ["-std=gnu11", "-Wall", "-Wextra", "-Werror",
                                                            "-I", checkout.appending(path: "Sources/CSFXOnDemand/include").path,
                                                            "-o", program.path, checkout.appending(path: "Tests/Support/OnDemandCheck/check.c").path, "-lm"])
        XCTAssertEqual(build.status, 0, "cc: \(build.output)")
        guard build.status == 0 else { return }
        let check = try runProgramForOutput(program.path, [])
        XCTAssertEqual(check.status, 0, check.output)
        XCTAssertEqual(check.output, "all checks passed\n")
    }
}
