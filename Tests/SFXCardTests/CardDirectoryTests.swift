import Foundation
import SFXCardSupport
import XCTest

/// Where a card lives (`CardDirectory`) and where its plugin is loaded from
/// (`VirtualCard.locatePlugin`): private directories only, and only places relative to the
/// running program, never where it was built.
final class CardDirectoryTests: XCTestCase {
    static let nobody: uid_t = 65_534
    var scratch: URL!

    override func setUpWithError() throws {
        scratch = FileManager.default.temporaryDirectory.appending(path: "sfxcard-dir-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
    }

    func mode(_ url: URL) -> mode_t {
        var info = stat()
        XCTAssertEqual(lstat(url.path, &info), 0, url.path)
        return info.st_mode & 0o7777
    }

    /// Creates an empty file (and its parent directories).
    func touch(_ relative: String) throws -> URL {
        let url = scratch.appending(path: relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data().write(to: url)
        return url
    }

    // MARK: The user's card directory

    func testTheRuntimeDirectoryHoldsAPrivateCardThatIsKept() throws {
        let runtime = scratch.appending(path: "run")
        XCTAssertEqual(mkdir(runtime.path, 0o700), 0)
        let environment = ["XDG_RUNTIME_DIR": runtime.path]
        let first = try CardDirectory.forUser(environment: environment)
        XCTAssertEqual(first.standardizedFileURL.path, runtime.appending(path: "sfx/card").path)
        XCTAssertEqual(mode(runtime.appending(path: "sfx")), 0o700)
        XCTAssertEqual(mode(first), 0o700)
        XCTAssertEqual(try CardDirectory.forUser(environment: environment).path, first.path, "the same place each run")
    }

    func testAnExistingCardDirectoryOfAnotherUserIsRefusedWithTheFix() throws {
        let card = scratch.appending(path: "run/sfx/card")
        try FileManager.default.createDirectory(at: card, withIntermediateDirectories: true)
        XCTAssertEqual(chown(card.path, Self.nobody, Self.nobody), 0)
        XCTAssertThrowsError(try CardDirectory.forUser(environment: ["XDG_RUNTIME_DIR": scratch.appending(path: "run").path])) { error in
            let line = "\(error)"
            XCTAssertTrue(line.contains(card.path) && line.contains("uid 65534") && line.contains("sudo -H"), line)
            XCTAssertFalse(line.contains("\n"), line)
        }
    }

    func testASymlinkedCardDirectoryIsRefused() throws {
        let run = scratch.appending(path: "run")
        let mine = scratch.appending(path: "elsewhere")
        try FileManager.default.createDirectory(at: run.appending(path: "sfx"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: mine, withIntermediateDirectories: true)
        XCTAssertEqual(symlink(mine.path, run.appending(path: "sfx/card").path), 0)
        XCTAssertThrowsError(try CardDirectory.forUser(environment: ["XDG_RUNTIME_DIR": run.path])) { error in
            XCTAssertTrue("\(error)".contains("symbolic link"), "\(error)")
        }
    }

    func testARuntimeDirectoryOthersCanWriteIsRefused() throws {
        let run = scratch.appending(path: "run")
        XCTAssertEqual(mkdir(run.path, 0o777), 0)
        XCTAssertEqual(chmod(run.path, 0o777), 0)
        XCTAssertThrowsError(try CardDirectory.forUser(environment: ["XDG_RUNTIME_DIR": run.path])) { error in
            XCTAssertTrue("\(error)".contains("XDG_RUNTIME_DIR") && "\(error)".contains("writable by other users"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: run.appending(path: "sfx").path), "nothing was made in it")
    }

    func testWithoutARuntimeDirectoryEachCardIsAFreshPrivateTemporaryDirectory() throws {
        let environment = ["TMPDIR": scratch.path]
        let held = try CardDirectory.openForUser(environment: environment)
        let first = held.url
        let second = try CardDirectory.openForUser(environment: environment).url
        XCTAssertNotEqual(first, second)
        for made in [first, second] {
            XCTAssertEqual(made.deletingLastPathComponent().standardizedFileURL.path, scratch.standardizedFileURL.path)
            XCTAssertTrue(made.lastPathComponent.hasPrefix("sfx-card-"), made.path)
            XCTAssertEqual(mode(made), 0o700)
        }
        let missing = scratch.appending(path: "no-such-directory").path
        XCTAssertThrowsError(try CardDirectory.forUser(environment: ["XDG_RUNTIME_DIR": "relative/path", "TMPDIR": missing]),
                             "a relative XDG_RUNTIME_DIR is ignored; the temporary directory is then required")
    }

    /// With neither XDG_RUNTIME_DIR nor HOME each run makes a card directory in TMPDIR; the next
    /// run removes those no run holds any more, so they do not pile up (each run used to leave
    /// one). One in use, another user's, or one others may write is left alone.
    func testTemporaryCardDirectoriesOfEarlierRunsAreRemovedOnceNoRunHoldsThem() throws {
        let environment = ["TMPDIR": scratch.path]
        func inTmp() throws -> Set<String> {
            Set(try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasPrefix("sfx-card-") })
        }
        var earlier = Optional(try CardDirectory.openForUser(environment: environment))
        let earlierName = earlier!.url.lastPathComponent
        XCTAssertTrue(FileManager.default.createFile(atPath: earlier!.url.appending(path: "playback.wav").path, contents: Data([1])))
        let running = try CardDirectory.openForUser(environment: environment)
        XCTAssertEqual(try inTmp(), [earlierName, running.url.lastPathComponent], "a directory still held is kept")
        let theirs = scratch.appending(path: "sfx-card-THEIRS")
        XCTAssertEqual(mkdir(theirs.path, 0o700), 0)
        XCTAssertEqual(chown(theirs.path, 65_534, 65_534), 0)
        let open = scratch.appending(path: "sfx-card-OPENED")
        XCTAssertEqual(mkdir(open.path, 0o700), 0)
        XCTAssertEqual(chmod(open.path, 0o777), 0)
        earlier = nil   // that run has ended
        let next = try CardDirectory.openForUser(environment: environment)
        XCTAssertEqual(try inTmp(), [running.url.lastPathComponent, next.url.lastPathComponent, "sfx-card-THEIRS", "sfx-card-OPENED"],
                       "the abandoned one is gone; the one in use, another user's and a public one stay")
        withExtendedLifetime(running) {}
    }

    func testWithoutARuntimeDirectoryTheCardIsKeptInTheStateDirectoryNotPiledUpInTmp() throws {
        let home = scratch.appending(path: "home")
        XCTAssertEqual(mkdir(home.path, 0o755), 0)
        let environment = ["HOME": home.path, "TMPDIR": scratch.path]
        let first = try CardDirectory.forUser(environment: environment)
        XCTAssertEqual(first.standardizedFileURL.path, home.appending(path: ".local/state/sfx/card").standardizedFileURL.path)
        XCTAssertEqual(try CardDirectory.forUser(environment: environment).path, first.path, "the same place each run")
        XCTAssertEqual(mode(first), 0o700)
        XCTAssertEqual(mode(first.deletingLastPathComponent()), 0o700)
        let inTmp = try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasPrefix("sfx-card-") }
        XCTAssertEqual(inTmp, [], "nothing made in TMPDIR")

        let state = scratch.appending(path: "state")
        let chosen = try CardDirectory.forUser(environment: ["XDG_STATE_HOME": state.path, "HOME": home.path])
        XCTAssertEqual(chosen.standardizedFileURL.path, state.appending(path: "sfx/card").standardizedFileURL.path)

        // Another user's directory in the way is refused, not used.
        let theirs = scratch.appending(path: "theirs")
        XCTAssertEqual(mkdir(theirs.path, 0o755), 0)
        XCTAssertEqual(mkdir(theirs.appending(path: "sfx").path, 0o777), 0)
        XCTAssertEqual(chmod(theirs.appending(path: "sfx").path, 0o777), 0)
        XCTAssertThrowsError(try CardDirectory.forUser(environment: ["XDG_STATE_HOME": theirs.path])) { error in
            XCTAssertTrue("\(error)".contains("writable by other users"), "\(error)")
        }
    }

    func testADefaultCardIsAFreshPrivateTemporaryDirectory() throws {
        setenv("TMPDIR", scratch.path, 1)
        defer { unsetenv("TMPDIR") }
        let card = try VirtualCard()
        XCTAssertEqual(card.directory.deletingLastPathComponent().standardizedFileURL.path, scratch.standardizedFileURL.path)
        XCTAssertEqual(mode(card.directory), 0o700)
        try card.remove()
    }

    // MARK: Where the plugin comes from

    func testACopiedProgramFindsNoPluginAboveItOrWhereItWasBuilt() throws {
        // Planted where the old upward search looked: above the program, and in a .build above it.
        _ = try touch("libsfxcard.so")
        _ = try touch(".build/debug/libsfxcard.so")
        _ = try touch("Package.swift")
        let program = try touch("copy/sfx").path
        XCTAssertThrowsError(try VirtualCard.locatePlugin(executablePath: program, environment: [:])) { error in
            XCTAssertTrue("\(error)".contains("libsfxcard.so not found beside \(program)"), "\(error)")
            XCTAssertTrue("\(error)".contains("SFXCARD_PLUGIN"), "\(error)")
        }
    }

    func testThePluginBesideTheProgramOrInAnInstalledPrefixIsFound() throws {
        let beside = try touch("build/libsfxcard.so")
        XCTAssertEqual(try VirtualCard.locatePlugin(executablePath: try touch("build/sfx").path, environment: [:]).path,
                       beside.path)
        let installed = try touch("prefix/lib/sfx/libsfxcard.so")
        XCTAssertEqual(try VirtualCard.locatePlugin(executablePath: try touch("prefix/bin/sfx").path, environment: [:]).path,
                       installed.path)
        let chosen = try touch("mine/libsfxcard.so")
        XCTAssertEqual(try VirtualCard.locatePlugin(executablePath: nil, environment: ["SFXCARD_PLUGIN": chosen.path]), chosen)
    }

    func testAnInstalledPluginAnotherUserControlsIsRefused() throws {
        let program = try touch("prefix/bin/sfx").path
        let plugin = try touch("prefix/lib/sfx/libsfxcard.so")
        let lib = scratch.appending(path: "prefix/lib")
        XCTAssertEqual(chown(lib.path, Self.nobody, Self.nobody), 0)
        XCTAssertThrowsError(try VirtualCard.locatePlugin(executablePath: program, environment: [:])) { error in
            XCTAssertTrue("\(error)".contains("\(lib.path) belongs to uid 65534"), "\(error)")
        }
        XCTAssertEqual(chown(lib.path, 0, 0), 0)
        XCTAssertEqual(chmod(plugin.path, 0o666), 0)
        XCTAssertThrowsError(try VirtualCard.locatePlugin(executablePath: program, environment: [:])) { error in
            XCTAssertTrue("\(error)".contains("\(plugin.path) is writable by every user"), "\(error)")
        }
    }

    func testTheTestBundleFindsThePluginBuiltBesideIt() throws {
        let executable = try XCTUnwrap(VirtualCard.currentExecutable())
        let plugin = try VirtualCard.locatePlugin(environment: [:])
        XCTAssertEqual(plugin.path, URL(filePath: executable).deletingLastPathComponent().appending(path: "libsfxcard.so").path)
    }
}

/// The card directory is checked from the base directory down, on descriptors, and reached
/// through the checked descriptor afterwards, so root with another user's HOME neither uses her
/// directories nor can be redirected by a rename after the check.
final class CardDirectoryDescriptorTests: CardTestCase {
    static let nobody: uid_t = 65_534
    var scratch: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        scratch = FileManager.default.temporaryDirectory.appending(path: "sfxcard-walk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
        try super.tearDownWithError()
    }

    func testEveryDirectoryFromTheHomeDownMustBeTheUsers() throws {
        try XCTSkipUnless(geteuid() == 0, "stages another user's directories with chown")
        let home = scratch.appending(path: "home")
        try FileManager.default.createDirectory(at: home.appending(path: ".local/state"), withIntermediateDirectories: true)
        // Her home: refused at the top, and nothing is made in it.
        XCTAssertEqual(chown(home.path, Self.nobody, Self.nobody), 0)
        XCTAssertThrowsError(try CardDirectory.forUser(environment: ["HOME": home.path])) { error in
            let line = "\(error)"
            XCTAssertTrue(line.contains("HOME \(home.path) belongs to uid 65534, not to you (uid 0)") && line.contains("sudo -H"), line)
            XCTAssertFalse(line.contains("\n"), line)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: home.appending(path: ".local/state/sfx").path))
        // A directory of hers on the way (.local), below a home of root's: refused by name.
        XCTAssertEqual(chown(home.path, 0, 0), 0)
        XCTAssertEqual(chown(home.appending(path: ".local").path, Self.nobody, Self.nobody), 0)
        XCTAssertThrowsError(try CardDirectory.forUser(environment: ["HOME": home.path])) { error in
            XCTAssertTrue("\(error)".contains("\(home.appending(path: ".local").path) belongs to uid 65534"), "\(error)")
        }
        // A symbolic link on the way is not followed.
        XCTAssertEqual(chown(home.appending(path: ".local").path, 0, 0), 0)
        try FileManager.default.removeItem(at: home.appending(path: ".local/state"))
        XCTAssertEqual(symlink(scratch.path, home.appending(path: ".local/state").path), 0)
        XCTAssertThrowsError(try CardDirectory.forUser(environment: ["HOME": home.path])) { error in
            XCTAssertTrue("\(error)".contains("\(home.appending(path: ".local/state").path) is a symbolic link"), "\(error)")
        }
    }

    func testARenameAfterTheCheckCannotRedirectWhatALSAReads() throws {
        let home = scratch.appending(path: "home")
        XCTAssertEqual(mkdir(home.path, 0o755), 0)
        let opened = try CardDirectory.openForUser(environment: ["HOME": home.path])
        XCTAssertEqual(opened.url.standardizedFileURL.path, home.appending(path: ".local/state/sfx/card").standardizedFileURL.path)
        let checked = try VirtualCard(opened: opened)
        XCTAssertEqual(checked.shownDirectory, opened.url)
        XCTAssertEqual(checked.shownPath(of: checked.recordingURL), opened.url.appending(path: "playback.wav").path)
        let real = try Data(contentsOf: checked.configURL)

        // The state directory is swapped for another with a configuration naming a library of
        // someone else's, as a racing user would once the check was made.
        let state = home.appending(path: ".local/state")
        XCTAssertEqual(rename(state.path, home.appending(path: ".local/state-checked").path), 0)
        let planted = state.appending(path: "sfx/card")
        try FileManager.default.createDirectory(at: planted, withIntermediateDirectories: true)
        try Data("pcm.sfxcard_hw { type sfxcard_planted }\npcm_type.sfxcard_planted { lib \"/their/library.so\" }\n".utf8)
            .write(to: planted.appending(path: "asound.conf"))

        XCTAssertEqual(try Data(contentsOf: checked.configURL), real, "the configuration read is the checked one")
        checked.makeCurrent()
        defer { card.makeCurrent() }
        let pcm = try PCM(checked.hardwarePCMName)
        withExtendedLifetime(pcm) {}
        XCTAssertTrue(FileManager.default.fileExists(atPath: home.appending(path: ".local/state-checked/sfx/card/events.log").path),
                      "the card's log is in the checked directory")
        XCTAssertFalse(FileManager.default.fileExists(atPath: planted.appending(path: "events.log").path))
    }
}
