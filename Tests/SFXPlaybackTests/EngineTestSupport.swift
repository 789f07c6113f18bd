import Foundation
import Synchronization
import XCTest
import SFXCore
import SFXCardSupport
import SFX
@testable import SFXPlayback

/// An engine on a fresh virtual card, with periods of 20 ms or more unless a test asks otherwise
/// (these machines' timer wake-ups are now and then late by several milliseconds). The classic
/// path unless `rewind` (tests that place plays at period boundaries assume it); `card` makes
/// the card (a rewind test's pointer or rewind behaviour).
struct EngineOnCard {
    let card: VirtualCard
    let engine: SoundEngine

    init(period: Int = 960, periods: Int = 4, maxVoices: Int = 64, formats: [SampleFormat] = [.float32],
         idleTimeout: Duration? = nil, device: String? = nil, validating: Bool = true, rewind: Bool = false,
         card given: VirtualCard? = nil,
         adjust: (inout SoundEngine.Configuration) -> Void = { _ in }) throws {
        card = try given ?? VirtualCard()
        card.makeCurrent()
        var configuration = SoundEngine.Configuration()
        configuration.output.device = device ?? card.hardwarePCMName
        configuration.output.periodFrames = period
        configuration.output.periodCount = periods
        configuration.output.formats = formats
        configuration.maxVoices = maxVoices
        configuration.idleTimeout = idleTimeout
        configuration.rewind = rewind
        // The user's own mute flag stays out of tests: each engine has its own.
        configuration.muteFlag = MuteFlag(url: card.directory.appending(path: "muted"))
        adjust(&configuration)
        engine = try SoundEngine(configuration: configuration, validating: validating)
    }

    func close() {
        engine.close()
        try? card.remove()
    }

    /// The last recording of the card, as float samples.
    func recording() throws -> WAVAudio {
        try WAVAudio(contentsOf: XCTUnwrap(card.recordingURLs().last))
    }
}

/// Collects completions from any thread.
final class Completions: Sendable {
    private let state = Mutex<[VoiceID: [PlayOutcome]]>([:])

    func record(_ voice: VoiceID, _ outcome: PlayOutcome) {
        state.withLock { $0[voice, default: []].append(outcome) }
    }

    var all: [VoiceID: [PlayOutcome]] { state.withLock { $0 } }

    /// Plays `sound` on `engine` with a completion that records its outcome here, and returns
    /// the voice's id. The completion may run before `play` returns: it waits for the id.
    @discardableResult
    func play(_ sound: SoundID, on engine: SoundEngine, volume: Float, priority: VoicePriority = .normal) -> VoiceID {
        let box = Mutex<VoiceID?>(nil)
        let voice = engine.play(sound, volume: volume, priority: priority) { outcome in
            while box.withLock({ $0 }) == nil { usleep(100) }
            self.record(box.withLock { $0! }, outcome)
        }
        box.withLock { $0 = voice.id }
        return voice.id
    }
}

/// Waits until `condition` holds or `timeout` passes; returns whether it held.
func eventually(timeout: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}
