import Foundation
import XCTest

/// Where `sfx play` keeps the virtual card, and where a copied or installed `sfx` loads the
/// card's plugin and its sounds from. The attacks of a second user are staged as root: a
/// directory of another uid (chown to nobody) at the fixed path sfx once used, planted files in
/// it, a plugin and a package planted above a copied program.
final class VirtualCardPlacesTests: CommandTestCase {
    static let nobody: uid_t = 65_534

    static var plugin: URL { buildDirectory.appending(path: "libsfxcard.so") }
    static var sounds: URL { URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appending(path: "Sounds") }

    /// Runs `program` as `sfx(_:)` does, with nothing that would point it at a plugin, sounds or a
    /// runtime directory: the card goes where a user without XDG_RUNTIME_DIR gets it.
    func run(_ arguments: [String], program: URL = CommandTestCase.program, environment extra: [String: String?] = [:]) throws -> Run {
        var environment: [String: String?] = ["SFXCARD_PLUGIN": nil, "SFX_SOUNDS_DIR": nil, "XDG_RUNTIME_DIR": nil,
                                              "TMPDIR": scratch.path]
        environment.merge(extra) { $1 }
        return try sfx(arguments, program: program, environment: environment)
    }

    func mode(_ path: String) -> mode_t {
        var info = stat()
        XCTAssertEqual(lstat(path, &info), 0, path)
        return info.st_mode & 0o7777
    }

