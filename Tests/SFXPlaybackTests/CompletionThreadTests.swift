// Every completion runs on the engine's completion queue, whatever ended the play, and never on
// the caller's thread; `voice.outcome` gives the same outcome to async code.
import Foundation
import Synchronization
import XCTest
import SFXCore
import SFXCardSupport
import SFX
@testable import SFXPlayback

final class CompletionThreadTests: XCTestCase {
    /// Where one completion ran, and with what.
    private final class Seen: Sendable {
        let state = Mutex<(outcome: PlayOutcome, onCompletionQueue: Bool, callerThread: Bool)?>(nil)
        let caller = pthread_self()

        func completion() -> @Sendable (PlayOutcome) -> Void {
            { [self] outcome in
                state.withLock {
                    $0 = (outcome, EventDelivery.isOnCompletionQueue, pthread_equal(pthread_self(), caller) != 0)
                }
            }
        }

        func wait() -> (outcome: PlayOutcome, onCompletionQueue: Bool, callerThread: Bool)? {
            _ = eventually { state.withLock { $0 } != nil }
            return state.withLock { $0 }
        }
    }

    private func assertOnTheCompletionQueue(_ seen: Seen, _ expected: PlayOutcome, file: StaticString = #filePath, line: UInt = #line) {
        guard let got = seen.wait() else { return XCTFail("no completion", file: file, line: line) }
        XCTAssertEqual(got.outcome, expected, file: file, line: line)
        XCTAssertTrue(got.onCompletionQueue, "ran on the completion queue", file: file, line: line)
        XCTAssertFalse(got.callerThread, "not on the caller's thread", file: file, line: line)
    }

    func testPlaysRejectedBeforeTheyStartCompleteOnTheCompletionQueue() throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let engine = setup.engine
        let tock = try engine.systemSound(named: "tock")

        let badVolume = Seen()
        engine.play(tock, volume: -1, completion: badVolume.completion())
        assertOnTheCompletionQueue(badVolume, .rejected(.invalidSetting(.outOfRange(setting: "volume", value: "-1.0",
                                                                                    allowed: "a number from 0.0 to 16.0"))))

        let unknown = Seen()
        engine.play(SoundID(rawValue: 999_999), completion: unknown.completion())
        assertOnTheCompletionQueue(unknown, .rejected(.unknownSound(SoundID(rawValue: 999_999))))

        let played = Seen()
        engine.play(tock, completion: played.completion())
        assertOnTheCompletionQueue(played, .finished)

        engine.close()
        let closed = Seen()
        engine.play(tock, completion: closed.completion())
        assertOnTheCompletionQueue(closed, .rejected(.engineClosed))
    }

    func testAMutedAlertCompletesOnTheCompletionQueue() throws {
        let setup = try EngineOnCard { $0.alertVibration = .never }
        defer { setup.close() }
        try setup.engine.configuration.muteFlag.set(true)
        let bell = try setup.engine.systemSound(named: "bell")
        let seen = Seen()
        let result = setup.engine.alert(bell, completion: seen.completion())
        XCTAssertFalse(result.played)
        guard let got = seen.wait() else { return XCTFail("no completion") }
        guard case .rejected(.muted(let state)) = got.outcome else { return XCTFail("\(got.outcome)") }
        XCTAssertTrue(state.isMuted)
        XCTAssertTrue(got.onCompletionQueue)
        XCTAssertFalse(got.callerThread)
    }

    /// `voice.outcome`, or nil when it has not come within 10 s (so a lost outcome fails the test
    /// instead of hanging it).
    private func awaitOutcome(of voice: Voice) async -> PlayOutcome? {
        await withTaskGroup(of: PlayOutcome?.self) { group in
            group.addTask { await voice.outcome }
            group.addTask {
                try? await Task.sleep(for: .seconds(10))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// `await voice.outcome` returns what the completion got, after it ran; for a play already
    /// ended it returns at once; a rejected play has its outcome too.
    func testAVoicesOutcomeCanBeAwaited() async throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let engine = setup.engine
        let tock = try engine.systemSound(named: "tock")
        let ran = Mutex(false)
        let voice = engine.play(tock) { _ in ran.withLock { $0 = true } }
        let outcome = await awaitOutcome(of: voice)
        XCTAssertEqual(outcome, .finished)
        XCTAssertTrue(ran.withLock { $0 }, "after the completion")
        let again = await awaitOutcome(of: voice)
        XCTAssertEqual(again, .finished)

        let looping = engine.play(tock, loops: -1)
        try looping.stop(fade: .milliseconds(1))
        let stopped = await awaitOutcome(of: looping)
        XCTAssertEqual(stopped, .stopped)

        let rejected = await awaitOutcome(of: engine.play(tock, pan: 2))
        guard case .rejected(.invalidSetting(let error))? = rejected else { return XCTFail(String(describing: rejected)) }
        XCTAssertEqual(error.setting, "pan")
    }

    /// The async load decodes on another thread and gives the same sound as the plain one.
    func testTheAsyncLoadDecodesOffTheCallersThread() async throws {
        let setup = try EngineOnCard()
        defer { setup.close() }
        let file = setup.card.directory.appending(path: "tone.wav")
        let samples = (0..<4_800).map { Float(sin(Double($0) * 0.05)) * 0.5 }
        try WAVAudio(sampleRate: 48_000, channels: 1, samples: samples).write(to: file)
        // In async code `load(contentsOf:)` is the async form; a synchronous closure calls the other.
        let loadHere = { () throws -> SoundID in try setup.engine.load(contentsOf: file) }
        let plain = try loadHere()
        let loaded = try await setup.engine.load(contentsOf: file)
        XCTAssertNotEqual(plain, loaded, "a new sound")
        let a = try XCTUnwrap(setup.engine.library.cue(for: plain))
        let b = try XCTUnwrap(setup.engine.library.cue(for: loaded))
        XCTAssertEqual(a.frameCount, b.frameCount)
        XCTAssertEqual(a.frameCount, 4_800)

        do {
            _ = try await setup.engine.load(contentsOf: setup.card.directory.appending(path: "missing.wav"))
            XCTFail("a missing file loads")
        } catch {
            XCTAssertTrue(error.description.contains("missing.wav"), error.description)
        }
    }
}
