// Examples/VoiceMessage end to end, as VirtualInputTests run `sfx`: no sound card (hidden in a
// mount namespace), the library's Recorder fed by SFX_VIRTUAL_INPUT (speech made with
// espeak-ng) through sfx's virtual card, a form upload to Tests/http/upload-server.py and a
// message played from Tests/http/stream-server.py. The uploaded M4A is checked with readers of
// its own: ffprobe's duration, mutagen's length and the box order.
import Foundation
import SFXTestSupport
import Glibc
import XCTest
import SFX
import SFXCardSupport

extension VirtualInputTests {
    func testTheVoiceMessageExampleRecordsUploadsAndPlays() throws {
        for tool in ["/usr/bin/espeak-ng", "/usr/bin/ffprobe", "/usr/bin/ffmpeg"] where !FileManager.default.isExecutableFile(atPath: tool) {
            XCTFail("\(tool) is missing: install espeak-ng and ffmpeg (script/common.sh lists them)")
            return
        }
        // Speech, at espeak-ng's 22050 Hz (the card resamples it), about 2 s.
        let speech = directory.appending(path: "speech.wav")
        let spoken = try runToEnd(URL(filePath: "/usr/bin/espeak-ng"), ["-w", speech.path, "This is a voice message from S F X."])
        XCTAssertEqual(spoken.status, 0)
        let served = directory.appending(path: "served")
        let received = directory.appending(path: "received")
        for made in [served, received] { try FileManager.default.createDirectory(at: made, withIntermediateDirectories: false) }
        try FileManager.default.copyItem(at: speech, to: served.appending(path: "message.wav"))
        let uploads = try LocalHTTPServer(script: "upload-server.py", serving: received)
        defer { uploads.stop(terminating: false) }
        let messages = try LocalHTTPServer(script: "stream-server.py", serving: served)
        defer { messages.stop() }

        let take = directory.appending(path: "take.m4a")
        let run = try run([uploads.url("form/voice").absoluteString, messages.url("normal/message.wav").absoluteString,
                           "--token", "secret-token", "--seconds", "3", "--output", take.path],
                          input: speech, program: BuildProducts.product("VoiceMessage"))
        print(run.stdout + run.stderr)
        XCTAssertEqual(run.status, 0, run.stderr)
        let card = directory.appending(path: "runtime/sfx/card").path
        XCTAssertTrue(run.stderr.hasPrefix("sfx: no sound card here: recording from sfx's virtual card (\(card)), which plays SFX_VIRTUAL_INPUT=\(speech.path) into its input\n"), run.stderr)
        XCTAssertTrue(run.stderr.contains("● REC 0:01 / 0:03  ["), "a count-up line with a meter: \(run.stderr)")
        XCTAssertTrue(run.stderr.contains("▶ [") && run.stderr.contains("] 0:00 / 0:0"), "a progress line with the player's level: \(run.stderr)")
        XCTAssertTrue(run.stdout.contains("recorded \(take.path) (3.00 s)\n"), run.stdout)
        XCTAssertTrue(run.stdout.contains("sent take.m4a as audio/mp4: 200\n"), run.stdout)
        XCTAssertTrue(run.stdout.hasSuffix("played message.wav (") || run.stdout.contains("played message.wav ("), run.stdout)

        // What the form server got: token and key, then the file, last.
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: received.appending(path: "request-1.json"))) as? [String: Any])
        XCTAssertEqual(json["parts"] as? [String], ["token", "key", "file"])
        XCTAssertEqual(json["fields"] as? [[String]], [["token", "secret-token"], ["key", "take.m4a"]])
        let body = try Data(contentsOf: received.appending(path: "request-1.body"))
        let sent = try Data(contentsOf: take)
        XCTAssertNotNil(body.range(of: sent), "the file part is the recording")
        let uploaded = directory.appending(path: "uploaded.m4a")
        try sent.write(to: uploaded)

        // Independent readers of the uploaded file.
        let probe = try runToEnd(URL(filePath: "/usr/bin/ffprobe"), ["-v", "error", "-show_entries", "format=duration,format_name",
                                                                  "-of", "default=noprint_wrappers=1", uploaded.path])
        XCTAssertEqual(probe.status, 0)
        let duration = try XCTUnwrap(probe.output.split(separator: "\n").first { $0.hasPrefix("duration=") }.flatMap { Double($0.dropFirst(9)) }, probe.output)
        XCTAssertEqual(duration, 3.0, accuracy: 0.03, "ffprobe: \(probe.output)")
        let mutagen = try mutagenLength(uploaded)
        XCTAssertEqual(mutagen, 3.0, accuracy: 0.03, "mutagen")
        let order = try MP4Boxes(uploaded).order
        XCTAssertLessThan(try XCTUnwrap(order.firstIndex(of: "moov")), try XCTUnwrap(order.firstIndex(of: "mdat")), "\(order)")
        XCTAssertFalse(order.contains("moof"), "\(order)")
        print("uploaded take: ffprobe duration \(duration) s, mutagen \(mutagen) s, boxes \(order)")

        // The speech is in it: loud enough, not the card's silence.
        let loudness = try runToEnd(URL(filePath: "/usr/bin/ffmpeg"), ["-hide_banner", "-i", uploaded.path, "-af", "volumedetect", "-f", "null", "-"],
                                    output: .captured, errors: .merged)
        let peak = try XCTUnwrap(loudness.output.split(separator: "\n").first { $0.contains("max_volume:") }, loudness.output)
        let db = try XCTUnwrap(Double(peak.split(separator: " ").dropLast().last ?? ""), String(peak))
        XCTAssertGreaterThan(db, -20, "the recording holds the speech: \(peak)")

        // What the card played: the prompt first, then the message and, right after its end,
        // the bell (the two may join: espeak-ng's speech ends in quiet of its own). Without the
        // bell, the sound after the prompt would last the message's length.
        let messageSeconds = Double(try Data(contentsOf: speech).count - 44) / 2 / 22_050
        let runs = try soundRuns(in: URL(filePath: card))
        print("played through the card (start, end in s): \(runs); the message lasts \(messageSeconds) s")
        XCTAssertGreaterThanOrEqual(runs.count, 2, "the prompt, then the message and bell: \(runs)")
        if runs.count >= 2, let afterPrompt = runs.dropFirst().first, let last = runs.last {
            XCTAssertLessThan(runs[0].1 - runs[0].0, 0.5, "the prompt tone comes first: \(runs)")
            XCTAssertGreaterThan(last.1 - afterPrompt.0, messageSeconds + 0.5, "a bell after the message: \(runs)")
        }
    }

    /// The stretches of sound (over -50 dBFS, split by 0.3 s of quiet) of the card's playback
    /// recordings, one after another, in seconds.
    func soundRuns(in card: URL) throws -> [(Double, Double)] {
        let script = """
            import sys, glob, os, wave, numpy
            files = sorted(glob.glob(os.path.join(sys.argv[1], "playback*.wav")), key=lambda p: (len(p), p))
            offset, runs = 0.0, []
            for path in files:
                with wave.open(path) as w:
                    rate, channels, width = w.getframerate(), w.getnchannels(), w.getsampwidth()
                    data = numpy.frombuffer(w.readframes(w.getnframes()), dtype={2: "<i2", 4: "<i4"}[width])
                level = numpy.abs(data.reshape(-1, channels).astype(float)).max(axis=1) / (2 ** (8 * width - 1))
                loud = numpy.flatnonzero(level > 10 ** (-50 / 20))
                start = prev = None
                for i in loud:
                    if start is None:
                        start = prev = i
                    elif i - prev > 0.3 * rate:
                        runs.append((offset + start / rate, offset + prev / rate)); start = i
                    prev = i
                if start is not None:
                    runs.append((offset + start / rate, offset + prev / rate))
                offset += len(level) / rate
            print(";".join("%.3f,%.3f" % r for r in runs))
            """
        let run = try runToEnd(URL(filePath: "/usr/bin/python3"), ["-c", script, card.path], errors: .captured)
        XCTAssertEqual(run.status, 0, run.errors)
        return run.output.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ";").compactMap { pair in
            let parts = pair.split(separator: ",").compactMap { Double($0) }
            return parts.count == 2 ? (parts[0], parts[1]) : nil
        }
    }
}

