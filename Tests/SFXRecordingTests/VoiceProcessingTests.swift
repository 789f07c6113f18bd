// Voice processing and trimSilence: espeak-ng's speech, mixed with seeded white noise at a known
// SNR, played into the virtual card's capture and recorded with and without `.standard`. The
// SNR is measured on the file against the clean speech: speech-active 10 ms frames (from the
// clean speech's envelope) against noise-only frames (where the clean speech is silent), after
// aligning the file with the clean speech by cross-correlation.
import Foundation
import Glibc
import XCTest
import SFX
import SFXCardSupport
import SFXTestSupport

final class VoiceProcessingTests: XCTestCase {
    static let rate = 48_000
    /// A 10 ms frame.
    static let frame = 480
    /// Silence before and after the speech, in frames.
    static let lead = 48_000, tail = 72_000
    /// The clean speech's level: the RMS of its active frames (a quiet voice, across a room).
    static let speechLevel = -35.0

    /// 5 dB input SNR: the noise comes out at least 15 dB further down relative to the speech
    /// (measured: 5.0 dB in, 23.0 dB out; speech at −23.1 dBFS for a −23 target), the speech within 3 dB of the AGC target, and the file
    /// lined up with the input (the library's one-frame lag removed). `.off`: the file equals
    /// the input, sample for sample.
    func testStandardImprovesTheSNRAt5dBAndOffLeavesTheInputAlone() throws {
        let clean = try Self.speech()
        let input = Self.mix(clean, snr: 5, channels: 1, seed: 5)
        let off = try record(input, channels: 1) { _ in }
        assertSamplesEqual(off.samples, input, "voiceProcessing .off")
        let before = Measure(clean: clean, recorded: off.samples, channels: 1, channel: 0)

        let standard = try record(input, channels: 1) { $0.voiceProcessing = .standard }
        XCTAssertEqual(standard.frames, clean.count, "as many frames as captured")
        let after = Measure(clean: clean, recorded: standard.samples, channels: 1, channel: 0)
        print(String(format: "voice 5 dB: SNR in %.1f dB, out %.1f dB; speech level in %.1f dBFS, out %.1f dBFS (target %.0f); lag %d frames",
                     before.snr, after.snr, before.level, after.level, VoiceProcessing.standard.targetLevel, after.lag))
        XCTAssertEqual(before.snr, 5, accuracy: 0.5)
        XCTAssertEqual(before.lag, 0)
        XCTAssertGreaterThanOrEqual(after.snr - before.snr, 15)
        XCTAssertEqual(after.level, VoiceProcessing.standard.targetLevel, accuracy: 3)
        XCTAssertLessThanOrEqual(abs(after.lag), 24, "the file lines up with the capture within 0.5 ms")
    }

    /// 15 dB input SNR, stereo (each channel its own noise): both channels improve by at least
    /// 15 dB (measured: 15.0 dB in, 35.1 and 35.2 dB out; speech at −22.6 dBFS) and land near the
    /// target.
    func testStandardImprovesBothStereoChannelsAt15dB() throws {
        let clean = try Self.speech()
        let input = Self.mix(clean, snr: 15, channels: 2, seed: 15)
        let standard = try record(input, channels: 2) { $0.voiceProcessing = .standard }
        XCTAssertEqual(standard.channels, 2)
        for channel in 0..<2 {
            let before = Measure(clean: clean, recorded: input, channels: 2, channel: channel)
            let after = Measure(clean: clean, recorded: standard.samples, channels: 2, channel: channel)
            print(String(format: "voice 15 dB, channel %d: SNR in %.1f dB, out %.1f dB; speech level in %.1f dBFS, out %.1f dBFS; lag %d frames",
                         channel, before.snr, after.snr, before.level, after.level, after.lag))
            XCTAssertEqual(before.snr, 15, accuracy: 0.5)
            XCTAssertGreaterThanOrEqual(after.snr - before.snr, 15, "channel \(channel)")
            XCTAssertEqual(after.level, VoiceProcessing.standard.targetLevel, accuracy: 3, "channel \(channel)")
        }
    }

