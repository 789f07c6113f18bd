// The rewind side of the device seam: ALSA (on the virtual card) and the null device take back
// frames written and not yet played, and wait for a wake-up descriptor as well as the device.
import Glibc
import XCTest
import SFXCardSupport
import SFXDevice

final class RewindDeviceTests: XCTestCase {
    /// A non-blocking pipe: (read end, write end).
    func wakePipe() -> (Int32, Int32) {
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&ends), 0)
        for end in ends { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
        return (ends[0], ends[1])
    }

    /// Fills the device's buffer with silence, waiting for room as the real-time loop does.
    func fill(_ device: any PlaybackDevice) {
        let silence = [Float](repeating: 0, count: device.parameters.bufferFrames * device.parameters.channels)
        var available = device.available()
        while available > 0 {
            XCTAssertEqual(silence.withUnsafeBufferPointer { device.write($0.baseAddress!, frames: available) }, available)
            available = device.available()
        }
    }

    func checkRewind(_ device: any PlaybackDevice, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(device.canRewind, file: file, line: line)
        fill(device)
        usleep(5_000)
        XCTAssertGreaterThanOrEqual(device.available(), 0, file: file, line: line)
        let rewindable = device.rewindable()
        XCTAssertGreaterThan(rewindable, device.parameters.bufferFrames / 2, file: file, line: line)
        XCTAssertLessThanOrEqual(rewindable, device.parameters.bufferFrames, file: file, line: line)
        let before = device.delay()
        XCTAssertEqual(device.rewind(rewindable / 2), rewindable / 2, file: file, line: line)
        let after = device.delay()
        XCTAssertGreaterThanOrEqual(before - after, rewindable / 2, "the delay drops by what was rewound", file: file, line: line)
        XCTAssertGreaterThanOrEqual(device.available(), rewindable / 2, "and that much room is free again", file: file, line: line)
    }

    func checkWakeUp(_ device: any PlaybackDevice, file: StaticString = #filePath, line: UInt = #line) {
        let (wake, kick) = wakePipe()
        defer { close(wake); close(kick) }
        fill(device)
        let start = DispatchTime.now()
        XCTAssertEqual(device.wait(timeoutMilliseconds: 1, orUntilReadable: wake), 0, "a full buffer and no wake-up: timeout",
                       file: file, line: line)
        var one: UInt8 = 1
        XCTAssertEqual(write(kick, &one, 1), 1)
        XCTAssertEqual(device.wait(timeoutMilliseconds: 500, orUntilReadable: wake), 2, "the wake-up", file: file, line: line)
        let waited = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        XCTAssertLessThan(waited, 0.4, "at once, not after the timeout", file: file, line: line)
    }

    func openCard(_ card: VirtualCard) throws -> any PlaybackDevice {
        card.makeCurrent()
        var request = PlaybackRequest(device: card.hardwarePCMName, sampleRate: 48_000, channels: 2, periodFrames: 480, periodCount: 4)
        request.formats = [.float32]
        return try SystemPlaybackDevices().open(request)
    }

    func testALSARewindsOnTheCard() throws {
        let card = try VirtualCard(pointer: .frame)
        defer { try? card.remove() }
        let device = try openCard(card)
        checkRewind(device)
        device.drop()
        device.close()
        let rewinds = try card.events().compactMap { if case .rewind(let frames, _, _) = $0.kind { frames } else { nil } }
        XCTAssertEqual(rewinds.count, 1, "the card saw the rewind")
    }

    func testALSAWaitsForTheWakeUpToo() throws {
        let card = try VirtualCard()
        defer { try? card.remove() }
        let device = try openCard(card)
        defer { device.close() }
        checkWakeUp(device)
    }

    func testTheNullDeviceRewindsExactly() throws {
        let device = try NullPlaybackDevice(PlaybackRequest(device: "null", periodFrames: 480, periodCount: 4))
        defer { device.close() }
        checkRewind(device)
        checkWakeUp(device)
    }

    func testADeviceWithoutRewindHasNothingRewindable() throws {
        final class Plain: PlaybackDevice {
            let parameters: PlaybackParameters
            init() throws { parameters = try NullPlaybackDevice(PlaybackRequest(device: "null")).parameters }
            func wait(timeoutMilliseconds: Int32) -> Int32 { 0 }
            func available() -> Int { 0 }
            func write(_ samples: UnsafePointer<Float>, frames: Int) -> Int { frames }
            func recover(_ error: Int32) -> Int32 { 0 }
            func delay() -> Int { 0 }
            func drain() {}
            func drop() {}
            func close() {}
        }
        let device = try Plain()
        XCTAssertFalse(device.canRewind)
        XCTAssertEqual(device.rewindable(), 0)
        XCTAssertEqual(device.rewind(10), -Int(ENOSYS))
    }

    func testRewindCallsReportEBADFDAfterClose() throws {
        let card = try VirtualCard()
        defer { try? card.remove() }
        for device in [try openCard(card), try NullPlaybackDevice(PlaybackRequest(device: "null"))] {
            device.close()
            XCTAssertEqual(device.rewindable(), -Int(EBADFD))
            XCTAssertEqual(device.rewind(1), -Int(EBADFD))
            XCTAssertEqual(device.wait(timeoutMilliseconds: 1, orUntilReadable: -1), -EBADFD)
        }
    }
}
