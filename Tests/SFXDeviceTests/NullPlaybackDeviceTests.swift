// The null device consumes frames by CLOCK_MONOTONIC at its rate. The bounds below are loose on
// purpose (a loaded VM wakes late): they tell a device that paces by the clock from one that
// takes everything at once or never takes anything, not how precise the pacing is.
import Glibc
import XCTest
import SFXDevice

final class NullPlaybackDeviceTests: XCTestCase {
    /// 10 ms periods, three to a buffer.
    let request = PlaybackRequest(device: "null", sampleRate: 48_000, channels: 2, periodFrames: 480, periodCount: 3)

    func testItTakesTheRequestAsItsParameters() throws {
        let device = try NullPlaybackDevice(request)
        let p = device.parameters
        XCTAssertEqual(p.device, "null")
        XCTAssertEqual(p.format, .float32)
        XCTAssertEqual([p.sampleRate, p.channels, p.periodFrames, p.bufferFrames, p.startThreshold], [48_000, 2, 480, 1440, 480])
    }

    /// The output thread's loop (wait, then write a period while one fits) writes 50 periods:
    /// the first three fill the buffer at once, the other 47 only as the clock consumes them.
    func testWritesArePacedByTheClock() throws {
        let device = try NullPlaybackDevice(request)
        let period = device.parameters.periodFrames
        let samples = [Float](repeating: 0.25, count: period * 2)
        let start = now()
        var written = 0
        var waits = 0
        while written < 50 * period {
            XCTAssertEqual(device.wait(timeoutMilliseconds: 200), 1, "a period frees within 200 ms")
            waits += 1
            var available = device.available()
            XCTAssertLessThanOrEqual(available, device.parameters.bufferFrames)
            XCTAssertLessThanOrEqual(device.delay(), device.parameters.bufferFrames)
            while available >= period, written < 50 * period {
                XCTAssertEqual(samples.withUnsafeBufferPointer { device.write($0.baseAddress!, frames: period) }, period)
                written += period
                available -= period
            }
        }
        let elapsed = now() - start
        let consumed = Double(47 * period) / 48_000     // 0.47 s
        XCTAssertGreaterThanOrEqual(elapsed, consumed - 0.002, "it cannot take frames faster than the clock")
        XCTAssertLessThan(elapsed, consumed + 2, "it takes them as the clock goes")
        XCTAssertGreaterThan(waits, 10, "wait sleeps until a period is due rather than reporting room it lacks")
        XCTAssertGreaterThan(device.delay(), 0, "frames still wait for the DAC")
        device.close()
    }

    /// With `wakePeriods` (rewind mode's avail_min) a wait returns only once that much room is
    /// free, never at the first free period: 4 periods of 2 ms, a buffer of 8.
    func testAWaitForSeveralPeriodsReturnsOnlyWithThatMuchRoom() throws {
        var asked = PlaybackRequest(device: "null", sampleRate: 48_000, channels: 2, periodFrames: 96, periodCount: 8)
        asked.wakePeriods = 4
        let device = try NullPlaybackDevice(asked)
        XCTAssertEqual(device.parameters.wakeFrames, 384)
        let samples = [Float](repeating: 0.25, count: 768 * 2)
        var waits = 0
        for _ in 0..<20 {
            // Fill the buffer, then wait: the room found is 4 periods or more.
            let room = device.available()
            if room > 0 { XCTAssertEqual(samples.withUnsafeBufferPointer { device.write($0.baseAddress!, frames: room) }, room) }
            XCTAssertEqual(device.wait(timeoutMilliseconds: 200), 1)
            waits += 1
            XCTAssertGreaterThanOrEqual(device.available(), 384, "woken with four periods of room, not one")
        }
        XCTAssertEqual(waits, 20)
        var tooMany = asked
        tooMany.wakePeriods = 9
        XCTAssertThrowsError(try NullPlaybackDevice(tooMany)) { error in
            XCTAssertTrue("\(error)".contains("wakePeriods 9"), "\(error)")
        }
        device.close()
    }