    /// trimSilence on the speech between 1 s and 1.5 s of silence: the file is the speech with
    /// `trimMargin` before and after, each end within 50 ms; the final event gives that length,
    /// `currentTime` what was captured.
    func testTrimSilenceRemovesLeadingAndTrailingSilence() throws {
        let clean = try Self.speech()
        var last: RecorderEvent?
        var captured = 0.0
        let trimmed = try record(clean, channels: 1, last: &last, currentTime: &captured) {
            $0.trimSilence = true
            $0.trimMargin = .milliseconds(100)
        }
        let (start, end) = Self.speechExtent(clean)
        let margin = Self.rate / 10
        let offset = Self.offset(of: trimmed.samples, in: clean)
        print("trimSilence: speech \(start)…\(end), file \(offset)…\(offset + trimmed.frames) (frames at 48 kHz, margin \(margin))")
        XCTAssertEqual(Double(offset), Double(start - margin), accuracy: 2_400, "leading silence")
        XCTAssertEqual(Double(offset + trimmed.frames), Double(end + margin), accuracy: 2_400, "trailing silence")
        assertSamplesEqual(trimmed.samples, Array(clean[offset..<(offset + trimmed.frames)]), "the kept part is untouched")
        guard case .finished(_, let duration) = last else { return XCTFail("\(String(describing: last))") }
        XCTAssertEqual(duration, Double(trimmed.frames) / Double(Self.rate), accuracy: 1e-9)
        XCTAssertEqual(captured, Double(clean.count) / Double(Self.rate), accuracy: 1e-9)
    }

    /// A recording that opens mid-word loses nothing at its start: the file begins at the first
    /// frame, and ends `trimMargin` after the speech.
    func testTrimSilenceKeepsSpeechThatStartsAtOnce() throws {
        let cut = Self.lead + Self.rate / 10
        let clean = Array(try Self.speech().dropFirst(cut))
        let trimmed = try record(clean, channels: 1) {
            $0.trimSilence = true
            $0.trimMargin = .milliseconds(100)
        }
        let end = Self.speechExtent(clean).1
        XCTAssertEqual(Double(trimmed.frames), Double(end + Self.rate / 10), accuracy: 2_400)
        assertSamplesEqual(Array(trimmed.samples.prefix(Self.rate)), Array(clean.prefix(Self.rate)), "the first second")
    }

    /// With voice processing too, in M4A (its standard-container rewrite at stop): the file's
    /// length is the speech's and the margins within 50 ms (and AAC's frame of slack).
    func testTrimSilenceWithVoiceProcessingInM4A() throws {
        let clean = try Self.speech()
        let input = Self.mix(clean, snr: 15, channels: 1, seed: 3)
        let trimmed = try record(input, channels: 1, format: .m4a) {
            $0.voiceProcessing = .standard
            $0.trimSilence = true
            $0.trimMargin = .milliseconds(100)
        }
        let (start, end) = Self.speechExtent(clean)
        let expected = end - start + 2 * Self.rate / 10
        print("trimSilence with .standard, M4A: \(trimmed.frames) frames, speech and margins \(expected)")
        XCTAssertEqual(Double(trimmed.frames), Double(expected), accuracy: 2 * 2_400 + 1_024)
    }

