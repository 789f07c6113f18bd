// A voice message, the whole flow, as a chat app does it: a prompt tone, then recording with a
// live meter and a count-up, stopped by Enter or at 30 s (a take under 1 s is discarded);
// a standard M4A uploaded as a form upload with a token field; then a message downloaded from
// a URL and played with a progress line, and a bell at its end.
//
//   swift run VoiceMessage UPLOAD_URL [PLAY_URL] [--token TOKEN] [--seconds N] [--output FILE]
//
// UPLOAD_URL gets a multipart/form-data POST: the fields `token` (--token, else $VOICE_TOKEN)
// and `key` (the file's name), then the file in `file` (audio/mp4). PLAY_URL is played after
// the upload (any URL or file sfx plays). --seconds N stops at N seconds instead of 30 (for
// tests and scripts; Enter still stops it sooner). On a machine without a sound card,
// SFX_VIRTUAL_INPUT=voice.wav records that file through sfx's virtual card (`VirtualInput`).
// Exit status: 0 sent (and played), 1 an error (one line), 2 the take was too short.
import Foundation
import Glibc
import SFX
import Synchronization

struct Options {
    var upload: URL
    var play: URL?
    var token = ProcessInfo.processInfo.environment["VOICE_TOKEN"] ?? ""
    var seconds = 30.0
    var output: URL?

    static let usage = "usage: VoiceMessage UPLOAD_URL [PLAY_URL] [--token TOKEN] [--seconds N] [--output FILE]"

    init(_ arguments: [String]) throws {
        var positionals: [String] = []
        var rest = arguments[...]
        var seconds: Double?
        var token: String?
        var output: URL?
        while let argument = rest.popFirst() {
            switch argument {
            case "--token": token = rest.popFirst()
            case "--seconds":
                guard let text = rest.popFirst(), let value = Double(text), value >= 1, value <= 30 else {
                    throw Failure("--seconds takes a number from 1 to 30 (the longest message), e.g. --seconds 3")
                }
                seconds = value
            case "--output": output = rest.popFirst().map { URL(filePath: $0) }
            case "-h", "--help": throw Failure(Self.usage)
            default: positionals.append(argument)
            }
        }
        guard (1...2).contains(positionals.count), let upload = URL(string: positionals[0]) else { throw Failure(Self.usage) }
        self.upload = upload
        play = positionals.count > 1 ? (URL(string: positionals[1]).flatMap { $0.scheme == nil ? nil : $0 } ?? URL(filePath: positionals[1])) : nil
        if let token { self.token = token }
        if let seconds { self.seconds = seconds }
        self.output = output
    }
}

struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Draws a status line: redrawn in place on a terminal, else a line a second (logs, tests).
final class StatusLine: @unchecked Sendable {
    let terminal = isatty(STDERR_FILENO) == 1
    private var lastSecond = -1

    func draw(_ text: String, second: Int) {
        if terminal {
            FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8))
        } else if second != lastSecond {
            lastSecond = second
            FileHandle.standardError.write(Data("\(text)\n".utf8))
        }
    }

    func end() { if terminal { FileHandle.standardError.write(Data("\n".utf8)) } }
}

/// A line on standard output, written at once (also into a pipe or a file).
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func clock(_ seconds: Double) -> String {
    let whole = Int(seconds)
    return String(format: "%d:%02d", whole / 60, whole % 60)
}

/// A meter of 20 cells over -60…0 dBFS.
func meter(_ db: Float) -> String {
    let cells = max(0, min(20, Int(((db + 60) / 60 * 20).rounded())))
    return String(repeating: "#", count: cells) + String(repeating: ".", count: 20 - cells)
}

/// Records until Enter, the time limit, or an error; the M4A's URL, or nil for a short take.
func record(_ options: Options, engine: SoundEngine) throws -> URL? {
    var settings = RecorderSettings(format: .m4a)
    settings.channels = 1
    settings.maxDuration = .milliseconds(Int64(options.seconds * 1000))
    settings.minDuration = .seconds(1)
    settings.prompt = try engine.systemSound(named: "tock")
    settings.url = options.output
    let recorder = try Recorder(settings: settings, engine: engine)
    try recorder.record()
    // Enter stops the take (an end of input does not: a script may have none to give).
    let enter = Thread {
        if readLine() != nil { _ = recorder.stop() }
    }
    enter.start()
    let status = StatusLine()
    var last: RecorderEvent?
    while last == nil {
        let now = recorder.currentTime
        let level = recorder.averagePower(channel: 0)
        status.draw("● REC \(clock(now)) / \(clock(options.seconds))  [\(meter(level))] \(String(format: "%.0f", level)) dBFS  (Enter stops)",
                    second: Int(now))
        last = recorder.waitUntilFinished(timeout: .milliseconds(50))   // the last event once it has ended
    }
    status.end()
    switch last! {
    case .finished(let url, let seconds):
        say("recorded \(url.path) (\(String(format: "%.2f", seconds)) s)")
        return url
    case .discarded(_, let reason):
        say("not sent: \(reason); hold Enter back a little longer")
        return nil
    case .failed(let error):
        throw error
    default:
        return nil
    }
}

func send(_ file: URL, _ options: Options) async throws {
    let status = StatusLine()
    let response = try await Upload.send(file, to: options.upload, method: .multipart(field: "file"),
                                         fields: [("token", options.token), ("key", file.lastPathComponent)]) { sent, total in
        status.draw("sending [\(meter(total > 0 ? Float(sent) / Float(total) * 60 - 60 : -60))] \(sent)/\(total) bytes", second: Int(sent >> 20))
    }
    status.end()
    say("sent \(file.lastPathComponent) as \(response.contentType): \(response.status)")
}

func play(_ url: URL, engine: SoundEngine) throws {
    let player = try url.isFileURL ? engine.makePlayer(contentsOf: url) : engine.makePlayer(url: url)
    let finished = Mutex<Bool?>(nil)
    player.didFinish = { ok in finished.withLock { $0 = ok } }
    player.isMeteringEnabled = true                // the bars a chat app draws while a message plays
    try player.play()
    let status = StatusLine()
    let total: Double? = player.isDurationKnown ? player.duration : nil
    var ok: Bool?
    while ok == nil {
        let now = player.currentTime
        player.updateMeters()
        status.draw("▶ [\(meter(player.averagePower(forChannel: 0)))] \(clock(now))" + (total.map { " / \(clock($0))" } ?? ""), second: Int(now))
        usleep(50_000)
        ok = finished.withLock { $0 }
    }
    status.end()
    guard ok == true else { throw Failure("\(url.absoluteString): playing stopped: \(player.error.map { "\($0)" } ?? "an error")") }
    say("played \(url.lastPathComponent)" + (total.map { String(format: " (%.2f s)", $0) } ?? ""))
    engine.play(try engine.systemSound(named: "bell"))
    _ = engine.waitUntilIdle()
}

do {
    let options = try Options(Array(CommandLine.arguments.dropFirst()))
    try VirtualInput.engageIfAsked()   // before the engine: it plays through the virtual card too
    let engine = try SoundEngine()
    guard let file = try record(options, engine: engine) else { exit(2) }
    let outcome = Mutex<(any Error)?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task.detached {   // detached: top-level code is the main actor's, and the main thread waits below
        do { try await send(file, options) } catch { outcome.withLock { $0 = error } }
        done.signal()
    }
    done.wait()
    if let error = outcome.withLock({ $0 }) { throw error }
    if let message = options.play { try play(message, engine: engine) }
    engine.close()
} catch {
    FileHandle.standardError.write(Data("VoiceMessage: \(error)\n".utf8))
    exit(1)
}
