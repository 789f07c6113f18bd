import FoundationEssentials
import SFXSystem
import Glibc
import Synchronization
import SFX

enum MeterCommand: Subcommand {
    static let spec = CommandSpec(
        name: "meter", abstract: "Show the live input level of a capture device, without recording.",
        discussion: """
        Average (RMS over each 10 ms period) and peak power in dBFS, -160 to 0, as AVAudioRecorder \
        reports them; the peak holds for 1 s, then falls 20 dB a second. On a terminal: a bar per \
        channel with its peak mark; otherwise one plain line a second. Enter or Ctrl-C stops. \
        With no sound card and no -D, it meters what `sfx record` would record (a sound server, \
        else sfx's virtual card fed by SFX_VIRTUAL_INPUT).
        """,
        examples: ["sfx meter", "sfx meter -D hw:1 --channels 2", "sfx meter --seconds 5 | tail -1"],
        positionals: [],
        options: [RecordCommand.device, RecordCommand.rate.spec, RecordCommand.channels.spec, seconds.spec])

    static let seconds = NumberOption(spec: .option("seconds", value: "SECONDS", help: "Stop after this long (default: until Enter or Ctrl-C)."), range: 0.1...86_400)

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        // Read first: a value out of range is a usage error, not a device failure.
        let rate = try RecordCommand.rate.read(arguments) ?? 48_000
        let channels = try RecordCommand.channels.read(arguments) ?? 2
        let limit = try seconds.read(arguments)
        let (device, notice) = try CaptureChoice.device(given: arguments.value(RecordCommand.device), settings: CommandSettings.load(quiet: true), quiet: false)
        let monitor: LevelMonitor
        do {
            monitor = try LevelMonitor(device: device, sampleRate: rate, channels: channels)
        } catch RecorderError.setting(let error) {
            throw SettingFlags.usageError(error, arguments)
        } catch {
            throw Failure("\(error)")
        }
        if let notice { printError(notice) }
        let stop = StopRequest()
        stop.onEnterOrInterrupt()
        let display = LevelDisplay(channels: monitor.parameters.channels)
        let start = ContinuousClock.now
        while !stop.requested {
            let elapsed = (ContinuousClock.now - start).seconds
            if let limit, elapsed >= limit { break }
            if monitor.failure != 0 { break }
            display.show(monitor.reading, seconds: elapsed)
            usleep(display.interval)
        }
        display.show(monitor.reading, seconds: (ContinuousClock.now - start).seconds, final: true)
        monitor.stop()
        if monitor.failure != 0 {
            throw Failure("capture device '\(device)' failed while metering (\(RecorderError.errnoName(-monitor.failure))); reconnect it and run `sfx meter` again")
        }
        return 0
    }
}

/// The live level display of `sfx meter` and `sfx record`, on standard error: on a terminal, a
/// bar per channel (−60 … 0 dBFS) with the held peak as `|` and the time, redrawn 10 times a
/// second; otherwise one plain line a second.
final class LevelDisplay {
    let channels: Int
    let terminal = isatty(STDERR_FILENO) == 1
    /// Microseconds between refreshes.
    var interval: UInt32 { terminal ? 100_000 : 50_000 }
    private var drawn = false
    private var lastSecond = -1
    static let width = 40

    init(channels: Int) { self.channels = channels }

    func show(_ reading: LevelReading, seconds: Double, prefix: String = "", final: Bool = false) {
        if terminal {
            var text = drawn ? "\u{1B}[\(channels + 1)A" : ""
            text += "\r\u{1B}[K" + prefix + Self.clock(seconds) + "\n"
            for c in 0..<channels {
                text += "\r\u{1B}[K" + Self.bar(average: reading.average[c], peak: reading.peak[c], label: Self.label(c, of: channels)) + "\n"
            }
            writeToStandardError(text)
            drawn = true
        } else {
            let second = Int(seconds)
            guard second != lastSecond || final else { return }
            guard second > lastSecond else { return }
            lastSecond = second
            writeToStandardError(prefix + Self.line(reading, seconds: seconds, channels: channels) + "\n")
        }
    }

    /// "00:03  L -23.0 dBFS peak -20.0  R …"
    static func line(_ reading: LevelReading, seconds: Double, channels: Int) -> String {
        clock(seconds) + (0..<channels).map {
            "  \(label($0, of: channels)) " + String(cFormat: "%.1f dBFS peak %.1f", reading.average[$0], reading.peak[$0])
        }.joined()
    }

    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds)
        return String(cFormat: "%02d:%02d.%d", whole / 60, whole % 60, Int((seconds - Double(whole)) * 10))
    }

    static func label(_ channel: Int, of channels: Int) -> String {
        channels == 2 ? (channel == 0 ? "L" : "R") : "\(channel + 1)"
    }

    /// "L [#########.........|.....]  -23.0 dB"
    static func bar(average: Float, peak: Float, label: String) -> String {
        func position(_ db: Float) -> Int { Int(((max(db, -60) + 60) / 60 * Float(width)).rounded(.down)) }
        let filled = position(average)
        let mark = min(position(peak), width - 1)
        var cells = (0..<width).map { $0 < filled ? "#" : "." }
        if peak > -60 { cells[mark] = "|" }
        return "\(label) [\(cells.joined())] " + String(cFormat: "%6.1f dB  peak %6.1f", average, peak)
    }
}

/// Enter on standard input, Ctrl-C or SIGTERM: a request to stop, polled by the display loop.
final class StopRequest: @unchecked Sendable {
    private let interruption = Interruption()
    private let entered = Mutex<Bool>(false)

    var requested: Bool { interruption.happened || entered.withLock { $0 } }

    /// Watches standard input for a line (end of input is not a request: `< /dev/null` records on).
    func onEnterOrInterrupt() {
        interruption.onInterrupt {}
        Threads.start(name: "sfx-stdin") { [self] in
            var byte: UInt8 = 0
            while read(STDIN_FILENO, &byte, 1) == 1 {
                if byte == UInt8(ascii: "\n") {
                    entered.withLock { $0 = true }
                    return
                }
            }
        }
    }
}

extension Duration {
    var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) * 1e-18
    }
}
