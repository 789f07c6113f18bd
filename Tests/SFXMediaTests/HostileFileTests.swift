import CSFXMedia
import Foundation
import SFXCore
import XCTest
@testable import SFXMedia

/// Files made to hurt (issue 9): FIFOs and devices, cues too large for memory, names that are
/// not UTF-8, and the block-by-block conversion that keeps memory bounded.
final class HostileFileTests: TemporaryDirectoryTestCase {
    /// Runs `body` on another thread and fails (instead of hanging the suite) if it has not
    /// returned within `seconds`; `unblock` is then called to let the stuck thread finish.
    private func withinWatchdog(_ what: String, seconds: Double = 10, unblock: () -> Void = {}, _ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            body()
            done.signal()
        }
        if done.wait(timeout: .now() + seconds) == .timedOut {
            XCTFail("\(what) did not return within \(seconds) s")
            unblock()
            _ = done.wait(timeout: .now() + seconds)
        }
    }

    func testFIFOIsRefusedAtOnceByEveryReader() throws {
        let fifo = directory.file("pipe.wav")
        XCTAssertEqual(mkfifo(fifo.path, 0o600), 0)
        // A writer opened non-blocking releases a reader stuck in open(2) on the FIFO.
        let unblock = { let fd = open(fifo.path, O_WRONLY | O_NONBLOCK); if fd >= 0 { close(fd) } }
        let expected = MediaError(.notRegularFile(kind: "a FIFO"), subject: fifo.path)
        XCTAssertEqual(expected.description, "\(fifo.path): is a FIFO, not a regular file; give the path of a regular file")
        withinWatchdog("decode of a FIFO", unblock: unblock) {
            do {
                _ = try AudioDecoder().decode(contentsOf: fifo)
                XCTFail("a FIFO was read")
            } catch {
                XCTAssertEqual(error as? MediaError, expected)
            }
        }
        withinWatchdog("AudioFileInfo of a FIFO", unblock: unblock) {
            do {
                _ = try AudioFileInfo(contentsOf: fifo)
                XCTFail("a FIFO was read")
            } catch {
                XCTAssertEqual(error as? MediaError, expected)
            }
        }
        withinWatchdog("IniFile of a FIFO", unblock: unblock) {
            do {
                _ = try IniFile(contentsOf: fifo)
                XCTFail("a FIFO was read")
            } catch {
                XCTAssertEqual(error as? MediaError, expected)
            }
        }
    }

    func testDevicesAndDirectoriesAreNamedForWhatTheyAre() throws {
        let zero = URL(filePath: "/dev/zero")
        _ = assertMediaError({ try AudioDecoder().decode(contentsOf: zero) }) { $0 == .notRegularFile(kind: "a character device") }
        let ini = assertMediaError({ try IniFile(contentsOf: zero) }) { $0 == .notRegularFile(kind: "a character device") }
        XCTAssertFalse(ini?.description.contains("permission") ?? true)
        // A directory is "not a sound file" for the decoder, but only "not a regular file" for IniFile.
        _ = assertMediaError({ try AudioDecoder().decode(contentsOf: self.directory.url) }) { $0 == .isDirectory }
        let folder = assertMediaError({ try IniFile(contentsOf: self.directory.url) }) { $0 == .notRegularFile(kind: "a directory") }
        XCTAssertFalse(folder?.description.contains("sound") ?? true)
    }

    /// CueLimits.maximumBytes: the cue's bytes are its frames at the decoder's format × channels × 4.
    func testCuesLargerThanTheMemoryLimitAreRefusedBeforeDecoding() throws {
        let url = directory.file("second.wav")
        try AudioFileWriter.write([Float](repeating: 0.1, count: 8_000), sampleRate: 8_000, channels: 1, to: url, as: .wavPCM16)
        let cueBytes = 48_000 * 2 * 4  // one second at 48 kHz stereo
        let refused = AudioDecoder(format: .standard, limits: CueLimits(maximumBytes: cueBytes - 1))
        let error = assertMediaError({ try refused.decode(contentsOf: url) }) {
            $0 == .tooLarge(channels: 1, sampleRate: 8_000, seconds: 1, cueBytes: Int64(cueBytes), cueFormat: "\(AudioFormat.standard)", limit: cueBytes - 1)
        }
        let message = error?.description ?? ""
        XCTAssertTrue(message.hasPrefix("\(url.path): has 1 ch at 8000 Hz, 1.0 s: "), message)
        XCTAssertTrue(message.contains("0.4 MB") && message.contains("CueLimits.maximumBytes"), message)
        XCTAssertEqual(try AudioDecoder(format: .standard, limits: CueLimits(maximumBytes: cueBytes)).decode(contentsOf: url).frameCount, 48_000)
        // Buffers meet the same limit.
        _ = assertMediaError({ try refused.cue(interleaved: [Float](repeating: 0.1, count: 8_000), sampleRate: 8_000, channels: 1, name: "b") }) {
            if case .tooLarge = $0 { return true } else { return false }
        }
        XCTAssertEqual(CueLimits.standard.maximumBytes, 64_000_000)
        XCTAssertGreaterThan(CueLimits.standard.maximumBytes, 30 * 192_000 * 2 * 4)
    }

    /// Decoding in 4096-frame blocks gives what converting the whole signal at once gives.
    func testBlockByBlockConversionEqualsWholeConversion() throws {
        let frames = 10 * 4_096 + 123
        let signal = Signal.sine(frequency: 441, sampleRate: 44_100, frames: frames, channels: 2, amplitude: 0.6)
        let url = directory.file("long.wav")
        try AudioFileWriter.write(signal, sampleRate: 44_100, channels: 2, to: url, as: .wavFloat32)
        let whole = try Resampler.resample(signal, channels: 2, from: 44_100, to: 48_000)
        let cue = try AudioDecoder(format: .standard).decode(contentsOf: url)
        XCTAssertEqual(cue.frameCount, Resampler.idealLength(frames: frames, from: 44_100, to: 48_000))
        let decoded = cue.sampleArray
        XCTAssertEqual(decoded.count, whole.count)
        let worst = zip(decoded, whole).map { abs($0 - $1) }.max() ?? 1
        XCTAssertLessThan(worst, 1e-6)

        // Six channels downmixed block by block equal the matrix applied to the whole signal.
        var six: [Float] = []
        for frame in 0..<(3 * 4_096 + 7) {
            for channel in 0..<6 {
                six.append(Float((channel + 1) * (frame % 97)) / 1_000)
            }
        }
        let sixURL = directory.file("six.wav")
        try AudioFileWriter.write(six, sampleRate: 48_000, channels: 6, to: sixURL, as: .wavFloat32)
        let expected = six.withUnsafeBufferPointer { ChannelMatrix(sourceChannels: 6, map: nil, targetChannels: 2).apply($0, frames: six.count / 6) }
        XCTAssertEqual(try AudioDecoder(format: .standard).decode(contentsOf: sixURL).sampleArray, expected)
    }

    func testNamesThatAreNotUTF8Open() throws {
        let plain = directory.file("plain.wav")
        try AudioFileWriter.write([Float](repeating: 0.25, count: 480), sampleRate: 48_000, channels: 1, to: plain, as: .wavPCM16)
        let raw = RawFilePath(bytes: Array(directory.url.path.utf8) + Array("/take-".utf8) + [0xFF, 0xC3] + Array(".wav".utf8))
        XCTAssertEqual(raw.withCString { rename(plain.path, $0) }, 0)
        XCTAssertEqual(raw.description, directory.url.path + "/take-\\xFF\\xC3.wav")
        XCTAssertEqual(raw.lastComponent.bytes, Array("take-".utf8) + [0xFF, 0xC3] + Array(".wav".utf8))
        let cue = try AudioDecoder(format: .standard).decode(file: raw)
        XCTAssertEqual(cue.frameCount, 480)
        XCTAssertEqual(cue.name, "take-\\xFF\\xC3.wav")
        XCTAssertEqual(try AudioFileInfo(file: raw).frames, 480)
        XCTAssertEqual(RawFilePath(bytes: Array("é/ok".utf8)).description, "é/ok")
        // The same name through a URL cannot be found: Foundation has replaced the bytes.
        _ = assertMediaError({ try AudioDecoder().decode(contentsOf: URL(filePath: raw.description)) }) { $0 == .missingFile }
    }

    /// libsndfile calls an MP3 cut to a few hundred bytes "not a regular file (possibly a
    /// pipe?)"; sfx has checked it is a regular file, so it says the file is damaged.
    func testCutShortRegularFileIsNotCalledAPipe() throws {
        let mp3 = directory.file("whole.mp3")
        try AudioFileWriter.write(Signal.sine(frequency: 440, sampleRate: 44_100, frames: 88_200, channels: 2),
                                  sampleRate: 44_100, channels: 2, to: mp3, as: .mp3)
        let bytes = [UInt8](try Data(contentsOf: mp3))
        for length in [100, 400, 800] {
            let url = try directory.write("cut-\(length).mp3", Data(bytes.prefix(length)))
            let error = assertMediaError({ try AudioDecoder().decode(contentsOf: url) }) {
                $0 == .corrupt(detail: "libsndfile cannot read its beginning: the file is cut short or damaged")
            }
            XCTAssertFalse(error?.description.contains("pipe") ?? true)
        }
    }

    /// libmpg123 decoders are made quiet: the wrapper of mpg123_new is the one libsndfile calls.
    func testMP3DecodersAreMadeQuiet() throws {
        let mp3 = directory.file("quiet.mp3")
        try AudioFileWriter.write(Signal.sine(frequency: 440, sampleRate: 44_100, frames: 4_410), sampleRate: 44_100, channels: 1, to: mp3, as: .mp3)
        let before = sfx_mpg123_quieted_count()
        _ = try AudioDecoder().decode(contentsOf: mp3)
        XCTAssertGreaterThan(sfx_mpg123_quieted_count(), before)
    }
}
