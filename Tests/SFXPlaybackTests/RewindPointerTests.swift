import Foundation
import Glibc
import Synchronization
import XCTest
import SFXCore
import SFXDevice
import SFXCardSupport
import SFX
@testable import SFXPlayback

/// Rewind mode and the granularity of the device's pointer: a pointer that moves per period lags
/// the DAC by up to a period after a command's wake-up, so the engine measures how coarsely it
/// moves, rewinds only that far clear of it, and takes small periods when it is coarse; a pointer
/// that follows the DAC keeps the deep periods and the guard alone.
final class RewindPointerTests: XCTestCase {
    func testOnTheDefaultPerPeriodCardManyTriggersLoseNoFrameAndTheRecordingIsTheOfflineMix() throws {
        // The virtual card as `sfx play` finds it: its pointer moves a period at a time.
        let setup = try RewindTests.rewindingEngine(period: 512, periods: 3, pointer: .period)
        defer { setup.close() }
        XCTAssertTrue(eventually { setup.engine.metrics.rewind == .active }, "\(setup.engine.metrics.rewind)")
        let metrics = setup.engine.metrics
        XCTAssertEqual(metrics.parameters.periodFrames, 128, "opened with small periods: \(metrics)")
        XCTAssertEqual(metrics.parameters.bufferFrames, 2_048, "and the deep buffer: 42.7 ms")
        XCTAssertEqual(metrics.parameters.wakeFrames, 1_024, "woken when half the buffer is free, not every period")
        XCTAssertTrue(try setup.card.events().contains { if case .swParams(.playback, _, availMin: 1_024, _) = $0.kind { true } else { false } },
                      "the card was told: avail_min 1,024")
        XCTAssertGreaterThanOrEqual(metrics.pointerGranularity, 128, "a period at a time")
        XCTAssertEqual(metrics.pointerGranularity % 128, 0, "whole periods")
        XCTAssertTrue(metrics.delayFollowsDAC, "the card's delay follows its DAC: rewinds trust it, not the pointer")
        XCTAssertLessThan(metrics.latencyEstimate, .milliseconds(3), "the guard and the wake-up, no period of slack")

        let tone = try setup.engine.load(buffer: RewindTests.sine(seconds: 0.05, frequency: 440), sampleRate: 48_000, channels: 1)
        let click = try setup.engine.load(buffer: SoundEngineTests.tone(seconds: 0.02), sampleRate: 48_000, channels: 1)
        var plays: [OfflineMix.Play] = []
        // The device is opened once: the recording starts at the mixer's first frame.
        let origin = setup.engine.outputThread.deviceStartFrame.load(ordering: .acquiring)
        XCTAssertEqual(origin, 0, "the device was not reopened")
        XCTAssertEqual(try setup.card.events().filter { if case .open = $0.kind { true } else { false } }.count, 1)
        var last = setup.engine.outputThread.lastPlacement.load(ordering: .acquiring)
        for n in 0..<40 {
            let sound = n % 3 == 0 ? tone : click
            let volume: Float = 0.2 + Float(n % 4) * 0.1
            let pan = Float(n % 5) * 0.4 - 0.8
            setup.engine.play(sound, volume: volume, pan: pan)
            last = try XCTUnwrap(RewindTests.placement(after: last, setup))
            plays.append(OfflineMix.Play(sound: sound, at: Double(last - origin) / 48_000, volume: volume, pan: pan))
            usleep(UInt32(3_000 + (n * 1_700) % 9_000))   // lands anywhere within a period
        }
        XCTAssertTrue(setup.engine.waitUntilIdle(timeout: .seconds(5)))
        let rewinds = setup.engine.metrics.rewinds
        setup.engine.close()
        XCTAssertGreaterThanOrEqual(rewinds, 40, "every play started by rewinding")

        // A rewrite the DAC overtook (the thread held up past the 1 ms guard, as these machines
        // now and then hold it: a scheduler's limit, measured in Bench) plays what was first
        // written there; the card logs it as lost. The mix is compared up to the first one.
        let late = try setup.card.events().compactMap { event -> Int? in
            if case .lost(_, let from) = event.kind { return from }
            return nil
        }.min()
        let recording = try setup.recording()
        let reference = try OfflineMix.render(plays, library: setup.engine.library)
        XCTAssertGreaterThanOrEqual(recording.samples.count, reference.count)
        let compared = min(reference.count, (late ?? reference.count) * 2)
        if let late { print("the DAC overtook a rewrite at frame \(late): the mix compared up to it") }
        let got = Array(recording.samples.prefix(compared))
        let firstDifference = zip(got, reference).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        XCTAssertNil(firstDifference, "the recording differs from the offline mix at sample \(firstDifference ?? -1)")
    }

