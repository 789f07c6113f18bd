import CALSA
import Foundation
import SFXCardSupport
import XCTest

/// The card models a playback rewind as hardware does: what it records is what reached its DAC;
/// frames rewritten before the DAC reached them are replaced, frames it had already played are
/// lost and logged; and it can instead accept a rewind and ignore it, as ALSA's pulse plugin does.
final class RewindTests: CardTestCase {
    /// Replaces the test's card by one with these playback options.
    func useCard(pointer: VirtualCard.PointerGranularity, rewind: VirtualCard.RewindBehavior = .honest) throws {
        try card.remove()
        card = try VirtualCard(pointer: pointer, rewind: rewind)
        card.makeCurrent()
    }

    /// The margin these clients leave ahead of the pointer: 5 ms, for a test process on a loaded
    /// machine between reading the pointer and writing.
    static let guardFrames = 240
    /// The margin of the clients that must not run the stream dry while they rewrite: 20 ms
    /// (these machines now and then hold a thread for several milliseconds; with 5 ms the
    /// rewrite came too late now and then, an underrun that failed the test).
    static let safeGuardFrames = 960

    func constant(_ value: Float, frames: Int) -> [Float] { [Float](repeating: value, count: frames * 2) }

    /// Plays a buffer of 0.25, waits, then takes back what `rewindAmount` says and writes 0.5
    /// instead, plus `tail` frames more of 0.5. Returns (frames written before the rewind,
    /// frames rewound, delay before and after the rewind).
    func playRewindAndRewrite(tail: Int = 1_920, wait: useconds_t = 30_000,
                              rewindAmount: (_ rewindable: Int) -> Int) throws -> (written: Int, rewound: Int, delays: (Int, Int)) {
        let pcm = try PCM(card.hardwarePCMName)
        try pcm.configure(periodFrames: 960, periods: 4)
        try pcm.write(constant(0.25, frames: 3_840))
        usleep(wait)
        XCTAssertGreaterThan(snd_pcm_avail(pcm.handle), 0, "the pointer is updated before asking what is rewindable")
        let rewindable = Int(snd_pcm_rewindable(pcm.handle))
        XCTAssertGreaterThan(rewindable, 0)
        let before = try pcm.delay()
        let rewound = Int(snd_pcm_rewind(pcm.handle, snd_pcm_uframes_t(rewindAmount(rewindable))))
        let after = try pcm.delay()
        try pcm.write(constant(0.5, frames: rewound + tail))
        try pcm.drain()
        return (3_840, rewound, (before, after))
    }

    /// `run` on a new card with `pointer` and `rewind`, again (up to three times in all) when
    /// this test process was held up so long between its rewind and its rewrite that the DAC
    /// caught up and the card underran (EPIPE), as it must: these machines now and then hold a
    /// thread for tens of milliseconds, and what is tested is the card's rewinding, not that.
    func onTime<Result>(pointer: VirtualCard.PointerGranularity, rewind: VirtualCard.RewindBehavior = .honest,
                        _ run: () throws -> Result) throws -> Result {
        for attempt in 1... {
            try useCard(pointer: pointer, rewind: rewind)
            do {
                return try run()
            } catch where attempt < 3 && "\(error)".contains("-32") {
                print("attempt \(attempt): the test's thread came too late for its rewrite (\(error)); again")
            }
        }
        fatalError("unreachable")
    }

    func lost() throws -> [(frames: Int, from: Int)] {
        try card.events().compactMap { if case .lost(let frames, let from) = $0.kind { (frames, from) } else { nil } }
    }

    func rewinds() throws -> [(frames: Int, to: Int, ignored: Bool)] {
        try card.events().compactMap {
            if case .rewind(let frames, let to, let ignored) = $0.kind { (frames, to, ignored) } else { nil }
        }
    }

    func testARewrittenRegionIsReplacedNotAdded() throws {
        let run = try onTime(pointer: .frame) { try playRewindAndRewrite { $0 - Self.safeGuardFrames } }
        XCTAssertGreaterThan(run.rewound, 1_000)
        XCTAssertGreaterThanOrEqual(run.delays.0 - run.delays.1, run.rewound, "the delay drops by what was rewound")
        let samples = try WAVAudio(contentsOf: card.recordingURL).samples
        let kept = run.written - run.rewound
        XCTAssertEqual(samples.count, (kept + run.rewound + 1_920) * 2, "the rewritten frames are not played twice")
        XCTAssertTrue(samples.prefix(kept * 2).allSatisfy { $0 == 0.25 }, "what was kept plays as first written")
        XCTAssertTrue(samples.dropFirst(kept * 2).allSatisfy { $0 == 0.5 }, "the rewritten region plays as rewritten, not added")
        XCTAssertEqual(try rewinds().map(\.frames), [run.rewound])
        XCTAssertEqual(try rewinds().map(\.to), [kept])
        XCTAssertTrue(try lost().isEmpty, "a rewind to a guard ahead of a per-frame pointer loses nothing")
    }

