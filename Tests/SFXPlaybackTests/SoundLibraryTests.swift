import Foundation
import Synchronization
import XCTest
import SFXCore
import SFX
@testable import SFXPlayback

/// The registry: system sounds by name and id from the bundled theme and installed themes,
/// custom sounds from files and buffers, disposal.
final class SoundLibraryTests: XCTestCase {
    var scratch: URL!

    override func setUpWithError() throws {
        scratch = FileManager.default.temporaryDirectory.appending(path: "sfx-library-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: scratch)
    }

    /// A library that sees only the bundle and Debian's freedesktop theme, plus `home` when given.
    func makeLibrary(theme: String = "sfx", home: URL? = nil) throws -> SoundLibrary {
        var configuration = SoundLibrary.Configuration()
        configuration.theme = theme
        configuration.environment = ["XDG_DATA_DIRS": "/usr/share", "XDG_DATA_HOME": (home ?? scratch).path, "LANG": "C"]
        return try SoundLibrary(configuration: configuration)
    }

    func testBundledSystemSoundsHaveTheirIndexIDs() throws {
        let library = try makeLibrary()
        XCTAssertEqual(try library.systemSound(named: "tock").rawValue, 1000)
        XCTAssertEqual(try library.systemSound(named: "bell").rawValue, 1010)
        XCTAssertEqual(try library.systemSound(id: SoundID(rawValue: 1001)).rawValue, 1001)
        // Loading twice gives the same id and the same cue.
        let cue = try XCTUnwrap(library.cue(for: SoundID(rawValue: 1000)))
        XCTAssertEqual(try library.systemSound(named: "tock").rawValue, 1000)
        XCTAssertTrue(cue === library.cue(for: SoundID(rawValue: 1000)))
        XCTAssertEqual(cue.format, .standard)
        XCTAssertEqual(cue.frameCount, 3840)  // 80 ms at 48 kHz
    }

    func testListHasTheBundleAndTheInstalledFreedesktopTheme() throws {
        let sounds = try makeLibrary().systemSounds()
        let bundled = sounds.filter { $0.theme == "sfx" && ($0.id?.rawValue ?? 0) < 2000 }
        XCTAssertGreaterThanOrEqual(bundled.count, 16)
        XCTAssertTrue(bundled.allSatisfy { !($0.description ?? "").isEmpty })
        let incoming = try XCTUnwrap(sounds.first { $0.name == "phone-incoming-call" })
        XCTAssertEqual(incoming.theme, "freedesktop")
        XCTAssertEqual(incoming.id, SoundNamingSpec.idByName["phone-incoming-call"].map(SoundID.init(rawValue:)))
        XCTAssertEqual(Set(sounds.map(\.name)).count, sounds.count, "each name once")
    }

    func testFreedesktopNamesNotBundledComeFromTheInstalledTheme() throws {
        let library = try makeLibrary()
        let sound = try library.systemSoundFile(named: "phone-incoming-call")
        XCTAssertEqual(sound.theme, "freedesktop")
        XCTAssertEqual(sound.file, "/usr/share/sounds/freedesktop/stereo/phone-incoming-call.oga")
        let id = try library.systemSound(named: "phone-incoming-call")
        XCTAssertTrue(id.isSystem)
        XCTAssertGreaterThanOrEqual(id.rawValue, 2000)
        let cue = try XCTUnwrap(library.cue(for: id))
        XCTAssertEqual(cue.format, .standard, "resampled from 44.1 kHz at load")
    }

    func testTheThemeIsConfigurable() throws {
        let sound = try makeLibrary(theme: "freedesktop").systemSoundFile(named: "bell")
        XCTAssertEqual(sound.theme, "freedesktop")
        XCTAssertTrue(sound.file.hasSuffix("freedesktop/stereo/bell.oga"))
    }

    func testAThemeOfTheUserCanDisableOrReplaceASound() throws {
        let theme = scratch.appending(path: "sounds/kiosk")
        try FileManager.default.createDirectory(at: theme.appending(path: "stereo"), withIntermediateDirectories: true)
        try """
        [Sound Theme]
        Name=kiosk
        Inherits=sfx
        Directories=stereo

        [stereo]
        OutputProfile=stereo
        """.write(to: theme.appending(path: "index.theme"), atomically: true, encoding: .utf8)
        try Data().write(to: theme.appending(path: "stereo/tock.disabled"))
        let library = try makeLibrary(theme: "kiosk")
        XCTAssertThrowsError(try library.systemSound(named: "tock")) { error in
            XCTAssertEqual(String(describing: error),
                           "system sound 'tock' is disabled by theme 'kiosk' (it has tock.disabled): it plays nothing")
        }
        XCTAssertEqual(try library.systemSoundFile(named: "tink").theme, "sfx", "inherited from sfx")
    }

    func testUnknownNamesSayWhereToLook() throws {
        XCTAssertThrowsError(try makeLibrary().systemSound(named: "no-such-sound-anywhere")) { error in
            XCTAssertEqual(String(describing: error),
                           "no system sound named 'no-such-sound-anywhere' in theme 'sfx' or the themes it inherits; `sfx list` shows the names there are")
        }
    }

    func testCustomSoundsGetNewIDsAndCanBeDisposed() throws {
        let library = try makeLibrary()
        let file = scratch.appending(path: "click.wav")
        try OfflineMix.render([OfflineMix.Play(sound: library.systemSound(named: "tock"))], library: library, to: file)
        let a = try library.load(contentsOf: file)
        let b = try library.load(contentsOf: file)
        XCTAssertFalse(a.isSystem)
        XCTAssertGreaterThanOrEqual(a.rawValue, 65_536)
        XCTAssertNotEqual(a, b)
        let cue = try library.dispose(a)
        XCTAssertEqual(cue.name, "click.wav")
        XCTAssertNil(library.cue(for: a))
        XCTAssertNotNil(library.cue(for: b))
        XCTAssertThrowsError(try library.dispose(a)) { error in
            XCTAssertEqual(String(describing: error), "no sound has id \(a): it was never loaded, or it was disposed")
        }
        let c = try library.load(contentsOf: file)
        XCTAssertGreaterThan(c.rawValue, b.rawValue, "ids are never reused")
    }

    /// Issue 9, item 5a: load(contentsOf:) of a FIFO throws at once instead of blocking in open.
    func testLoadingAFIFOFailsAtOnce() throws {
        let library = try makeLibrary()
        let fifo = scratch.appending(path: "pipe.ogg")
        XCTAssertEqual(mkfifo(fifo.path, 0o600), 0)
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<String?>(nil)
        Thread.detachNewThread {
            do {
                _ = try library.load(contentsOf: fifo)
                outcome.withLock { $0 = "loaded" }
            } catch {
                outcome.withLock { $0 = String(describing: error) }
            }
            done.signal()
        }
        if done.wait(timeout: .now() + 10) == .timedOut {
            XCTFail("load(contentsOf:) of a FIFO blocked")
            let fd = open(fifo.path, O_WRONLY | O_NONBLOCK)  // releases the reader stuck in open(2)
            if fd >= 0 { close(fd) }
            _ = done.wait(timeout: .now() + 10)
        }
        XCTAssertEqual(outcome.withLock { $0 }, "\(fifo.path): is a FIFO, not a regular file; give the path of a regular file")
    }

    /// A file whose name is not UTF-8 loads through load(file:); a URL cannot carry its name.
    func testLoadingANameThatIsNotUTF8() throws {
        let library = try makeLibrary()
        let file = scratch.appending(path: "plain.wav")
        try OfflineMix.render([OfflineMix.Play(sound: library.systemSound(named: "tock"))], library: library, to: file)
        let raw = RawFilePath(bytes: Array(scratch.path.utf8) + Array("/coin-".utf8) + [0xE9] + Array(".wav".utf8))
        XCTAssertEqual(raw.withCString { rename(file.path, $0) }, 0)
        let id = try library.load(file: raw)
        XCTAssertEqual(library.cue(for: id)?.name, "coin-\\xE9.wav")
    }

    func testSystemSoundsAreNeverDisposed() throws {
        let library = try makeLibrary()
        let tock = try library.systemSound(named: "tock")
        XCTAssertThrowsError(try library.dispose(tock)) { error in
            XCTAssertEqual(String(describing: error), "sound 1000 is a system sound: system sounds are never disposed")
        }
        XCTAssertNotNil(library.cue(for: tock))
    }

    func testBuffersAreConvertedToTheLibraryFormat() throws {
        let library = try makeLibrary()
        // One second of a 441 Hz mono sine at 44.1 kHz: 48,000 stereo frames at 48 kHz.
        let sine = (0..<44_100).map { Float(0.5 * sin(2 * Double.pi * 441 * Double($0) / 44_100)) }
        let id = try library.load(buffer: sine, sampleRate: 44_100, channels: 1, name: "sine")
        let cue = try XCTUnwrap(library.cue(for: id))
        XCTAssertEqual(cue.frameCount, 48_000)
        XCTAssertEqual(cue.format, .standard)
        withExtendedLifetime(cue) {
            let peak = cue.samples.reduce(0) { max($0, abs($1)) }
            XCTAssertEqual(peak, 0.5, accuracy: 0.01)
            // Both channels carry the mono signal.
            for frame in stride(from: 1000, to: 47_000, by: 997) {
                XCTAssertEqual(cue.samples[2 * frame], cue.samples[2 * frame + 1])
            }
        }
        XCTAssertThrowsError(try library.load(buffer: [0.1, 0.2, 0.3], sampleRate: 48_000, channels: 2))
    }

    func testLongFilesAreRefusedWithTheLimitAndTheWayOut() throws {
        var configuration = SoundLibrary.Configuration()
        configuration.limits = .init(maximumDuration: 0.5)
        let library = try SoundLibrary(configuration: configuration)
        let file = scratch.appending(path: "long.wav")
        try OfflineMix.render([OfflineMix.Play(sound: library.systemSound(named: "tock"), at: 0.6)], library: library, to: file)
        XCTAssertThrowsError(try library.load(contentsOf: file)) { error in
            let message = String(describing: error)
            XCTAssertTrue(message.hasPrefix(file.path), message)
            XCTAssertFalse(message.contains("\n"))
        }
    }
}