    func testAPointerThatFollowsTheDACNeedsTheGuardAlone() throws {
        let setup = try RewindTests.rewindingEngine(period: 512, periods: 3, pointer: .frame)
        defer { setup.close() }
        XCTAssertTrue(eventually { setup.engine.metrics.rewind == .active }, "\(setup.engine.metrics.rewind)")
        let metrics = setup.engine.metrics
        XCTAssertEqual(metrics.parameters.periodFrames, 128, "\(metrics)")
        XCTAssertEqual(metrics.parameters.bufferFrames, 2_048)
        // 1 when every read of the pointer was followed at once by the clock's; a read that was
        // preempted in between shows as a few frames more, far below a millisecond (48).
        XCTAssertGreaterThanOrEqual(metrics.pointerGranularity, 1)
        XCTAssertLessThan(metrics.pointerGranularity, 48, "\(metrics)")
        XCTAssertLessThan(metrics.latencyEstimate, .milliseconds(3), "the guard and the wake-up, about 1 ms each")
        XCTAssertTrue(metrics.description.contains("pointer granularity \(metrics.pointerGranularity) frames"), metrics.description)
    }

    func testAPointerThatMovesInStepsMeasuresAsAStepAtLeast() throws {
        let engine = try Self.nullEngine()
        defer { engine.close() }
        let device = try SteppedDevice(step: 480, batched: false)
        let granularity = engine.outputThread.measureGranularity(device)
        XCTAssertGreaterThanOrEqual(granularity, 480)
        XCTAssertEqual(granularity % 480, 0, "whole steps (two when a read came late)")
    }

    /// A delay computed from a stepped pointer steps too, and does not count as following the
    /// DAC; a delay that follows the clock does, whatever the pointer does (the virtual card's).
    func testTheDelayIsTrustedOnlyWhenItFollowsTheClock() throws {
        let engine = try Self.nullEngine()
        defer { engine.close() }
        let stepped = engine.outputThread.measurePosition(try SteppedDevice(step: 480, batched: false))
        XCTAssertGreaterThanOrEqual(stepped.pointer, 480)
        XCTAssertFalse(stepped.delayFollowsDAC, "a delay that moves in steps of 480")
        let smooth = engine.outputThread.measurePosition(try SteppedDevice(step: 480, batched: true, exactDelay: true))
        XCTAssertGreaterThanOrEqual(smooth.pointer, SteppedDevice.periodFrames, "a batch device: a period at least")
        XCTAssertTrue(smooth.delayFollowsDAC, "its delay follows the clock")
    }

    func testADeviceThatSaysItMovesInBatchesCountsAsAPeriodAtLeast() throws {
        let engine = try Self.nullEngine()
        defer { engine.close() }
        let device = try SteppedDevice(step: 1, batched: true)
        XCTAssertGreaterThanOrEqual(engine.outputThread.measureGranularity(device), device.parameters.periodFrames)
    }

    func testTheCoarseRequestKeepsTheBufferInPeriodsOf128Frames() {
        let coarse = RewindMode.coarseRequest(for: PlaybackRequest())
        XCTAssertEqual(coarse.periodFrames, 128)
        XCTAssertEqual(coarse.periodCount, 16, "20 ms (8 periods) left at each wake-up, and as much written")
        XCTAssertEqual(coarse.wakePeriods, 8)
        XCTAssertEqual(coarse.wakeFrames(periodFrames: 128, bufferFrames: 2_048), 1_024)
        XCTAssertEqual(coarse.wakeFrames(periodFrames: 128, bufferFrames: 512), 256, "at most half of a smaller buffer given")
        let deep = RewindMode.coarseRequest(for: PlaybackRequest(periodFrames: 480, periodCount: 8))
        XCTAssertEqual(deep.periodFrames * deep.periodCount, 3_840, "a larger buffer asked for is kept")
        XCTAssertEqual(deep.wakePeriods, 22, "everything but the margin")
        XCTAssertEqual(deep.wakeFrames(periodFrames: 128, bufferFrames: 3_840), 1_920, "at most half the buffer")
        let huge = RewindMode.coarseRequest(for: PlaybackRequest(periodFrames: 4_096, periodCount: 4))
        XCTAssertEqual(huge.periodCount, RewindMode.maxPeriods, "no more periods than the history keeps snapshots for")
        let slow = RewindMode.coarseRequest(for: PlaybackRequest(sampleRate: 8_000, periodFrames: 16, periodCount: 2))
        XCTAssertGreaterThanOrEqual(slow.periodFrames * slow.periodCount, 160, "20 ms at 8 kHz")
    }

    static func nullEngine() throws -> SoundEngine {
        var configuration = SoundEngine.Configuration()
        configuration.output.device = "null"
        return try SoundEngine(configuration: configuration)
    }
}

/// A device whose pointer moves `step` frames at a time by the clock (from its creation), with a
/// full buffer that nobody writes to: what `measureGranularity` reads.
private final class SteppedDevice: PlaybackDevice, @unchecked Sendable {
    let parameters: PlaybackParameters
    let positionIsBatched: Bool
    private let step: Int
    private let start: UInt64

    /// `exactDelay`: the delay follows the clock (the DAC) frame by frame, however the pointer
    /// moves; otherwise it is computed from the pointer, as a batch device's is.
    private let exactDelay: Bool

