// The meters' law, against dBFS computed here from the signals' definitions.
import Foundation
import XCTest
import SFX
import SFXCardSupport

final class MeterTests: XCTestCase {
    /// 10 ms periods at 48 kHz, as the recorder captures them by default.
    let period = 480

    /// A full-scale sine: RMS 1/√2, so average −3.01 dBFS; peak 0 dBFS. A −20 dBFS sine (peak
    /// 0.1): average −23.01, peak −20. Silence: −160 for both. Every period of a steady sine
    /// reads the same (a whole number of its cycles per period: 1 kHz at 48 kHz).
    func testKnownSignalsReadTheirDecibels() {
        for (amplitude, expectedPeak) in [(1.0, 0.0), (0.1, -20.0)] {
            let meter = LevelMeter(channels: 1, sampleRate: 48_000)
            let sine = (0..<period * 10).map { Float(amplitude * sin(2 * Double.pi * 1_000 * Double($0) / 48_000)) }
            sine.withUnsafeBufferPointer { buffer in
                for p in 0..<10 { meter.process(buffer.baseAddress! + p * period, frames: period) }
            }
            XCTAssertEqual(Double(meter.averagePower(channel: 0)), decibels(amplitude / 2.0.squareRoot()), accuracy: 0.01)
            XCTAssertEqual(Double(meter.peakPower(channel: 0)), expectedPeak, accuracy: 0.01)
        }
        let meter = LevelMeter(channels: 2, sampleRate: 48_000)
        let silence = [Float](repeating: 0, count: period * 2)
        silence.withUnsafeBufferPointer { meter.process($0.baseAddress!, frames: period) }
        XCTAssertEqual(meter.averagePower(channel: 0), -160)
        XCTAssertEqual(meter.peakPower(channel: 1), -160)
        XCTAssertEqual(meter.averagePower(channel: 2), -160, "a channel that does not exist")
    }

    /// The peak holds for 1 s after a burst, then falls 20 dB a second, never below the signal's
    /// own peak; the average follows each period at once.
    func testThePeakHoldsForASecondThenDecaysAtTwentyDecibelsASecond() {
        let meter = LevelMeter(channels: 1, sampleRate: 48_000)
        let burst = [Float](repeating: 0.5, count: period)           // −6.02 dBFS
        let quiet = [Float](repeating: 0.001, count: period)         // −60 dBFS
        burst.withUnsafeBufferPointer { meter.process($0.baseAddress!, frames: period) }
        let held = decibels(0.5)
        var readings: [Double] = []
        quiet.withUnsafeBufferPointer { buffer in
            for _ in 0..<300 {                                       // 3 s of quiet
                meter.process(buffer.baseAddress!, frames: period)
                readings.append(Double(meter.peakPower(channel: 0)))
            }
        }
        XCTAssertEqual(Double(meter.averagePower(channel: 0)), -60, accuracy: 0.01)
        // Periods 1…100 after the burst (the first second): held.
        for p in 0..<100 { XCTAssertEqual(readings[p], held, accuracy: 0.001, "period \(p + 1)") }
        // Then 0.2 dB a period (20 dB/s over 10 ms), down to −60 and no lower.
        for p in 100..<300 {
            let expected = max(held - 0.2 * Double(p - 99), -60)
            XCTAssertEqual(readings[p], expected, accuracy: 0.01, "period \(p + 1)")
        }
    }

    /// Through the virtual card's capture, with nothing recorded: a −20 dBFS sine reads −23.01
    /// average and −20 peak on both channels; the level stream delivers the same.
    func testTheMonitorMetersTheCardsCapture() async throws {
        let sine = Signal.sine(frequency: 1_000, amplitude: 0.1, seconds: 3, channels: 2)
        let card = try cardCapturing(sine, channels: 2)
        defer { try? card.remove() }
        let monitor = try LevelMonitor(device: card.pcmName, channels: 2)
        defer { monitor.stop() }
        var last: LevelReading?
        var count = 0
        for await reading in monitor.levels {
            count += 1
            last = reading
            if count == 10 { break }
        }
        let reading = try XCTUnwrap(last)
        for c in 0..<2 {
            // The source is quantised to 16 bits: its RMS and peak are within 0.01 dB of the ideal.
            XCTAssertEqual(Double(reading.average[c]), decibels(0.1 / 2.0.squareRoot()), accuracy: 0.02)
            XCTAssertEqual(Double(reading.peak[c]), -20, accuracy: 0.02)
            XCTAssertEqual(Double(monitor.averagePower(channel: c)), decibels(0.1 / 2.0.squareRoot()), accuracy: 0.02)
        }
    }
}
