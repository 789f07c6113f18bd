import SFXPlayback
import FoundationEssentials
import Dispatch
import Glibc
import SFXDevice

/// Metering without recording: opens a capture device and keeps `LevelMeter`'s readings up to
/// date (the same capture thread as `Recorder`, with nothing written), for a level display or
/// to check a microphone before recording.
///
/// ```swift
/// let monitor = try LevelMonitor(device: "default", channels: 2)
/// for await reading in monitor.levels { print(reading.average, reading.peak) }   // ~20 a second
/// monitor.stop()
/// ```
public final class LevelMonitor: @unchecked Sendable {
    public let parameters: CaptureParameters
    /// The meters about 20 times a second; ends at `stop()`.
    public let levels: AsyncStream<LevelReading>
    private let capture: CaptureLoop
    private let timer: DispatchSourceTimer

    /// Opens `device` for capture and starts metering. Throws `RecorderError.device` (no such
    /// device, busy, no permission: one line with the fix) or `.setting`.
    public init(device: String = "default", sampleRate: Int = 48_000, channels: Int = 2,
                captureDevices: any CaptureDeviceFactory = SystemCaptureDevices(), realtimePriority: Int32 = 70) throws(RecorderError) {
        var settings = RecorderSettings(format: .wav)
        settings.device = device
        settings.sampleRate = sampleRate
        settings.channels = channels
        settings.realtimePriority = realtimePriority
        do { try settings.validate() } catch { throw .setting(error) }
        let opened: any CaptureDevice
        do { opened = try captureDevices.open(settings.request) } catch { throw RecorderError.opening(error) }
        parameters = opened.parameters
        capture = CaptureLoop(device: opened, ring: nil, frameLimit: Int.max, realtimePriority: realtimePriority)
        let (stream, continuation) = AsyncStream.makeStream(of: LevelReading.self, bufferingPolicy: .bufferingNewest(16))
        levels = stream
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "sfx-monitor-levels"))
        let meter = capture.meter
        timer.schedule(deadline: .now() + .milliseconds(50), repeating: .milliseconds(50))
        timer.setEventHandler { continuation.yield(meter.reading) }
        timer.setCancelHandler { continuation.finish() }
        capture.start(mode: .metering)
        timer.resume()
    }

    deinit { stop() }

    public func averagePower(channel: Int) -> Float { capture.meter.averagePower(channel: channel) }
    public func peakPower(channel: Int) -> Float { capture.meter.peakPower(channel: channel) }
    /// Both levels of every channel now.
    public var reading: LevelReading { capture.meter.reading }
    /// Overruns so far (each recovered at once).
    public var overruns: Int { capture.overruns.load(ordering: .relaxed) }
    /// The negative errno that stopped capture (the device is gone), or 0.
    public var failure: Int32 { capture.failure.load(ordering: .relaxed) }

    /// Stops metering and closes the device.
    public func stop() {
        capture.stop()
        capture.device.close()
        timer.cancel()
    }
}
