import Foundation
import SFXTestSupport
import XCTest

/// script/install and script/uninstall: the layout, the library's SONAME and links, sfx.pc,
/// DESTDIR, and an uninstall that removes exactly what was installed.
final class InstallTests: XCTestCase {
    var scratch: URL!

    override func setUpWithError() throws { scratch = try Installed.makeScratch() }
    override func tearDown() { Installed.removeScratch() }

    func install(prefix: String, destdir: String? = nil) throws -> Run {
        let run = try shell("script/install --from \(quoted(Installed.products.path)) --prefix \(quoted(prefix))",
                            in: Installed.checkout, environment: destdir.map { ["DESTDIR": $0] } ?? [:])
        XCTAssertEqual(run.status, 0, run.output + run.errors)
        return run
    }

    func testInstallPutsEveryFileInItsPlaceAndPkgConfigNamesThem() throws {
        let prefix = scratch.appending(path: "prefix").path
        _ = try install(prefix: prefix)
        let files = Set(tree(URL(filePath: prefix)))
        for expected in ["bin/sfx", "lib/libsfx.so.0.1.0", "lib/libsfx.so.0", "lib/libsfx.so", "include/sfx.h",
                         "lib/pkgconfig/sfx.pc", "lib/sfx/libsfxcard.so", "share/man/man1/sfx.1",
                         "share/bash-completion/completions/sfx", "share/zsh/site-functions/_sfx",
                         "share/sfx/sounds/sfx/index.theme", "share/sfx/sounds/sfx/stereo/tock.wav",
                         "share/sfx/installed-files"] {
            XCTAssertTrue(files.contains(expected), "\(expected) not installed")
        }
        let bash = try String(contentsOfFile: prefix + "/share/bash-completion/completions/sfx", encoding: .utf8)
        XCTAssertTrue(bash.contains("complete -F") && bash.contains("play"), "the installed command's bash completion: \(bash)")
        let zsh = try String(contentsOfFile: prefix + "/share/zsh/site-functions/_sfx", encoding: .utf8)
        XCTAssertTrue(zsh.hasPrefix("#compdef sfx"), "the installed command's zsh completion: \(zsh.prefix(80))")
        let bundled = try FileManager.default.contentsOfDirectory(atPath: Installed.checkout.appending(path: "Sounds/sfx/stereo").path)
        let installed = try FileManager.default.contentsOfDirectory(atPath: prefix + "/share/sfx/sounds/sfx/stereo")
        XCTAssertEqual(Set(installed), Set(bundled))
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: prefix + "/lib/libsfx.so"), "libsfx.so.0")
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: prefix + "/lib/libsfx.so.0"), "libsfx.so.0.1.0")
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: prefix + "/include/sfx.h")[.posixPermissions] as? Int, 0o644)

        XCTAssertEqual(try ELFFile(URL(filePath: prefix + "/lib/libsfx.so.0.1.0")).soname(), "libsfx.so.0")

        let flags = try shell("pkg-config --cflags --libs sfx; pkg-config --modversion sfx", in: scratch,
                              environment: ["PKG_CONFIG_PATH": prefix + "/lib/pkgconfig"])
        XCTAssertEqual(flags.status, 0, flags.errors)
        XCTAssertEqual(flags.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) },
                       ["-I\(prefix)/include -L\(prefix)/lib -lsfx -Wl,-rpath,\(prefix)/lib", "0.1.0"])

        // The installed command runs, and says the version sfx.h and the library's file name say.
        let header = try String(contentsOf: Installed.checkout.appending(path: "Sources/CSFXAPI/include/sfx.h"), encoding: .utf8)
        let parts = ["MAJOR", "MINOR", "PATCH"].map { part in
            header.split(separator: "\n").first { $0.hasPrefix("#define SFX_VERSION_\(part) ") }.map { String($0.split(separator: " ")[2]) } ?? "?"
        }
        XCTAssertEqual(parts.joined(separator: "."), "0.1.0")
        let version = try shell(quoted(prefix + "/bin/sfx") + " --version", in: scratch)
        XCTAssertEqual(version.status, 0, version.errors)
        XCTAssertTrue(version.output.contains(parts.joined(separator: ".")), "sfx --version says \(version.output), sfx.h \(parts)")
    }

    func testDestdirStagesUnderItAndUninstallRemovesExactlyWhatWasInstalled() throws {
        let stage = scratch.appending(path: "stage")
        let prefix = "/opt/sfx-test"
        let root = stage.appending(path: "opt/sfx-test")
        // Something of someone else's already in the prefix: it must survive the uninstall.
        try FileManager.default.createDirectory(at: root.appending(path: "lib"), withIntermediateDirectories: true)
        try Data("other".utf8).write(to: root.appending(path: "lib/libother.so"))
        try FileManager.default.createDirectory(at: root.appending(path: "share/man/man1"), withIntermediateDirectories: true)
        let before = tree(root)

        _ = try install(prefix: prefix, destdir: stage.path)
        XCTAssertFalse(FileManager.default.fileExists(atPath: prefix), "DESTDIR ignored: \(prefix) was written")
        XCTAssertTrue(FileManager.default.fileExists(atPath: root.appending(path: "lib/libsfx.so.0.1.0").path))
        let pc = try String(contentsOf: root.appending(path: "lib/pkgconfig/sfx.pc"), encoding: .utf8)
        XCTAssertTrue(pc.hasPrefix("prefix=/opt/sfx-test\n"), "sfx.pc must name the final prefix, not the stage: \(pc)")
        XCTAssertFalse(pc.contains(stage.path), pc)
        // Installing twice lists the same files and still removes everything it made.
        _ = try install(prefix: prefix, destdir: stage.path)

        let uninstall = try shell("script/uninstall --prefix \(prefix)", in: Installed.checkout, environment: ["DESTDIR": stage.path])
        XCTAssertEqual(uninstall.status, 0, uninstall.output + uninstall.errors)
        XCTAssertEqual(tree(root), before)
        XCTAssertEqual(try String(contentsOf: root.appending(path: "lib/libother.so"), encoding: .utf8), "other")

        let again = try shell("script/uninstall --prefix \(prefix)", in: Installed.checkout, environment: ["DESTDIR": stage.path])
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.errors.contains("installed-files not found"), again.errors)
    }

    /// libsfx.so exports sfx.h's functions — every one of them — and nothing else but the
    /// quiet mpg123_new wrapper: no Swift symbol is part of its ABI.
    func testTheLibraryExportsExactlyTheHeadersFunctions() throws {
        let prefix = scratch.appending(path: "prefix").path
        _ = try install(prefix: prefix)
        let header = try String(contentsOf: Installed.checkout.appending(path: "Sources/CSFXAPI/include/sfx.h"), encoding: .utf8)
        let declared = Set(header.split(separator: "\n").compactMap { line -> String? in
            guard !line.hasPrefix(" "), !line.hasPrefix("typedef"), !line.hasPrefix("#"),
                  let open = line.firstIndex(of: "("), let name = line[..<open].split(separator: " ").last else { return nil }
            let trimmed = name.drop { $0 == "*" }
            return trimmed.hasPrefix("sfx_") ? String(trimmed) : nil
        })
        XCTAssertEqual(declared.count, 55, "\(declared.sorted())")
        let exported = try ELFFile(URL(filePath: prefix + "/lib/libsfx.so.0")).exportedSymbols()
        XCTAssertEqual(exported, declared.union(["mpg123_new"]))
    }

    /// A release build optimises the whole module and drops what is not public: each @_cdecl
    /// function must be public to be in a release libsfx.so (the tests install the debug build).
    func testEveryExportedFunctionIsPublic() throws {
        let sources = Installed.checkout.appending(path: "Sources/SFXC")
        var exports = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: sources.path) where name.hasSuffix(".swift") {
            let lines = try String(contentsOf: sources.appending(path: name), encoding: .utf8).split(separator: "\n")
            for (index, line) in lines.enumerated() where line.hasPrefix("@_cdecl(") {
                exports += 1
                XCTAssertTrue(index + 1 < lines.count && lines[index + 1].hasPrefix("public func "), "\(name): \(line) is not followed by a public func")
            }
        }
        XCTAssertEqual(exports, 51)     // sfx.h's 55 functions, 4 of which are written in C
    }

    func testUsageErrors() throws {
        for arguments in ["--prefix relative/dir", "--configuration fast", "--frobnicate"] {
            let run = try shell("script/install \(arguments)", in: Installed.checkout)
            XCTAssertEqual(run.status, 64, arguments)
            XCTAssertFalse(run.errors.isEmpty, arguments)
        }
    }

    func testManPageRendersWithoutWarnings() throws {
        let run = try shell("MANWIDTH=80 man --warnings -l docs/sfx.1", in: Installed.checkout)
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertEqual(run.errors, "")
        XCTAssertTrue(run.output.contains("sfx - low-latency sound effects and alerts for Linux"), run.output)
        for subcommand in ["play", "alert", "vibrate", "list", "info", "render", "devices", "haptics", "mute"] {
            XCTAssertTrue(run.output.contains("\n       \(subcommand) "), "the man page does not describe \(subcommand)")
        }
    }
}