    /// A write larger than the room left blocks until the clock has consumed enough.
    func testAWriteLargerThanTheRoomBlocks() throws {
        let device = try NullPlaybackDevice(request)
        let frames = 10 * 480
        let samples = [Float](repeating: 0, count: frames * 2)
        let start = now()
        XCTAssertEqual(samples.withUnsafeBufferPointer { device.write($0.baseAddress!, frames: frames) }, frames)
        let elapsed = now() - start
        XCTAssertGreaterThanOrEqual(elapsed, Double(7 * 480) / 48_000 - 0.002)
        XCTAssertLessThan(elapsed, Double(7 * 480) / 48_000 + 2)
    }

    /// Drain plays what is buffered (three periods: 30 ms) before it returns; drop empties the buffer.
    func testDrainWaitsForTheBufferAndDropEmptiesIt() throws {
        let device = try NullPlaybackDevice(request)
        let samples = [Float](repeating: 0, count: 1440 * 2)
        let written = now()
        XCTAssertEqual(samples.withUnsafeBufferPointer { device.write($0.baseAddress!, frames: 1440) }, 1440)
        // The clock runs from the write: room is what it consumed since (a frame per 21 µs), no more.
        let room = device.available()
        XCTAssertLessThanOrEqual(room, Int((now() - written) * 48_000) + 1, "the buffer is full but for what the clock took")
        device.drain()
        let elapsed = now() - written
        XCTAssertGreaterThanOrEqual(elapsed, 0.03 - 0.002)
        XCTAssertLessThan(elapsed, 2)
        XCTAssertEqual(device.available(), 1440)

        XCTAssertEqual(samples.withUnsafeBufferPointer { device.write($0.baseAddress!, frames: 1440) }, 1440)
        device.drop()
        XCTAssertEqual(device.available(), 1440)
        XCTAssertEqual(device.delay(), 0)
    }

    /// Left to run dry, the stream stops without an error and starts again with the next write.
    func testAStreamThatRunsDryStartsAgain() throws {
        let device = try NullPlaybackDevice(request)
        let samples = [Float](repeating: 0, count: 480 * 2)
        XCTAssertEqual(samples.withUnsafeBufferPointer { device.write($0.baseAddress!, frames: 480) }, 480)
        usleep(40_000)
        XCTAssertEqual(device.available(), 1440)
        XCTAssertEqual(device.delay(), 0)
        XCTAssertEqual(device.wait(timeoutMilliseconds: 0), 1)
        XCTAssertEqual(device.recover(-EPIPE), 0)
        let written = now()
        XCTAssertEqual(samples.withUnsafeBufferPointer { device.write($0.baseAddress!, frames: 480) }, 480)
        let consumed = Int((now() - written) * 48_000) + 1
        XCTAssertLessThanOrEqual(device.available(), 1440 - 480 + consumed, "the new period is buffered (less what the clock took since)")
    }

    /// A wait that cannot see a period free in time returns 0 after the timeout.
    func testAWaitTimesOut() throws {
        let slow = PlaybackRequest(device: "null", sampleRate: 8_000, channels: 1, periodFrames: 4_000, periodCount: 2)
        let device = try NullPlaybackDevice(slow)
        let samples = [Float](repeating: 0, count: 8_000)
        XCTAssertEqual(samples.withUnsafeBufferPointer { device.write($0.baseAddress!, frames: 8_000) }, 8_000)
        let start = now()
        XCTAssertEqual(device.wait(timeoutMilliseconds: 50), 0, "a period frees only after 0.5 s")
        XCTAssertGreaterThanOrEqual(now() - start, 0.048)
    }

    func testAClosedDeviceReportsEBADFD() throws {
        let device = try NullPlaybackDevice(request)
        assertEveryCallReportsEBADFDAfterClose(device)
    }

    func testARequestOutOfRangeIsRefused() {
        var bad = request
        bad.periodFrames = 8
        XCTAssertThrowsError(try NullPlaybackDevice(bad)) { error in
            XCTAssertEqual((error as? ALSAError)?.code, EINVAL)
            XCTAssertTrue("\(error)".contains("periodFrames 8"), "\(error)")
        }
    }

    func testTheSystemFactoryOpensItByName() throws {
        let device = try SystemPlaybackDevices().open(request)
        XCTAssertTrue(device is NullPlaybackDevice)
        device.close()
    }

    private func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
    }
}