    /// `sfx record --voice --trim-silence`: the saved line gives the trimmed length, which is the
    /// speech's with 0.2 s each side, within 50 ms at each end.
    func testTheCommandsVoiceAndTrimSilence() throws {
        let clean = try Self.speech()
        let card = try cardCapturing(clean, channels: 1)
        defer { try? card.remove() }
        let file = card.directory.appending(path: "memo.wav")
        let seconds = String(format: "%.3f", Double(clean.count) / Double(Self.rate))
        let run = try Sfx(card).run(["record", "-o", file.path, "--max", seconds, "-q", "--voice", "--trim-silence"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let saved = try Decoded.soundFile(file)
        let (start, end) = Self.speechExtent(clean)
        XCTAssertEqual(Double(saved.frames), Double(end - start + 2 * Self.rate / 5), accuracy: 2 * 2_400)
        XCTAssertTrue(run.stdout.hasPrefix("saved \(file.path) (\(String(format: "%.2f", Double(saved.frames) / Double(Self.rate))) s, wav, "), run.stdout)
    }

    /// minDuration applies to the trimmed length: silence alone is discarded.
    func testSilenceAloneIsDiscardedByMinDurationAfterTrimming() throws {
        var last: RecorderEvent?
        var captured = 0.0
        let silence = [Float](repeating: 0, count: Self.rate)
        XCTAssertThrowsError(try record(silence, channels: 1, last: &last, currentTime: &captured) {
            $0.trimSilence = true
            $0.minDuration = .milliseconds(500)
        })
        guard case .discarded(_, let reason) = last else { return XCTFail("\(String(describing: last))") }
        XCTAssertEqual(reason, "0.00 s is shorter than the minimum of 0.50 s")
    }

    /// Without libspeexdsp (its file hidden under /dev/null in a mount namespace of its own, where
    /// this test runs itself again), `record()` throws one line that says what to install, and
    /// leaves no file; a recording without voice processing does not need it.
    func testWithoutLibspeexdspTheErrorNamesThePackage() throws {
        if ProcessInfo.processInfo.environment["SFX_TEST_LIBSPEEXDSP_HIDDEN"] == "1" {
            let card = try cardCapturing([Float](repeating: 0, count: Self.rate), channels: 1)
            defer { try? card.remove() }
            var settings = settings(.wav, card: card, channels: 1)
            settings.voiceProcessing = .standard
            XCTAssertThrowsError(try Recorder(settings: settings).record()) { error in
                XCTAssertTrue("\(error)".hasPrefix("voice processing cannot run: libspeexdsp.so.1 cannot be loaded for voice processing ("), "\(error)")
                XCTAssertTrue("\(error)".hasSuffix("install libspeexdsp1 (apt-get install libspeexdsp1); or record without it (voiceProcessing = .off)"), "\(error)")
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: settings.url!.path))
            settings.voiceProcessing = .off
            settings.trimSilence = true
            settings.maxDuration = .milliseconds(200)
            let recorder = try Recorder(settings: settings)
            try recorder.record()
            guard case .finished = recorder.waitUntilFinished(timeout: .seconds(20)) else { return XCTFail("trimSilence alone needs no speexdsp") }
            return
        }
        let library = URL(filePath: "/usr/lib/x86_64-linux-gnu/libspeexdsp.so.1").resolvingSymlinksInPath().path
        guard FileManager.default.fileExists(atPath: library), FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else {
            return XCTFail("no \(library) or no unshare: script/common.sh installs libspeexdsp-dev (libspeexdsp1) and util-linux")
        }
        let script = "mount --bind /dev/null '\(library)' || exit 97\nexec \"$0\" \"$@\""
        let namespace = (getuid() == 0 ? [] : ["--user", "--map-root-user"]) + ["--mount", "--propagation", "private"]
        var environment = ProcessInfo.processInfo.environment
        environment["SFX_TEST_LIBSPEEXDSP_HIDDEN"] = "1"
        let run = try runToEnd(URL(filePath: "/usr/bin/unshare"),
                               namespace + ["--", "/bin/sh", "-c", script, CommandLine.arguments[0], "SFXRecordingTests.VoiceProcessingTests/testWithoutLibspeexdspTheErrorNamesThePackage"],
                               environment: environment, errors: .merged, timeout: 120)
        if run.status == 97 || run.output.contains("unshare: ") { throw XCTSkip("cannot hide libspeexdsp in a mount namespace: \(run.output)") }
        XCTAssertEqual(run.status, 0, run.output)
        XCTAssertTrue(run.output.contains("Executed 1 test, with 0 failures"), run.output)
    }

    /// The latency reported: the frame gathered and speexdsp's one-frame lag, 0 when off.
    func testProcessingLatencyIsTwoFrames() throws {
        var settings = RecorderSettings()
        XCTAssertEqual(try Recorder(settings: settings).processingLatency, .zero)
        settings.voiceProcessing = .standard
        XCTAssertEqual(try Recorder(settings: settings).processingLatency, .milliseconds(20))
        settings.sampleRate = 16_000
        XCTAssertEqual(try Recorder(settings: settings).processingLatency, .milliseconds(20))
    }

    /// Out-of-range knobs are one line naming the setting.
    func testKnobsOutOfRangeAreRefused() {
        var settings = RecorderSettings()
        settings.voiceProcessing.targetLevel = -3
        XCTAssertThrowsError(try Recorder(settings: settings)) { error in
            XCTAssertEqual("\(error)", "voiceProcessing.targetLevel -3.0 is out of range: use a number from -50.0 to -20.0")
        }
        settings = RecorderSettings()
        settings.trimMargin = .seconds(9)
        XCTAssertThrowsError(try Recorder(settings: settings)) { error in
            XCTAssertTrue("\(error)".hasPrefix("trimMargin 9.0 seconds is out of range"), "\(error)")
        }
    }

    // MARK: Support

    /// Records `samples` through the virtual card for exactly their length; the file decoded.
    private func record(_ samples: [Float], channels: Int, format: RecordingFormat = .wav,
                        _ configure: (inout RecorderSettings) -> Void) throws -> Decoded {
        var last: RecorderEvent?
        var captured = 0.0
        return try record(samples, channels: channels, format: format, last: &last, currentTime: &captured, configure)
    }

    private func record(_ samples: [Float], channels: Int, format: RecordingFormat = .wav, last: inout RecorderEvent?,
                        currentTime: inout Double, _ configure: (inout RecorderSettings) -> Void) throws -> Decoded {
        let card = try cardCapturing(samples, channels: channels)
        defer { try? card.remove() }
        var settings = settings(format, card: card, channels: channels)
        settings.maxDuration = .seconds(Double(samples.count / channels) / Double(Self.rate))
        configure(&settings)
        let recorder = try Recorder(settings: settings)
        try recorder.record()
        last = recorder.waitUntilFinished(timeout: .seconds(60))
        currentTime = recorder.currentTime
        guard case .finished = last else { throw CardError("recording ended with \(String(describing: last))") }
        return try Decoded.any(settings.url!)
    }

    /// espeak-ng's voice at 48 kHz (sox resamples its 22.05 kHz), scaled so its active frames'
    /// RMS is `speechLevel`, between `lead` and `tail` frames of silence, quantised to k/32768.
    static func speech() throws -> [Float] {
        let directory = try CardDirectory.makeTemporary(prefix: "sfx-voice-")
        defer { try? FileManager.default.removeItem(at: directory) }
        let spoken = directory.appending(path: "spoken.wav"), resampled = directory.appending(path: "speech.wav")
        let text = "Hello, this is a voice message recorded in a noisy room. Please call me back when you can, thank you."
        for (tool, arguments) in [("/usr/bin/espeak-ng", ["-w", spoken.path, text]),
                                  ("/usr/bin/sox", [spoken.path, "-b", "32", "-e", "floating-point", resampled.path, "rate", "48000"])] {
            guard FileManager.default.isExecutableFile(atPath: tool) else {
                throw CardError("\(tool) is missing: install espeak-ng and sox (script/common.sh lists them)")
            }
            let run = try runToEnd(URL(filePath: tool), arguments, errors: .merged)
            guard run.status == 0 else { throw CardError("\(tool) failed (\(run.status)): \(run.output)") }
        }
        var voice = try Decoded.soundFile(resampled).samples.map(Double.init)
        let powers = framePowers(voice.map(Float.init), channels: 1, channel: 0)
        let loudest = powers.max() ?? 1
        let active = powers.filter { $0 > loudest * pow(10, -2.5) }
        let gain = pow(10, speechLevel / 20) / sqrt(active.reduce(0, +) / Double(active.count))
        voice = voice.map { $0 * gain }
        return [Float](repeating: 0, count: lead) + voice.map { Signal.quantise($0) } + [Float](repeating: 0, count: tail)
    }

    /// `clean` on every channel with seeded white noise (Gaussian, each channel its own) at
    /// `snr` dB under the speech's level, quantised.
    static func mix(_ clean: [Float], snr: Double, channels: Int, seed: UInt64) -> [Float] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        func uniform() -> Double {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return (Double(state >> 11) + 0.5) / Double(1 << 53)
        }
        let sigma = pow(10, (speechLevel - snr) / 20)
        var out = [Float](repeating: 0, count: clean.count * channels)
        for n in 0..<clean.count {
            for c in 0..<channels {
                let gaussian = sqrt(-2 * log(uniform())) * cos(2 * .pi * uniform())
                out[n * channels + c] = Signal.quantise(Double(clean[n]) + sigma * gaussian)
            }
        }
        return out
    }