    /// A client that trusts a pointer moving per period rewinds to a guard ahead of it: the
    /// frames between there and the DAC were already played, and the card says so instead of
    /// recording the rewrite.
    func testACarelessRewindBehindTheDACIsCaughtAndLogged() throws {
        // 30 ms: 1.5 periods played, pointer at 960. The rewrite must start before the DAC ends
        // the second period (40 ms), or the pointer passes it and the card underruns.
        let run = try onTime(pointer: .period) { try playRewindAndRewrite(wait: 30_000) { $0 - Self.guardFrames } }
        let kept = run.written - run.rewound
        XCTAssertEqual((kept - Self.guardFrames) % 960, 0, "the pointer stood at a period's end")
        let lost = try lost()
        XCTAssertEqual(lost.count, 1)
        XCTAssertEqual(lost.first?.from, kept)
        let lostFrames = try XCTUnwrap(lost.first?.frames)
        XCTAssertGreaterThan(lostFrames, 0)
        let samples = try WAVAudio(contentsOf: card.recordingURL).samples
        let played = kept + lostFrames
        // The DAC goes on while the rewrite is written, so the first rewritten frame heard can
        // be a little after where the card saw the DAC when the write began (within a period).
        let firstRewrite = try XCTUnwrap(samples.firstIndex { $0 == 0.5 }, "the rewrite was heard") / 2
        XCTAssertGreaterThanOrEqual(firstRewrite, played, "nothing of the rewrite before the DAC's position")
        XCTAssertLessThan(firstRewrite - played, 960, "then the rewrite, from about the DAC on")
        XCTAssertTrue(samples.prefix(firstRewrite * 2).allSatisfy { $0 == 0.25 }, "the DAC played the first write up to there")
        XCTAssertTrue(samples.dropFirst(firstRewrite * 2).prefix(2).allSatisfy { $0 == 0.5 }, "and the rewrite from there")
    }

    /// The same client against a per-frame pointer rewinds exactly to the DAC and loses nothing.
    func testAPerFramePointerLetsTheSameClientRewindSafely() throws {
        _ = try onTime(pointer: .frame) { try playRewindAndRewrite { $0 - Self.safeGuardFrames } }
        XCTAssertTrue(try lost().isEmpty)
    }

    /// As ALSA's pulse plugin: rewindable and rewind answer, the delay does not drop, and
    /// everything written plays in order.
    func testACardThatIgnoresRewindsPlaysEverythingWritten() throws {
        let run = try onTime(pointer: .frame, rewind: .ignore) { try playRewindAndRewrite(tail: 0) { $0 - Self.safeGuardFrames } }
        XCTAssertGreaterThan(run.rewound, 1_000, "the rewind was answered as done")
        XCTAssertLessThan(run.delays.0 - run.delays.1, run.rewound / 4, "but the delay did not drop")
        let samples = try WAVAudio(contentsOf: card.recordingURL).samples
        XCTAssertEqual(samples.count, (run.written + run.rewound) * 2, "the old frames and the new ones all played")
        XCTAssertTrue(samples.prefix(run.written * 2).allSatisfy { $0 == 0.25 })
        XCTAssertTrue(samples.dropFirst(run.written * 2).allSatisfy { $0 == 0.5 })
        XCTAssertEqual(try rewinds().map(\.ignored), [true])
    }

    func testThePointerOptionsAreCheckedAtOpen() throws {
        let text = try String(contentsOf: card.configURL, encoding: .utf8)
        XCTAssertTrue(text.contains("pointer period"))
        XCTAssertTrue(text.contains("rewind honest"))
        let broken = text.replacingOccurrences(of: "pointer period", with: "pointer sometimes")
        try Data(broken.utf8).write(to: card.configURL)
        XCTAssertThrowsError(try PCM(card.hardwarePCMName))
    }
}