    /// The measure samples the position 48 times over 1.25 periods: with 4,096-frame periods
    /// (107 ms) and steps of 480 frames (10 ms), the samples stay finer than the steps even when
    /// a test thread's short sleeps come back milliseconds late on a loaded machine. The buffer
    /// drains from the device's making on and its pointer stops once it is empty: 16 periods
    /// (1.4 s) outlast the measure (4 periods of 512 frames, 43 ms, did not always).
    static let periodFrames = 4_096

    init(step: Int, batched: Bool, exactDelay: Bool = false) throws {
        parameters = try NullPlaybackDevice(PlaybackRequest(device: NullPlaybackDevice.name, periodFrames: Self.periodFrames, periodCount: 16)).parameters
        self.step = step
        positionIsBatched = batched
        self.exactDelay = exactDelay
        start = VirtualCard.monotonicNanoseconds()
    }

    private var played: Int {
        min(Int((VirtualCard.monotonicNanoseconds() - start) * UInt64(parameters.sampleRate) / 1_000_000_000), parameters.bufferFrames)
    }

    /// One read of the clock: two (`played - played % step`) gave a room off the steps by the
    /// frames between them, now and then.
    func available() -> Int {
        let now = played
        return now - now % step
    }

    func wait(timeoutMilliseconds: Int32) -> Int32 { 1 }
    func write(_ samples: UnsafePointer<Float>, frames: Int) -> Int { frames }
    func recover(_ error: Int32) -> Int32 { 0 }
    func delay() -> Int { parameters.bufferFrames - (exactDelay ? played : available()) }
    func drain() {}
    func drop() {}
    func close() {}
}

/// A device that takes 512-frame periods whatever is asked, whose pointer and delay both move a
/// period at a time (a batch device that refuses small periods), and that rewinds: what a
/// coarse pointer on large periods looks like.
private final class LargePeriodDevice: PlaybackDevice, @unchecked Sendable {
    private let inner: NullPlaybackDevice
    var parameters: PlaybackParameters { inner.parameters }
    var positionIsBatched: Bool { true }
    var canRewind: Bool { true }

    init(_ request: PlaybackRequest) throws(ALSAError) {
        var large = request
        large.device = NullPlaybackDevice.name
        large.periodFrames = 512
        large.periodCount = 4
        large.wakePeriods = 1
        inner = try NullPlaybackDevice(large)
    }

    /// The room as a per-period pointer shows it: whole periods only.
    func available() -> Int {
        let room = inner.available()
        return room < 0 ? room : room - room % parameters.periodFrames
    }
    func delay() -> Int {
        let room = available()
        return room < 0 ? room : parameters.bufferFrames - room
    }
    func rewindable() -> Int { delay() }
    func rewind(_ frames: Int) -> Int { inner.rewind(frames) }
    func wait(timeoutMilliseconds: Int32) -> Int32 { inner.wait(timeoutMilliseconds: timeoutMilliseconds) }
    func wait(timeoutMilliseconds: Int32, orUntilReadable descriptor: Int32) -> Int32 {
        inner.wait(timeoutMilliseconds: timeoutMilliseconds, orUntilReadable: descriptor)
    }
    func write(_ samples: UnsafePointer<Float>, frames: Int) -> Int { inner.write(samples, frames: frames) }
    func recover(_ error: Int32) -> Int32 { inner.recover(error) }
    func drain() { inner.drain() }
    func drop() { inner.drop() }
    func close() { inner.close() }
}

private final class LargePeriodDevices: PlaybackDeviceFactory {
    let opens = Atomic<Int>(0)
    func open(_ request: PlaybackRequest) throws(ALSAError) -> any PlaybackDevice {
        opens.wrappingAdd(1, ordering: .relaxed)
        return try LargePeriodDevice(request)
    }
}

final class RewindLargePeriodTests: XCTestCase {
    /// Rewind mode asks for 128-frame periods; a device that gives 512 with a coarse pointer is
    /// rewound on as it is, opened once: opening it again with the same request would only find
    /// the same pointer (it used to be reopened again and again).
    func testADeviceThatRefusesSmallPeriodsIsOpenedOnce() throws {
        let directory = try CardDirectory.makeTemporary(prefix: "sfx-large-period-")
        defer { try? FileManager.default.removeItem(at: directory) }
        let devices = LargePeriodDevices()
        var configuration = SoundEngine.Configuration()
        configuration.output = PlaybackRequest(device: "large", sampleRate: 48_000, channels: 2, periodFrames: 512, periodCount: 3)
        configuration.devices = devices
        configuration.rewind = true
        configuration.muteFlag = MuteFlag(url: directory.appending(path: "muted"))
        let engine = try SoundEngine(configuration: configuration)
        defer { engine.close() }
        XCTAssertTrue(eventually { engine.metrics.rewind == .active }, "\(engine.metrics.rewind)")
        usleep(300_000)
        XCTAssertEqual(engine.metrics.parameters.periodFrames, 512)
        XCTAssertGreaterThanOrEqual(engine.metrics.pointerGranularity, 512)
        XCTAssertFalse(engine.metrics.delayFollowsDAC, "its delay steps with its pointer")
        XCTAssertEqual(devices.opens.load(ordering: .relaxed), 1, "opened once")
    }
}
