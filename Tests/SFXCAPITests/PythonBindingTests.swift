import Foundation
import XCTest
import SFXCardSupport

/// The Python binding (bindings/python), installed with pip into a fresh virtual environment over
/// an install of this build's libsfx, and its pytest suite run on the virtual card: the README's
/// Python example, completions on a Python thread, errors, alerts, vibration, no device, a recording,
/// a bank's events, alert captions (and a slow Python callback), plays at a frame, and the package
/// README's examples.
final class PythonBindingTests: XCTestCase {
    func testThePythonPackageInstallsWithPipAndItsTestsPassOnTheCard() throws {
        let scratch = try Installed.makeScratch()
        defer { Installed.removeScratch() }
        let prefix = scratch.appending(path: "prefix")
        let install = try shell("script/install --from \(quoted(Installed.products.path)) --prefix \(quoted(prefix.path))",
                                in: Installed.checkout)
        XCTAssertEqual(install.status, 0, install.output + install.errors)
        let card = try VirtualCard(directory: scratch.appending(path: "card"))
        let config = scratch.appending(path: "config/sfx")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        let buzz = scratch.appending(path: "buzz"), vibrations = scratch.appending(path: "vibrations")
        try "#!/bin/sh\necho \"$SFX_VIBRATE_PATTERN\" >> \(quoted(vibrations.path))\n".write(to: buzz, atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(buzz.path, 0o700), 0)
        try "[haptics]\nbackend = command\ncommand = \(buzz.path)\n".write(to: config.appending(path: "sfx.conf"), atomically: true, encoding: .utf8)

        // pip as a user runs it: a virtual environment (Debian's Python is externally managed),
        // with the system's setuptools, offline.
        // From a copy: pip's build leaves build/ and *.egg-info beside the sources.
        let venv = scratch.appending(path: "venv"), package = scratch.appending(path: "python")
        try FileManager.default.copyItem(at: Installed.checkout.appending(path: "bindings/python"), to: package)
        let pip = try shell("/usr/bin/python3 -m venv --system-site-packages \(quoted(venv.path)) && "
                            + "\(quoted(venv.path))/bin/pip install --quiet --no-build-isolation --no-index --no-deps \(quoted(package.path))",
                            in: scratch, timeout: 300)
        XCTAssertEqual(pip.status, 0, "pip install ./bindings/python: \(pip.output)\(pip.errors)")
        let tests = try shell("\(quoted(venv.path))/bin/python -m pytest -q -p no:cacheprovider \(quoted(package.appending(path: "tests").path))",
                              in: scratch,
                              environment: ["SFX_LIBRARY": prefix.appending(path: "lib/libsfx.so.0").path,
                                            "ALSA_CONFIG_PATH": card.configURL.path,
                                            "SFX_TEST_CARD": card.directory.path,
                                            "SFX_TEST_README": Installed.checkout.appending(path: "README.md").path,
                                            "SFX_TEST_VIBRATIONS": vibrations.path,
                                            "XDG_CONFIG_HOME": scratch.appending(path: "config").path,
                                            "XDG_STATE_HOME": scratch.appending(path: "state").path],
                              timeout: 300)
        print(tests.output)
        XCTAssertEqual(tests.status, 0, "pytest: \(tests.output)\(tests.errors)")
        XCTAssertTrue(tests.output.contains("14 passed"), tests.output)
    }
}
