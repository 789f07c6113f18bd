// The ALSA conformer of CaptureDevice, on the virtual card, whose capture plays a file in real time.
import Glibc
import XCTest
import SFXCardSupport
import SFXDevice

final class ALSACaptureDeviceTests: XCTestCase {
    /// What the card plays into capture comes back through the protocol sample for sample
    /// (float), then silence once the source has ended.
    func testTheFactoryOpensTheCardsCaptureAndReadsTheSource() throws {
        let source = (0..<2_400).map { Float(($0 * 37) % 200 - 100) / 256 }     // exact in float and S16
        let card = try cardCapturing(source)
        defer { try? card.remove() }

        var request = CaptureRequest(device: card.hardwarePCMName, sampleRate: 48_000, channels: 1, periodFrames: 480, periodCount: 4)
        request.formats = [.float32]
        let device: any CaptureDevice = try SystemCaptureDevices().open(request)
        XCTAssertTrue(device is PCMCapture)
        XCTAssertEqual(device.parameters.format, .float32)
        XCTAssertEqual(device.parameters.periodFrames, 480)
        var captured = [Float](repeating: 1, count: 4_800)
        let got = captured.withUnsafeMutableBufferPointer { device.read(into: $0.baseAddress!, frames: 4_800) }
        XCTAssertEqual(got, 4_800)
        XCTAssertEqual(Array(captured.prefix(2_400)), source)
        XCTAssertEqual(Array(captured.dropFirst(2_400)), [Float](repeating: 0, count: 2_400))
        XCTAssertGreaterThanOrEqual(device.available(), 0)
        device.drop()
        device.close()
        XCTAssertEqual(captured.withUnsafeMutableBufferPointer { device.read(into: $0.baseAddress!, frames: 480) }, -Int(EBADFD))
        XCTAssertEqual(device.wait(timeoutMilliseconds: 1), -EBADFD)
    }

    /// S16 from the device is converted to float exactly (k / 32768).
    func testSixteenBitCaptureIsConvertedToFloat() throws {
        let source = (0..<960).map { Float(($0 * 53) % 300 - 150) / 512 }
        let card = try cardCapturing(source)
        defer { try? card.remove() }

        var request = CaptureRequest(device: card.hardwarePCMName, sampleRate: 48_000, channels: 1, periodFrames: 480, periodCount: 4)
        request.formats = [.s16]
        let device = try PCMCapture(request)
        XCTAssertEqual(device.parameters.format, .s16)
        var captured = [Float](repeating: 1, count: 960)
        XCTAssertEqual(captured.withUnsafeMutableBufferPointer { device.read(into: $0.baseAddress!, frames: 960) }, 960)
        XCTAssertEqual(captured, source)
    }

    /// A current virtual card whose capture plays `source` (mono, 48 kHz), then silence.
    func cardCapturing(_ source: [Float]) throws -> VirtualCard {
        let directory = try VirtualCard().directory
        let url = directory.appending(path: "source.wav")
        try WAVAudio(sampleRate: 48_000, channels: 1, samples: source).write(to: url)
        let card = try VirtualCard(directory: directory, captureSource: url)
        card.makeCurrent()
        return card
    }
}
