import CALSA
import Foundation
import SFXCardSupport
import XCTest

/// The card's directory and files are its user's alone. Each attack is staged as root, as far as
/// one user can stage another's: a directory of another uid (chown to nobody), a writable-by-all
/// directory, a symbolic link in place of events.log or state, a state file of another uid or
/// too short to map. The card must refuse, leave what is not its own untouched, and never die of
/// SIGBUS (a test that reaches its end shows the process survived).
final class CardPrivacyTests: CardTestCase {
    static let nobody: uid_t = 65_534

    /// Files outside the card (a "victim's" file, a copy of the state), removed after each test.
    var outside: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        outside = FileManager.default.temporaryDirectory.appending(path: "sfxcard-outside-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let outside { try? FileManager.default.removeItem(at: outside) }
        if let card {
            chown(card.directory.path, 0, 0)
            chmod(card.directory.path, 0o700)
        }
        try super.tearDownWithError()
    }

    var stateURL: URL { card.directory.appending(path: "state") }

    func mode(_ url: URL) -> mode_t {
        var info = stat()
        XCTAssertEqual(lstat(url.path, &info), 0, url.path)
        return info.st_mode & 0o7777
    }

    /// Opening the card's PCM fails with `code`, and so does its mixer.
    func assertOpenFails(_ code: Int32, _ message: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try PCM(card.hardwarePCMName), message, file: file, line: line) { error in
            XCTAssertEqual(error as? ALSAError, ALSAError(code: -code), message, file: file, line: line)
        }
        var ctl: OpaquePointer?
        let result = snd_ctl_open(&ctl, card.ctlName, 0)
        if result >= 0 { snd_ctl_close(ctl) }
        XCTAssertEqual(result, -code, "the mixer: \(message)", file: file, line: line)
    }

    func testADirectoryOfAnotherUserIsRefusedAndLeftAlone() throws {
        let theirs = outside.appending(path: "theirs")
        XCTAssertEqual(mkdir(theirs.path, 0o777), 0)
        chmod(theirs.path, 0o777)
        let planted = Data("pcm_type.sfxcard { lib \"/their/library.so\" }\n".utf8)
        try planted.write(to: theirs.appending(path: "asound.conf"))
        XCTAssertEqual(chown(theirs.path, Self.nobody, Self.nobody), 0)

        XCTAssertThrowsError(try VirtualCard(directory: theirs)) { error in
            XCTAssertTrue("\(error)".contains(theirs.path) && "\(error)".contains("uid 65534"), "\(error)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: theirs.path), ["asound.conf"])
        XCTAssertEqual(try Data(contentsOf: theirs.appending(path: "asound.conf")), planted)
    }

    func testThePluginRefusesADirectoryThatIsNotPrivate() throws {
        XCTAssertEqual(chown(card.directory.path, Self.nobody, Self.nobody), 0)
        assertOpenFails(EPERM, "a directory of another uid")
        XCTAssertEqual(chown(card.directory.path, 0, 0), 0)
        XCTAssertEqual(chmod(card.directory.path, 0o777), 0)
        assertOpenFails(EPERM, "a directory everyone can write")
        XCTAssertEqual(chmod(card.directory.path, 0o700), 0)
        XCTAssertNoThrow(try PCM(card.hardwarePCMName), "private again: the card opens")
    }

    func testASymlinkedEventLogIsNeverWrittenThrough() throws {
        let diary = outside.appending(path: "diary")
        let secret = Data("the user's own 0600 file\n".utf8)
        try secret.write(to: diary)
        chmod(diary.path, 0o600)
        unlink(card.eventsURL.path)
        XCTAssertEqual(symlink(diary.path, card.eventsURL.path), 0)

        assertOpenFails(ELOOP, "events.log is a symbolic link")
        card.disconnect()       // VirtualCard logs these itself
        card.reconnect()
        XCTAssertEqual(try Data(contentsOf: diary), secret, "nothing was appended through the link")
        XCTAssertEqual(mode(diary), 0o600)
        XCTAssertThrowsError(try card.events(), "the link is not read either")
    }

    func testASymlinkedStateFileIsRefused() throws {
        let elsewhere = outside.appending(path: "state")
        try FileManager.default.copyItem(at: stateURL, to: elsewhere)
        unlink(stateURL.path)
        XCTAssertEqual(symlink(elsewhere.path, stateURL.path), 0)

        assertOpenFails(ELOOP, "state is a symbolic link")
        XCTAssertThrowsError(try VirtualCard(directory: card.directory)) { error in
            XCTAssertTrue("\(error)".contains("symbolic link"), "\(error)")
        }
    }

    func testAShortStateFileIsRefusedNotMapped() throws {
        XCTAssertEqual(truncate(stateURL.path, 10), 0)
        assertOpenFails(EINVAL, "a 10-byte state file")
        XCTAssertThrowsError(try VirtualCard(directory: card.directory)) { error in
            XCTAssertTrue("\(error)".contains("not a card state file"), "\(error)")
        }
    }

    func testAStateFileOthersCouldShortenIsRefused() throws {
        XCTAssertEqual(chown(stateURL.path, Self.nobody, Self.nobody), 0)
        assertOpenFails(EPERM, "a state file of another uid")
        XCTAssertThrowsError(try VirtualCard(directory: card.directory)) { error in
            XCTAssertTrue("\(error)".contains("uid 65534"), "\(error)")
        }
        XCTAssertEqual(chown(stateURL.path, 0, 0), 0)
        XCTAssertEqual(chmod(stateURL.path, 0o666), 0)
        assertOpenFails(EPERM, "a state file everyone can write")
        XCTAssertEqual(chmod(stateURL.path, 0o600), 0)
        XCTAssertNoThrow(try PCM(card.hardwarePCMName))
    }

    func testEveryFileTheCardMakesIsPrivate() throws {
        let pcm = try PCM(card.hardwarePCMName)
        try pcm.configure(periodFrames: 480, periods: 2)
        try pcm.write(Signal.tone(frames: 960, channels: 2))
        try pcm.drain()
        card.disconnect()
        card.reconnect()
        XCTAssertEqual(mode(card.directory), 0o700)
        let names = try FileManager.default.contentsOfDirectory(atPath: card.directory.path).sorted()
        XCTAssertEqual(names, ["asound.conf", "events.log", "playback.wav", "state"])
        for name in names {
            XCTAssertEqual(mode(card.directory.appending(path: name)), 0o600, name)
        }
    }
}
