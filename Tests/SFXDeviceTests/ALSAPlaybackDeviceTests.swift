// The ALSA conformer of PlaybackDevice, opened through the system factory on the virtual card.
import Glibc
import XCTest
import SFXCardSupport
import SFXDevice

final class ALSAPlaybackDeviceTests: XCTestCase {
    /// The factory opens an ALSA name as a `PCMPlayback` with the parameters asked for, and what
    /// is written through the protocol reaches the card's DAC: one onset, a recording of it.
    func testTheFactoryOpensTheVirtualCard() throws {
        let card = try VirtualCard()
        defer { try? card.remove() }
        card.makeCurrent()
        var request = PlaybackRequest(device: card.hardwarePCMName, sampleRate: 48_000, channels: 2, periodFrames: 480, periodCount: 3)
        request.formats = [.float32]
        let device: any PlaybackDevice = try SystemPlaybackDevices().open(request)
        XCTAssertTrue(device is PCMPlayback)
        XCTAssertEqual(device.parameters.format, .float32)
        XCTAssertEqual(device.parameters.sampleRate, 48_000)
        XCTAssertEqual(device.parameters.channels, 2)
        XCTAssertEqual(device.parameters.periodFrames, 480)
        XCTAssertEqual(device.parameters.bufferFrames, 1440)

        let period = device.parameters.periodFrames
        let loud = [Float](repeating: 0.5, count: period * 2)
        let quiet = [Float](repeating: 0, count: period * 2)
        var written = 0
        while written < 20 {
            let ready = device.wait(timeoutMilliseconds: 500)
            XCTAssertEqual(ready, 1)
            var available = device.available()
            XCTAssertGreaterThanOrEqual(available, 0)
            while available >= period, written < 20 {
                let samples = written < 2 ? loud : quiet
                XCTAssertEqual(samples.withUnsafeBufferPointer { device.write($0.baseAddress!, frames: period) }, period)
                written += 1
                available -= period
            }
        }
        XCTAssertGreaterThanOrEqual(device.delay(), 0)
        device.drain()
        device.close()

        let onsets = try card.events().filter { if case .onset = $0.kind { true } else { false } }
        XCTAssertEqual(onsets.count, 1, "the loud frames reached the card's DAC once")
        let recording = try WAVAudio(contentsOf: XCTUnwrap(card.recordingURLs().last))
        XCTAssertEqual(recording.samples.first ?? 0, 0.5, accuracy: 1e-6)
    }

    /// After `close`, every call reports -EBADFD (as its documentation says) instead of handing
    /// alsa-lib a closed handle.
    func testAClosedPCMReportsEBADFD() throws {
        let card = try VirtualCard()
        defer { try? card.remove() }
        card.makeCurrent()
        let device = try PCMPlayback(PlaybackRequest(device: card.hardwarePCMName, periodFrames: 480, periodCount: 3))
        assertEveryCallReportsEBADFDAfterClose(device)
    }

    /// A device that does not exist is refused with one line naming it and the fix.
    func testAMissingDeviceIsRefusedWithItsName() {
        XCTAssertThrowsError(try SystemPlaybackDevices().open(PlaybackRequest(device: "hw:97,0"))) { error in
            let line = "\(error)"
            XCTAssertTrue(line.contains("'hw:97,0'"), line)
            XCTAssertTrue(line.contains("sfx devices"), line)
        }
    }
}
