import Foundation
import Glibc
import Synchronization
import XCTest
import SFX

/// sfx's mute flag file: toggles that cannot interleave, a private directory and files, and no
/// symbolic link followed.
final class MuteFlagTests: XCTestCase {
    private var scratch: URL!

    override func setUpWithError() throws {
        var template = Array((NSTemporaryDirectory() + "sfx-mute-XXXXXX").utf8CString)
        let made = try XCTUnwrap(mkdtemp(&template), "mkdtemp failed: errno \(errno)")
        scratch = URL(filePath: String(cString: made))
    }

    override func tearDownWithError() throws {
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
    }

    private var flag: MuteFlag { MuteFlag.user(environment: ["XDG_STATE_HOME": scratch.appending(path: "state").path]) }
    private var directory: URL { scratch.appending(path: "state/sfx") }

    private func mode(_ url: URL) -> mode_t? {
        var info = stat()
        return lstat(url.path, &info) == 0 ? info.st_mode & 0o7777 : nil
    }

    func testFiftyTogglesFromParallelThreadsAlternate() throws {
        for round in 1...5 {
            try flag.set(round.isMultiple(of: 2))
            let results = Mutex<[Bool]>([])
            let failures = Mutex<[String]>([])
            let flag = self.flag
            DispatchQueue.concurrentPerform(iterations: 50) { _ in
                do {
                    let now = try flag.toggle()
                    results.withLock { $0.append(now) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            XCTAssertEqual(failures.withLock { $0 }, [])
            // Atomic toggles from a known state alternate: 25 land on "muted", 25 on "not muted",
            // and the last leaves the flag where it started.
            let states = results.withLock { $0 }
            XCTAssertEqual(states.filter { $0 }.count, 25, "round \(round)")
            XCTAssertEqual(states.filter { !$0 }.count, 25, "round \(round)")
            XCTAssertEqual(flag.isMuted, round.isMultiple(of: 2), "round \(round)")
        }
    }

    func testDirectoryAndFilesArePrivate() throws {
        try flag.set(true)
        XCTAssertTrue(flag.isMuted)
        XCTAssertEqual(mode(directory), 0o700)
        XCTAssertEqual(mode(directory.appending(path: "muted")), 0o600)
        XCTAssertEqual(mode(directory.appending(path: "muted.lock")), 0o600)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted(), ["muted", "muted.lock"])
    }

    func testAnOlderOpenDirectoryBecomesPrivate() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        try flag.set(false)
        XCTAssertEqual(mode(directory), 0o700)
    }

    func testALinkedDirectoryIsRefused() throws {
        let elsewhere = scratch.appending(path: "elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: scratch.appending(path: "state"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: directory, withDestinationURL: elsewhere)
        XCTAssertThrowsError(try flag.set(true)) { error in
            XCTAssertTrue("\(error)".contains("symbolic link"), "\(error)")
        }
        XCTAssertThrowsError(try flag.toggle())
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path), [], "nothing written through the link")
    }

    func testLinksPlantedAsTheFilesAreNotFollowed() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let target = scratch.appending(path: "target")
        try Data("1\n".utf8).write(to: target)
        try FileManager.default.createSymbolicLink(at: directory.appending(path: "muted"), withDestinationURL: target)
        XCTAssertFalse(flag.isMuted, "the flag is not read through a link")
        try flag.set(false)
        XCTAssertEqual(try String(contentsOf: target, encoding: .utf8), "1\n", "the link's target is untouched")
        XCTAssertNil(try? FileManager.default.destinationOfSymbolicLink(atPath: directory.appending(path: "muted").path),
                     "the link was replaced by the flag file")

        // The lock file exists now; replace it with a link.
        try FileManager.default.removeItem(at: directory.appending(path: "muted.lock"))
        try FileManager.default.createSymbolicLink(at: directory.appending(path: "muted.lock"), withDestinationURL: target)
        XCTAssertThrowsError(try flag.set(true)) { error in
            XCTAssertTrue("\(error)".contains("muted.lock"), "\(error)")
        }
        XCTAssertEqual(try String(contentsOf: target, encoding: .utf8), "1\n")
    }
}