/// A library `Recorder` with default settings records from the virtual card when
/// SFX_VIRTUAL_INPUT names a file and SFX_VIRTUAL_CARD=1 (here, where a sound card may exist),
/// saying so once on standard error; the file holds the input's frames.
final class LibraryVirtualInputTests: XCTestCase {
    func testADefaultRecorderRecordsTheVirtualInput() throws {
        let directory = try CardDirectory.makeTemporary(prefix: "sfx-library-input-")
        defer { try? FileManager.default.removeItem(at: directory) }
        let runtime = directory.appending(path: "runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let source = Signal.music(seconds: 1.5, channels: 1)
        let input = directory.appending(path: "input.wav")
        try WAVAudio(sampleRate: 48_000, channels: 1, samples: source).write(to: input)
        let saved = ["ALSA_CONFIG_PATH", "SFX_VIRTUAL_CARD", "SFX_VIRTUAL_INPUT", "XDG_RUNTIME_DIR"].map { ($0, ProcessInfo.processInfo.environment[$0]) }
        defer { for (key, value) in saved { if let value { setenv(key, value, 1) } else { unsetenv(key) } } }
        unsetenv("ALSA_CONFIG_PATH")
        setenv("SFX_VIRTUAL_CARD", "1", 1)
        setenv("SFX_VIRTUAL_INPUT", input.path, 1)
        setenv("XDG_RUNTIME_DIR", runtime.path, 1)

        var settings = RecorderSettings(format: .wav)
        settings.maxDuration = .seconds(1)
        settings.url = directory.appending(path: "take.wav")
        let recorder = try Recorder(settings: settings)
        try recorder.record()
        guard case .finished(let url, let seconds)? = recorder.waitUntilFinished(timeout: .seconds(20)) else { return XCTFail("not recorded") }
        XCTAssertEqual(seconds, 1, accuracy: 0.001)
        let decoded = try Decoded.soundFile(url)
        XCTAssertEqual(decoded.frames, 48_000)
        assertSamplesEqual(decoded.samples, Array(source.prefix(48_000)))
        XCTAssertNotNil(ProcessInfo.processInfo.environment["ALSA_CONFIG_PATH"], "the card is ALSA's default for the process")

        // Unreadable input: one line with the fix (checked before the card is engaged again).
        XCTAssertThrowsError(try VirtualInput.engageIfAsked(environment: ["SFX_VIRTUAL_INPUT": "/nonexistent.wav", "SFX_VIRTUAL_CARD": "1"])) { error in
            XCTAssertEqual("\(error)", "SFX_VIRTUAL_INPUT names /nonexistent.wav, which cannot be read; point it at a sound file (WAV, FLAC, Ogg…) or unset it")
        }
        // Not asked: nothing engaged.
        XCTAssertNil(try VirtualInput.engageIfAsked(environment: ["SFX_VIRTUAL_CARD": "1"]))
    }
}