    /// Mean power of each 10 ms frame of one channel.
    static func framePowers(_ samples: [Float], channels: Int, channel: Int, lag: Int = 0) -> [Double] {
        let frames = samples.count / channels
        return stride(from: 0, to: frames - frame + 1, by: frame).map { start in
            var sum = 0.0
            for n in start..<(start + frame) {
                let i = n + lag
                let x = i >= 0 && i < frames ? Double(samples[i * channels + channel]) : 0
                sum += x * x
            }
            return sum / Double(frame)
        }
    }

    /// The first and last frame of the clean speech above −70 dBFS (10 ms frames).
    static func speechExtent(_ clean: [Float]) -> (Int, Int) {
        let powers = framePowers(clean, channels: 1, channel: 0)
        let loud = powers.indices.filter { powers[$0] > 1e-7 }
        return ((loud.first ?? 0) * frame, ((loud.last ?? 0) + 1) * frame)
    }

    /// Where `part` best matches in `whole` (mono): the offset with the highest correlation.
    static func offset(of part: [Float], in whole: [Float]) -> Int {
        guard !part.isEmpty, part.count <= whole.count else { return 0 }
        var best = (offset: 0, score: -Double.infinity)
        part.withUnsafeBufferPointer { p in
            whole.withUnsafeBufferPointer { w in
                for offset in stride(from: 0, through: w.count - p.count, by: 48) {
                    var xy = 0.0
                    for n in stride(from: 0, to: p.count, by: 8) { xy += Double(p[n]) * Double(w[offset + n]) }
                    if xy > best.score { best = (offset, xy) }
                }
                let coarse = best.offset
                for offset in max(0, coarse - 48)...min(w.count - p.count, coarse + 48) {
                    var xy = 0.0
                    for n in stride(from: 0, to: p.count, by: 2) { xy += Double(p[n]) * Double(w[offset + n]) }
                    if offset == max(0, coarse - 48) || xy > best.score { best = (offset, xy) }
                }
            }
        }
        return best.offset
    }
}

