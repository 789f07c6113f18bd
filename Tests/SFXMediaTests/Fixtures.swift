import Foundation
import SFXTestSupport
import SFXCore
import XCTest
@testable import SFXMedia

/// A temporary directory removed when the test case ends.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appending(path: "sfx-media-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func file(_ name: String) -> URL { url.appending(path: name) }

    /// Writes `contents` at `relativePath`, creating parent directories.
    @discardableResult
    func write(_ relativePath: String, _ contents: Data = Data("x".utf8)) throws -> URL {
        let target = file(relativePath)
        try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        try contents.write(to: target)
        return target
    }
}

/// A test case with a fresh temporary directory per test, removed when the test ends.
class TemporaryDirectoryTestCase: XCTestCase {
    private var current: TemporaryDirectory?
    var directory: TemporaryDirectory { current! }

    override func setUpWithError() throws {
        current = try TemporaryDirectory()
    }

    override func tearDown() {
        current = nil
    }
}

extension Cue {
    /// The samples copied out while the cue is certainly alive (`samples` is only valid as long
    /// as the cue is, and a cue may be released right after its last use).
    var sampleArray: [Float] { Array(samples) }
}

enum Signal {
    /// `frames` frames of a sine at `frequency`, the same in every channel.
    static func sine(frequency: Double, sampleRate: Int, frames: Int, channels: Int = 1, amplitude: Double = 0.5) -> [Float] {
        (0..<frames).flatMap { frame in
            Array(repeating: Float(amplitude * sin(2 * .pi * frequency * Double(frame) / Double(sampleRate))), count: channels)
        }
    }

    /// Values a 16-bit file holds exactly: multiples of 1/32768.
    static func sixteenBitRamp(frames: Int, channels: Int) -> [Float] {
        (0..<(frames * channels)).map { Float(($0 * 37) % 65_536 - 32_768) / 32_768 }
    }

    /// One channel of interleaved samples.
    static func channel(_ index: Int, of samples: some Collection<Float>, channels: Int) -> [Float] {
        samples.enumerated().filter { $0.offset % channels == index }.map(\.element)
    }

    /// Frequency estimated from upward zero crossings over the middle of the signal (edges trimmed).
    static func frequency(of mono: [Float], sampleRate: Int) -> Double {
        let trim = mono.count / 10
        let middle = Array(mono[trim..<(mono.count - trim)])
        var crossings: [Int] = []
        for index in 1..<middle.count where middle[index - 1] < 0 && middle[index] >= 0 {
            crossings.append(index)
        }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return 0 }
        return Double(crossings.count - 1) * Double(sampleRate) / Double(last - first)
    }

    static func rms(_ samples: some Collection<Float>) -> Double {
        sqrt(samples.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(samples.count, 1)))
    }
}

/// Something the project's set-up (script/test) installs is missing: the test fails, saying what.
struct MissingDependency: Error, CustomStringConvertible {
    let description: String
}

/// Writes a fixture with `AudioFileWriter`. Debian's libsndfile writes MP3 through LAME; a build
/// without it fails the test rather than leave MP3 decoding untested.
func writeFixture(_ samples: [Float], rate: Int, channels: Int, to url: URL, as encoding: AudioFileEncoding) throws {
    do {
        try AudioFileWriter.write(samples, sampleRate: rate, channels: channels, to: url, as: encoding)
    } catch let error as MediaError where encoding == .mp3 {
        throw MissingDependency(description: "this libsndfile cannot write MP3 (built without LAME); install Debian's libsndfile1: \(error)")
    }
}

/// Runs `body` with the effective user "nobody" when running as root (so permissions apply).
func withoutRootPrivileges<T>(_ body: () throws -> T) rethrows -> T {
    guard geteuid() == 0 else { return try body() }
    precondition(seteuid(65_534) == 0, "cannot drop to nobody")
    defer { precondition(seteuid(0) == 0, "cannot return to root") }
    return try body()
}

/// Runs a program and returns whether it exited 0.
@discardableResult
func runProgram(_ executable: String, _ arguments: [String]) throws -> Bool {
    try runProgramForOutput(executable, arguments).status == 0
}

/// Runs a program to its end: its exit status, and its standard output and error together.
func runProgramForOutput(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let run = try runToEnd(URL(filePath: executable), arguments, errors: .merged)
    return (run.status, run.output)
}

/// Asserts that `body` throws a `MediaError` whose reason satisfies `matches`, and returns it.
@discardableResult
func assertMediaError(_ body: () throws -> Any, file: StaticString = #filePath, line: UInt = #line,
                      _ matches: (MediaError.Reason) -> Bool) -> MediaError? {
    do {
        _ = try body()
        XCTFail("expected a MediaError", file: file, line: line)
    } catch let error as MediaError {
        XCTAssertTrue(matches(error.reason), "unexpected reason: \(error)", file: file, line: line)
        XCTAssertFalse(error.description.contains("\n"), "not one line: \(error)", file: file, line: line)
        return error
    } catch {
        XCTFail("not a MediaError: \(error)", file: file, line: line)
    }
    return nil
}
