import Foundation
import XCTest
import SFXCardSupport

/// script/deb: the three packages (sfx, libsfx0, libsfx-dev) made from this build, their
/// Depends, lintian's verdict, and — as root, with dpkg free — installed with apt on this
/// machine: `sfx play tock` and the README's C example work against the installed files, and a
/// purge leaves none of their files behind. The packages are never left installed.
final class DebianPackageTests: XCTestCase {
    static let packageNames = ["sfx", "libsfx0", "libsfx-dev"]
    nonisolated(unsafe) static var directory: URL?
    nonisolated(unsafe) static var built: [String: URL] = [:]

    /// The packages, made once for the class: `script/deb --from <this build>` (gzip: the tests'
    /// packages need not be small, and xz takes about 15 s per debug binary).
    func packages() throws -> [String: URL] {
        if !Self.built.isEmpty { return Self.built }
        let directory = FileManager.default.temporaryDirectory.appending(path: "sfx-deb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        Self.directory = directory
        let run = try shell("script/deb --from \(quoted(Installed.products.path)) --out \(quoted(directory.path)) --compression gzip",
                            in: Installed.checkout, timeout: 300)
        XCTAssertEqual(run.status, 0, run.output + run.errors)
        let made = run.output.split(separator: "\n").map(String.init)
        for name in Self.packageNames {
            Self.built[name] = try XCTUnwrap(made.first { URL(filePath: $0).lastPathComponent.hasPrefix(name + "_") }.map { URL(filePath: $0) },
                                             "script/deb made no \(name) package: \(run.output)")
        }
        return Self.built
    }

    override class func tearDown() {
        if let directory { try? FileManager.default.removeItem(at: directory) }
        directory = nil
        built = [:]
    }

    func field(_ name: String, of deb: URL) throws -> String {
        let run = try shell("dpkg-deb --field \(quoted(deb.path)) \(name)", in: deb.deletingLastPathComponent())
        XCTAssertEqual(run.status, 0, run.errors)
        return run.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func testTheScriptMakesThreePackagesWithTheirDependsAndLintianFindsNoError() throws {
        let packages = try packages()
        let header = try String(contentsOf: Installed.checkout.appending(path: "Sources/CSFXAPI/include/sfx.h"), encoding: .utf8)
        let version = ["MAJOR", "MINOR", "PATCH"].map { part in
            header.split(separator: "\n").first { $0.hasPrefix("#define SFX_VERSION_\(part) ") }.map { String($0.split(separator: " ")[2]) } ?? "?"
        }.joined(separator: ".") + "-1"
        for (name, deb) in packages {
            XCTAssertEqual(deb.lastPathComponent, "\(name)_\(version)_amd64.deb")
            XCTAssertEqual(try field("Version", of: deb), version, name)
            let info = try shell("dpkg-deb --info \(quoted(deb.path))", in: deb.deletingLastPathComponent())
            print(info.output.split(separator: "\n").filter { $0.contains("Depends:") || $0.contains("Recommends:") || $0.contains("Suggests:") }
                .map { "\(name):\($0)" }.joined(separator: "\n"))
        }
        // From the binaries (dpkg-shlibdeps: libasound2 and libc6, versioned), and what sfx loads
        // with dlopen, which dpkg-shlibdeps cannot see.
        for name in ["sfx", "libsfx0"] {
            let depends = try field("Depends", of: packages[name]!)
            for needed in ["libasound2 (>= ", "libc6 (>= ", "libsndfile1", "libsoxr0"] {
                XCTAssertTrue(depends.contains(needed), "\(name) Depends: \(depends) lacks \(needed)")
            }
            XCTAssertFalse(depends.contains("swift"), "\(name) Depends: \(depends)")
            let recommends = try field("Recommends", of: packages[name]!)
            for loaded in ["libebur128-1", "libpulse0", "libgpiod2", "libcurl4", "libudev1", "libmysofa1", "libspeexdsp1"] {
                XCTAssertTrue(recommends.contains(loaded), "\(name) Recommends: \(recommends) lacks \(loaded)")
            }
            XCTAssertTrue(try field("Suggests", of: packages[name]!).contains("libavformat59"), name)
        }
        XCTAssertEqual(try field("Depends", of: packages["libsfx-dev"]!), "libsfx0 (= \(version))")
        // The library's shlibs and symbols (for packages built against it) and ldconfig's trigger.
        let control = try shell("dpkg-deb --ctrl-tarfile \(quoted(packages["libsfx0"]!.path)) | tar -xO ./shlibs ./symbols ./triggers",
                                in: packages["libsfx0"]!.deletingLastPathComponent())
        XCTAssertEqual(control.status, 0, control.errors)
        for line in ["libsfx 0 libsfx0 (>= ", "libsfx.so.0 libsfx0 #MINVER#", " sfx_open@LIBSFX_0 ", " sfx_play@LIBSFX_0 ", "activate-noawait ldconfig"] {
            XCTAssertTrue(control.output.contains(line), "libsfx0's control files lack \(line): \(control.output)")
        }

        // Each package's files, in Debian's places.
        var contents: [String: [String]] = [:]
        for (name, deb) in packages {
            let run = try shell("dpkg-deb --contents \(quoted(deb.path))", in: deb.deletingLastPathComponent())
            XCTAssertEqual(run.status, 0, run.errors)
            contents[name] = run.output.split(separator: "\n").compactMap { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst(5).first.map(String.init) }
        }
        let expected = [
            "sfx": ["./usr/bin/sfx", "./usr/libexec/sfx", "./usr/lib/sfx/libsfxcard.so", "./usr/share/man/man1/sfx.1.gz",
                    "./usr/share/sfx/sounds/sfx/index.theme", "./usr/share/sfx/sounds/sfx/stereo/tock.wav",
                    "./usr/share/bash-completion/completions/sfx", "./usr/share/zsh/vendor-completions/_sfx",
                    "./usr/lib/systemd/user/sfx.service", "./usr/lib/systemd/user/sfx.socket", "./lib/systemd/system/sfx.service",
                    "./usr/share/doc/sfx/copyright", "./usr/share/doc/sfx/changelog.Debian.gz"],
            "libsfx0": ["./usr/lib/x86_64-linux-gnu/libsfx.so.0.1.0", "./usr/lib/x86_64-linux-gnu/libsfx.so.0",
                        "./usr/share/doc/libsfx0/copyright", "./usr/share/doc/libsfx0/changelog.Debian.gz"],
            "libsfx-dev": ["./usr/include/sfx.h", "./usr/lib/x86_64-linux-gnu/pkgconfig/sfx.pc", "./usr/lib/x86_64-linux-gnu/libsfx.so",
                           "./usr/share/doc/libsfx-dev/copyright", "./usr/share/doc/libsfx-dev/changelog.Debian.gz"],
        ]
        for (name, files) in expected {
            for file in files { XCTAssertTrue(contents[name]?.contains(file) ?? false, "\(name) lacks \(file): \(contents[name] ?? [])") }
        }
        XCTAssertFalse(contents["sfx"]?.contains { $0.hasSuffix("installed-files") } ?? true, "script/install's list is not packaged")

        let lintian = try shell("command -v lintian >/dev/null || { echo 'lintian is not installed (script/common.sh lists it)' >&2; exit 127; }; "
                                + "lintian --allow-root " + packages.values.map { quoted($0.path) }.sorted().joined(separator: " "),
                                in: Installed.checkout, timeout: 300)
        print("lintian:\n\(lintian.output)\(lintian.errors)")
        XCTAssertNotEqual(lintian.status, 127, lintian.errors)
        let errors = (lintian.output + lintian.errors).split(separator: "\n").filter { $0.hasPrefix("E: ") }
        XCTAssertEqual(errors, [], "lintian's errors")
    }

    func testInstalledWithAptSfxAndTheCExamplePlayAndAPurgeLeavesNothing() throws {
        guard getuid() == 0 else { throw XCTSkip("installing packages needs root") }
        let packages = try packages()
        let scratch = try Installed.makeScratch()
        defer { Installed.removeScratch() }

        // A crashed earlier run may have left them installed: remove them first, and always after.
        func installed() throws -> [String] {
            let run = try shell("dpkg-query -W -f='${Package} ${db:Status-Status}\\n' \(Self.packageNames.joined(separator: " ")) 2>/dev/null", in: scratch)
            return run.output.split(separator: "\n").filter { $0.hasSuffix(" installed") }.map { String($0.split(separator: " ")[0]) }
        }
        func purge() throws -> Run {
            try shell("DEBIAN_FRONTEND=noninteractive apt-get remove -y --purge -o DPkg::Lock::Timeout=60 \(Self.packageNames.joined(separator: " "))",
                      in: scratch, timeout: 300)
        }
        if !(try installed()).isEmpty {
            let earlier = try purge()
            if earlier.errors.contains("Could not get lock") { throw XCTSkip("dpkg is locked by another apt: \(earlier.errors)") }
            XCTAssertEqual(earlier.status, 0, earlier.output + earlier.errors)
        }

        // What the packages hold, and which of those paths exist before they are installed
        // (directories such as /usr/bin, which must stay).
        var paths: [String] = []
        for deb in packages.values {
            let run = try shell("dpkg-deb --fsys-tarfile \(quoted(deb.path)) | tar -t", in: scratch)
            XCTAssertEqual(run.status, 0, run.errors)
            paths += run.output.split(separator: "\n").map { String($0.dropFirst()).hasSuffix("/") ? String($0.dropFirst().dropLast()) : String($0.dropFirst()) }
                .filter { !$0.isEmpty }
        }
        let existing = Set(paths.filter { FileManager.default.fileExists(atPath: $0) || (try? FileManager.default.destinationOfSymbolicLink(atPath: $0)) != nil })
        XCTAssertTrue(existing.isDisjoint(with: ["/usr/bin/sfx", "/usr/libexec/sfx", "/usr/share/sfx", "/usr/include/sfx.h"]),
                      "sfx's files are on this machine without its packages: \(existing.intersection(["/usr/bin/sfx", "/usr/libexec/sfx", "/usr/share/sfx", "/usr/include/sfx.h"]))")

        let install = try shell("DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=60 "
                                + Self.packageNames.map { quoted(packages[$0]!.path) }.joined(separator: " "), in: scratch, timeout: 300)
        if install.errors.contains("Could not get lock") { throw XCTSkip("dpkg is locked by another apt: \(install.errors)") }
        defer {
            // apt knows the packages only while they are installed (they come from files).
            if (try? installed())?.isEmpty == false {
                let removed = try? purge()
                XCTAssertEqual(removed?.status, 0, (removed?.output ?? "") + (removed?.errors ?? "the purge did not run"))
            }
            XCTAssertEqual(try? installed(), [], "sfx's packages are still installed")
        }
        XCTAssertEqual(install.status, 0, install.output + install.errors)
        XCTAssertEqual(try installed().sorted(), Self.packageNames.sorted())
        let listed = try shell("dpkg -L \(Self.packageNames.joined(separator: " "))", in: scratch)
        XCTAssertEqual(listed.status, 0, listed.errors)
        let owned = Set(listed.output.split(separator: "\n").map(String.init).filter { $0 != "/." })
        XCTAssertTrue(owned.isSuperset(of: ["/usr/bin/sfx", "/usr/lib/x86_64-linux-gnu/libsfx.so.0", "/usr/include/sfx.h"]), listed.output)

        // `sfx play tock` with the installed command, on the virtual card (no daemon: the front
        // runs /usr/libexec/sfx), with the installed sounds.
        let card = try VirtualCard(directory: scratch.appending(path: "card"))
        let runtime = scratch.appending(path: "runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let environment = ["ALSA_CONFIG_PATH": card.configURL.path, "XDG_RUNTIME_DIR": runtime.path,
                           "XDG_CONFIG_HOME": scratch.appending(path: "config").path, "XDG_STATE_HOME": scratch.appending(path: "state").path,
                           "PKG_CONFIG_PATH": ""]
        func onsets() throws -> Int { try card.events().filter { if case .onset = $0.kind { true } else { false } }.count }
        let play = try shell("/usr/bin/sfx play tock", in: scratch, environment: environment)
        XCTAssertEqual(play.status, 0, play.output + play.errors)
        let played = try onsets()
        XCTAssertGreaterThanOrEqual(played, 1, "sfx play tock played nothing on the card: \(play.errors)")
        let info = try shell("/usr/bin/sfx info tock", in: scratch, environment: environment)
        XCTAssertTrue(info.output.hasPrefix("/usr/share/sfx/sounds/sfx/stereo/tock.wav:"), info.output + info.errors)
        let manual = try shell("MANWIDTH=80 man sfx | head -5", in: scratch)
        XCTAssertTrue(manual.output.contains("sfx - low-latency sound effects"), manual.output + manual.errors)

        // The README's C example, built against the installed package as its text says.
        let readme = try String(contentsOf: Installed.checkout.appending(path: "README.md"), encoding: .utf8)
        let block = try XCTUnwrap(readme.components(separatedBy: "\n```c\n").dropFirst().first?.components(separatedBy: "\n```\n").first)
        try (block + "\n").write(to: scratch.appending(path: "game.c"), atomically: true, encoding: .utf8)
        let flags = try shell("pkg-config --cflags --libs sfx", in: scratch, environment: environment)
        XCTAssertEqual(flags.output.trimmingCharacters(in: .whitespacesAndNewlines), "-lsfx", flags.errors)
        let build = try shell("cc game.c $(pkg-config --cflags --libs sfx) -lm -o game && ldd ./game", in: scratch, environment: environment)
        XCTAssertEqual(build.status, 0, build.output + build.errors)
        // (/lib is /usr/lib on Debian 12: ldd may say either.)
        XCTAssertTrue(["/usr/lib", "/lib"].contains { build.output.contains("libsfx.so.0 => \($0)/x86_64-linux-gnu/libsfx.so.0 ") }, build.output)
        let game = try shell("./game", in: scratch, environment: environment)
        XCTAssertEqual(game.status, 0, game.output + game.errors)
        XCTAssertTrue(game.output.contains(": beep finished"), game.output + game.errors)
        XCTAssertGreaterThan(try onsets(), played, "the example played nothing on the card")
        // The library, in Debian's multiarch directory, takes its sounds from /usr/share/sfx/sounds
        // (the theme's index read from there), not from the copy it makes in memory.
        let traced = try shell("command -v strace >/dev/null || exit 125; strace -f -qq -e trace=openat -o trace ./game >/dev/null || exit 126; "
                               + "grep -c '/usr/share/sfx/sounds/sfx/index.theme' trace", in: scratch, environment: environment)
        if traced.status == 125 || traced.status == 126 {
            print("strace unavailable or not permitted here (\(traced.status)): where the library takes its sounds from is not checked")
        } else {
            XCTAssertEqual(traced.status, 0, "the installed library did not read /usr/share/sfx/sounds: \(traced.output)\(traced.errors)")
        }

        // Removed with a purge: none of their files stays, and each directory they brought goes.
        let removed = try purge()
        XCTAssertEqual(removed.status, 0, removed.output + removed.errors)
        let left = paths.filter { !existing.contains($0) }
            .filter { FileManager.default.fileExists(atPath: $0) || (try? FileManager.default.destinationOfSymbolicLink(atPath: $0)) != nil }
        XCTAssertEqual(left, [], "left behind by apt-get remove --purge")
        for path in owned where !existing.contains(path) {
            XCTAssertFalse(FileManager.default.fileExists(atPath: path), "\(path) is still there")
        }
    }
}
