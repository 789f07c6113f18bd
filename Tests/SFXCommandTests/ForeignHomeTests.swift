import Foundation
import Glibc
import XCTest

/// Root running `sfx` with another user's HOME (as `sudo -E` leaves it): her settings and her
/// state directory are refused, with one line that names the directory and the fix, and nothing
/// of hers runs or is loaded. Staged as root with a home chowned to nobody (uid 65534).
final class ForeignHomeTests: CommandTestCase {
    static let nobody: uid_t = 65_534

    /// A home of another user's, holding `sfx.conf` with `text` in `~/.config/sfx`.
    func foreignHome(settings text: String) throws -> URL {
        let home = scratch.appending(path: "alice")
        let config = home.appending(path: ".config/sfx")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: config.appending(path: "sfx.conf"))
        for path in [home, home.appending(path: ".config"), config, config.appending(path: "sfx.conf")] {
            XCTAssertEqual(chown(path.path, Self.nobody, Self.nobody), 0, path.path)
        }
        return home
    }

    func testHerHapticsCommandNeverRunsAsRoot() throws {
        try XCTSkipUnless(geteuid() == 0, "stages another user's files with chown")
        let marker = scratch.appending(path: "ran-as-root")
        let home = try foreignHome(settings: "[haptics]\nbackend = command\ncommand = /usr/bin/touch \(marker.path)\n")
        let run = try sfx(["vibrate"], environment: ["HOME": home.path, "XDG_CONFIG_HOME": nil])
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker.path), "her command ran as root")
        XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, run.stderr)
        XCTAssertTrue(run.stderr.hasPrefix("sfx: HOME \(home.path) belongs to uid 65534, not to you (uid 0); "), run.stderr)
        XCTAssertTrue(run.stderr.contains("sudo -H"), run.stderr)

        // Her sfx.conf in a directory of root's is refused too, by the file's owner.
        let mine = scratch.appending(path: "config/sfx")
        try FileManager.default.createDirectory(at: mine, withIntermediateDirectories: true)
        let conf = mine.appending(path: "sfx.conf")
        try Data("[haptics]\nbackend = command\ncommand = /usr/bin/touch \(marker.path)\n".utf8).write(to: conf)
        XCTAssertEqual(chown(conf.path, Self.nobody, Self.nobody), 0)
        let file = try sfx("vibrate")
        XCTAssertEqual(file.status, 1, file.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker.path), "her command ran as root")
        XCTAssertTrue(file.stderr.hasPrefix("sfx: \(conf.path) belongs to uid 65534, not to you (uid 0); "), file.stderr)
    }

    func testHerStateDirectoryIsNotWhereTheCardLives() throws {
        try XCTSkipUnless(geteuid() == 0, "stages another user's files with chown")
        let home = try foreignHome(settings: "")
        // Root's own settings; the card's directory would be in her ~/.local/state.
        let run = try sfx(["play", "tock"], environment: ["HOME": home.path, "XDG_STATE_HOME": nil, "XDG_RUNTIME_DIR": nil])
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("HOME \(home.path) belongs to uid 65534, not to you (uid 0)"), run.stderr)
        XCTAssertTrue(run.stderr.contains("sudo -H"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: home.appending(path: ".local").path), "nothing made in her home")
    }
}