/// SNR and speech level of one channel of a recording of `VoiceProcessingTests.speech()`.
struct Measure {
    /// Frames the recording lags the clean speech (by cross-correlation over ±15 ms: a lag of the
    /// library's frame, 10 ms, not taken out would show).
    var lag: Int
    /// Speech power over noise power: active frames (within 25 dB of the clean speech's loudest)
    /// less the noise power, over noise-only frames (the silences before and after, their first
    /// 0.3 s left out while the suppressor learns the noise), in dB.
    var snr: Double
    /// RMS of the active frames of the speech's second half (once the gain has settled), dBFS.
    var level: Double

    init(clean: [Float], recorded: [Float], channels: Int, channel: Int) {
        let frames = recorded.count / channels
        var best = (lag: 0, score: -Double.infinity)
        clean.withUnsafeBufferPointer { x in
            recorded.withUnsafeBufferPointer { y in
                let from = VoiceProcessingTests.lead, to = min(clean.count, frames) - VoiceProcessingTests.tail
                for lag in -720...720 {
                    var xy = 0.0
                    for n in stride(from: from, to: to, by: 7) where n + lag >= 0 && n + lag < frames {
                        xy += Double(x[n]) * Double(y[(n + lag) * channels + channel])
                    }
                    if xy > best.score { best = (lag, xy) }
                }
            }
        }
        lag = best.lag
        let f = VoiceProcessingTests.frame
        let cleanPowers = VoiceProcessingTests.framePowers(clean, channels: 1, channel: 0)
        let powers = VoiceProcessingTests.framePowers(recorded, channels: channels, channel: channel, lag: lag)
        let loudest = cleanPowers.max() ?? 1
        let count = min(cleanPowers.count, powers.count)
        let active = (0..<count).filter { cleanPowers[$0] > loudest * pow(10, -2.5) }
        let settle = 30
        let leadFrames = VoiceProcessingTests.lead / f, tailStart = (clean.count - VoiceProcessingTests.tail) / f
        let quiet = (0..<count).filter { ($0 >= settle && $0 < leadFrames) || ($0 >= tailStart + settle) }
        func mean(_ indices: [Int]) -> Double { indices.map { powers[$0] }.reduce(0, +) / Double(max(indices.count, 1)) }
        let speech = mean(active), noise = mean(quiet)
        snr = 10 * log10(max(speech - noise, 1e-20) / max(noise, 1e-20))
        level = 10 * log10(max(mean(Array(active.suffix(active.count / 2))), 1e-20))
    }
}