    /// Every entry under `directory` with its contents (a link's target for a link).
    func snapshot(_ directory: URL) throws -> [String: String] {
        var entries: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let path = directory.appending(path: name).path
            if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) {
                entries[name] = "-> \(target)"
            } else {
                entries[name] = try Data(contentsOf: URL(filePath: path)).base64EncodedString()
            }
        }
        return entries
    }

    func copy(_ source: URL, to relative: String) throws -> URL {
        let target = scratch.appending(path: relative)
        try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: source, to: target)
        return target
    }

    // MARK: The card's directory

    func testPlayIgnoresAnotherUsersDirectoryAtTheOldFixedPath() throws {
        // What another user could leave at $TMPDIR/sfx-card-<uid> before the victim plays.
        let planted = scratch.appending(path: "sfx-card-\(getuid())")
        XCTAssertEqual(mkdir(planted.path, 0o777), 0)
        XCTAssertEqual(chmod(planted.path, 0o777), 0)
        let diary = scratch.appending(path: "diary")
        try Data("the victim's own 0600 file\n".utf8).write(to: diary)
        XCTAssertEqual(chmod(diary.path, 0o600), 0)
        try Data("pcm_type.sfxcard { lib \"\(scratch.path)/theirs.so\" }\n".utf8).write(to: planted.appending(path: "asound.conf"))
        try Data("SFXCARD1".utf8).write(to: planted.appending(path: "state"))     // too short to map
        XCTAssertEqual(symlink(diary.path, planted.appending(path: "events.log").path), 0)
        for name in ["", "/asound.conf", "/state"] {
            XCTAssertEqual(lchown(planted.path + name, Self.nobody, Self.nobody), 0)
        }
        let before = try snapshot(planted)

        let played = try run(["play", "tock"])
        XCTAssertEqual(played.status, 0, played.stderr)
        let recording = try XCTUnwrap(played.recording, played.stdout)
        XCTAssertFalse(recording.hasPrefix(planted.path), recording)
        XCTAssertTrue(recording.hasPrefix(scratch.appending(path: "state/sfx/card/").path),
                      "without XDG_RUNTIME_DIR the card is kept in XDG_STATE_HOME: \(recording)")
        XCTAssertEqual(mode(URL(filePath: recording).deletingLastPathComponent().path), 0o700)
        XCTAssertEqual(try snapshot(planted), before, "the planted directory is untouched")
        XCTAssertEqual(try String(contentsOf: diary, encoding: .utf8), "the victim's own 0600 file\n")
    }

    func testPlayKeepsItsCardInThePrivateRuntimeDirectory() throws {
        let runtime = scratch.appending(path: "run")
        XCTAssertEqual(mkdir(runtime.path, 0o700), 0)
        let card = runtime.appending(path: "sfx/card")
        for _ in 0..<2 {
            let played = try run(["play", "tock"], environment: ["XDG_RUNTIME_DIR": runtime.path])
            XCTAssertEqual(played.status, 0, played.stderr)
            XCTAssertTrue(played.stderr.contains("(\(card.path))"), played.stderr)
            XCTAssertEqual(played.recording, card.appending(path: "playback.wav").path, played.stdout)
        }
        XCTAssertEqual(mode(runtime.appending(path: "sfx").path), 0o700)
        XCTAssertEqual(mode(card.path), 0o700)
        let names = try FileManager.default.contentsOfDirectory(atPath: card.path).sorted()
        XCTAssertEqual(names, ["asound.conf", "events.log", "playback.wav", "state"], "each run starts a fresh recording")
        for name in names {
            XCTAssertEqual(mode(card.appending(path: name).path), 0o600, name)
        }
    }

    func testPlayRefusesACardDirectoryOfAnotherUserWithOneLine() throws {
        let runtime = scratch.appending(path: "run")
        let card = runtime.appending(path: "sfx/card")
        try FileManager.default.createDirectory(at: card, withIntermediateDirectories: true)
        XCTAssertEqual(chown(card.path, Self.nobody, Self.nobody), 0)
        let played = try run(["play", "tock"], environment: ["XDG_RUNTIME_DIR": runtime.path])
        XCTAssertEqual(played.status, 1)
        XCTAssertEqual(played.stderr.split(separator: "\n").count, 1, played.stderr)
        XCTAssertTrue(played.stderr.contains(card.path) && played.stderr.contains("belongs to uid 65534") && played.stderr.contains("sudo -H"), played.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: card.path), [])
    }

    // MARK: A copied or installed program

    func testACopiedProgramNeverLoadsThePluginOrSoundsFromAboveItOrItsBuildDirectory() throws {
        let program = try copy(Self.program, to: "copy/sfx")
        // Planted above the copy, where a search upward would look.
        _ = try copy(Self.plugin, to: "libsfxcard.so")
        _ = try copy(Self.plugin, to: ".build/debug/libsfxcard.so")
        try Data().write(to: scratch.appending(path: "Package.swift"))
        _ = try copy(Self.sounds, to: "Sounds")
        let runtime = ["XDG_RUNTIME_DIR": scratch.path]

        let play = try run(["play", "tock"], program: program, environment: runtime.merging(["SFX_SOUNDS_DIR": Self.sounds.path]) { $1 })
        XCTAssertEqual(play.status, 1, play.stdout)
        XCTAssertTrue(play.stderr.contains("libsfxcard.so not found beside \(program.path)"), play.stderr)
        XCTAssertEqual(play.stderr.split(separator: "\n").count, 1, play.stderr)

        // No Sounds/ beside it: the bundled sounds are synthesised in memory, never read from above.
        let list = try run(["list", "--json"], program: program, environment: runtime)
        XCTAssertEqual(list.status, 0, list.stderr)
        XCTAssertTrue(list.stdout.contains("\"/dev/null/built-in/sfx/stereo/tock.wav\""), list.stdout)
        XCTAssertFalse(list.stdout.contains(scratch.path), list.stdout)

        let explicit = try run(["play", "tock"], program: program,
                               environment: runtime.merging(["SFX_SOUNDS_DIR": Self.sounds.path, "SFXCARD_PLUGIN": Self.plugin.path]) { $1 })
        XCTAssertEqual(explicit.status, 0, "SFXCARD_PLUGIN and SFX_SOUNDS_DIR still work: \(explicit.stderr)")
    }

    func testAProgramFindsThePluginBesideItAndAnInstalledOneItsPrefix() throws {
        let beside = try copy(Self.program, to: "beside/sfx")
        _ = try copy(Self.plugin, to: "beside/libsfxcard.so")
        let runBeside = try run(["play", "tock"], program: beside,
                                environment: ["XDG_RUNTIME_DIR": scratch.path, "SFX_SOUNDS_DIR": Self.sounds.path])
        XCTAssertEqual(runBeside.status, 0, runBeside.stderr)

        let installed = try copy(Self.program, to: "prefix/bin/sfx")
        _ = try copy(Self.plugin, to: "prefix/lib/sfx/libsfxcard.so")
        _ = try copy(Self.sounds, to: "prefix/share/sfx/sounds")
        let runInstalled = try run(["play", "tock"], program: installed, environment: ["XDG_RUNTIME_DIR": scratch.path])
        XCTAssertEqual(runInstalled.status, 0, runInstalled.stderr)
        XCTAssertNotNil(runInstalled.recording, runInstalled.stdout)
    }
}
