import Foundation
import SFXHaptics
import Synchronization
import XCTest

/// The command backend with real programs: shell scripts in a temporary directory, run without a
/// shell of ours.
final class CommandBackendTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory(removedAfter: self)
    }

    private func script(_ name: String, _ body: String) throws -> String {
        let path = try directory.file(name, "#!/bin/sh\n\(body)\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        return path
    }

    func testPatternArrivesInTheEnvironmentAndArgumentsAsGiven() throws {
        let output = "\(directory.path)/out"
        let path = try script("buzz", #"echo "$1|$SFX_VIBRATE_MS|$SFX_VIBRATE_PATTERN|$SFX_VIBRATE_AMPLITUDE|$SFX_VIBRATE_REPEAT" > "$2""#)
        let vibrator = try Vibrator(backend: CommandBackend(arguments: [path, "two words", output]))
        vibrator.vibrate(try .waveform([200, 100, 200], amplitudes: [0.5, 0, 1]))
        vibrator.waitUntilIdle()
        XCTAssertNil(vibrator.lastError)
        XCTAssertEqual(directory.contents("out"), "two words|500|200,100,200|0.5,0,1|-1\n")
    }

    func testCancelTerminatesTheProgram() throws {
        let marker = "\(directory.path)/finished"
        let path = try script("slow", "sleep 30; touch \"\(marker)\"")
        let vibrator = try Vibrator(backend: CommandBackend(arguments: [path]))
        let started = Date()
        vibrator.vibrate()
        usleep(100_000)
        vibrator.cancel()
        vibrator.waitUntilIdle()
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker))
        XCTAssertNil(vibrator.lastError)
    }

    func testFailingProgramIsReported() throws {
        let path = try script("broken", "exit 3")
        let vibrator = try Vibrator(backend: CommandBackend(arguments: [path]))
        vibrator.vibrate(.click)
        vibrator.waitUntilIdle()
        XCTAssertEqual(vibrator.lastError?.description,
                       "vibration command \(path) failed (status 3) — run it by hand with SFX_VIBRATE_MS=400 to see why")
    }

    func testMissingProgramIsNamed() {
        let backend = CommandBackend(arguments: ["sfx-no-such-buzzer"], environment: ["PATH": directory.path])
        XCTAssertEqual(backend.availability(), .unavailable(reason:
            "vibration command 'sfx-no-such-buzzer' was not found or is not executable — give a full path or put it on PATH"))
    }

    func testProgramIsFoundOnPath() throws {
        let path = try script("buzz", "exit 0")
        XCTAssertEqual(CommandBackend(arguments: ["buzz"], environment: ["PATH": "/nonexistent:\(directory.path)"]).availability(),
                       .available(path))
    }
}

/// The program's signals: it must hear SIGTERM on cancel (its "turn it off" handler runs), whatever
/// the thread that started it had blocked or this process ignores.
final class CommandSignalTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory(removedAfter: self)
    }

    /// A bash script: bash, unlike dash, keeps the signal mask it starts with, as most programs do.
    private func script(_ name: String, _ body: String) throws -> String {
        let path = try directory.file(name, "#!/bin/bash\n\(body)\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        return path
    }

    /// Polls for `relativePath` for up to 5 s.
    private func waitForFile(_ relativePath: String) -> Bool {
        for _ in 0..<500 {
            if FileManager.default.fileExists(atPath: "\(directory.path)/\(relativePath)") { return true }
            usleep(10_000)
        }
        return false
    }

    /// Runs `body` on a new thread that blocks SIGINT and SIGTERM, as a Dispatch worker does once
    /// the process handles those signals through Dispatch (`Vibrator.installSignalCleanup()`).
    /// Returns a semaphore signalled when `body` has returned.
    private func startOnThreadBlockingTermination(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            var blocked = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGINT)
            sigaddset(&blocked, SIGTERM)
            pthread_sigmask(SIG_BLOCK, &blocked, nil)
            body()
            done.signal()
        }
        thread.start()
        return done
    }

    func testProgramStartsWithNoSignalBlockedOrIgnored() throws {
        let path = try script("masks", #"exec grep -E '^Sig(Blk|Ign):' /proc/self/status > "$1""#)
        let backend = CommandBackend(arguments: [path, "\(directory.path)/masks.txt"])
        let failure = Mutex<HapticError?>(nil)
        // An ignored signal is inherited through exec unless the child resets it.
        let previous = signal(SIGHUP, SIG_IGN)
        defer { signal(SIGHUP, previous) }
        startOnThreadBlockingTermination {
            do throws(HapticError) {
                try backend.play(.click, until: HapticStopSignal())
            } catch {
                failure.withLock { $0 = error }
            }
        }.wait()
        XCTAssertNil(failure.withLock { $0 })
        // /proc/<pid>/status prints each set as 64 bits in hex, bit n−1 for signal n.
        let masks = try XCTUnwrap(directory.contents("masks.txt")).split(separator: "\n").map {
            UInt64($0.split(separator: "\t")[1], radix: 16) ?? .max
        }
        XCTAssertEqual(masks.count, 2)
        XCTAssertEqual(masks.first, 0, "no signal is blocked")
        // glibc's posix_spawn leaves its two internal real-time signals (32, 33) ignored; every
        // standard signal (1…31) must be at its default.
        XCTAssertEqual(masks.last.map { $0 & 0x7fff_ffff }, 0, "no standard signal is ignored")
    }

    func testCancelRunsTheProgramsTermHandlerWithin100Milliseconds() throws {
        let log = "\(directory.path)/log"
        let path = try script("buzz", """
            trap 'echo off >> "\(log)"; exit 0' TERM
            echo on > "\(log)"
            sleep 30
            echo finished >> "\(log)"
            """)
        let backend = CommandBackend(arguments: [path])
        let stop = HapticStopSignal()
        let failure = Mutex<HapticError?>(nil)
        let ended = startOnThreadBlockingTermination {
            do throws(HapticError) {
                try backend.play(.default, until: stop)
            } catch {
                failure.withLock { $0 = error }
            }
        }
        XCTAssertTrue(waitForFile("log"), "the program started")
        let cancelled = Date()
        stop.signal()
        ended.wait()  // play returns once the program has ended, so its handler has run
        let elapsed = Date().timeIntervalSince(cancelled)
        print("cancel → TERM handler logged and program ended: \(String(format: "%.2f", elapsed * 1000)) ms")
        XCTAssertEqual(directory.contents("log"), "on\noff\n")
        XCTAssertLessThan(elapsed, 0.100)
        XCTAssertNil(failure.withLock { $0 })
    }

    func testCancelAlsoStopsWhatTheProgramStarted() throws {
        let path = try script("parent", #"sleep 30 & echo $! > "$1"; wait"#)
        let vibrator = try Vibrator(backend: CommandBackend(arguments: [path, "\(directory.path)/child"]))
        vibrator.vibrate()
        XCTAssertTrue(waitForFile("child"))
        usleep(20_000)
        let child = try XCTUnwrap(directory.contents("child").flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
        vibrator.cancel()
        vibrator.waitUntilIdle()
        XCTAssertTrue(ProcessState.isGone(child, within: 2), "the program's own child \(child) was stopped with it")
    }
}

/// Whether a process has ended, read from /proc: gone, or a zombie waiting for a parent to reap it.
enum ProcessState {
    static func isGone(_ pid: pid_t, within seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        repeat {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
            // The state follows the command name in parentheses: "123 (sleep) Z …".
            if let close = stat.lastIndex(of: ")"), stat[close...].dropFirst(2).first == "Z" { return true }
            usleep(5_000)
        } while Date() < deadline
        return false
    }
}
