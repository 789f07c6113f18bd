import Foundation
import SFXTestSupport
import XCTest
import SFXMedia
import SFXTesting

/// A game embeds sfx the way the README says, in a package of its own: Examples/Game, copied to a
/// temporary directory and depending on this checkout by its absolute path (whatever the
/// checkout's directory is called), is built with `swift build --build-tests` once; then
/// - its own headless test (docs/virtual-card.md's, through the `SFXTesting` product) passes;
/// - its `Game` (the README's example) plays on a virtual card;
/// - its `PlaySounds`, copied to a directory of its own with no checkout, no Sounds directory and
///   no installed theme in reach, plays `tock` and every bundled sound, synthesised in memory.
///
/// The build compiles sfx from scratch (about 2–4 minutes on two shared cores); it happens once,
/// under the temporary directory, which is removed at the end.
final class EmbeddingTests: XCTestCase {
    static let checkout = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let example = checkout.appending(path: "Examples/Game")

    var scratch: URL!

    override func setUpWithError() throws {
        scratch = FileManager.default.temporaryDirectory.appending(path: "sfx-embedding-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(scratch.path, 0o700), 0)
    }

    override func tearDownWithError() throws {
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
    }

    // MARK: The README, the manual and the example package say the same

    /// The ```swift blocks of the README, then of the manual's pages (docs/*.md), in order.
    static func documentationSwiftBlocks() throws -> [String] {
        let docs = checkout.appending(path: "docs")
        let pages = try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }.sorted()
        let text = try ([checkout.appending(path: "README.md")] + pages.map { docs.appending(path: $0) })
            .map { try String(contentsOf: $0, encoding: .utf8) }.joined(separator: "\n")
        var blocks: [String] = [], current: [Substring]? = nil
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```swift" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.joined(separator: "\n") + "\n")
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    func testTheReadmesPackageLinesAndExamplesAreTheExamplePackagesFiles() throws {
        let blocks = try Self.documentationSwiftBlocks()
        let manifest = try XCTUnwrap(blocks.first { $0.hasPrefix("// swift-tools-version") }, "the README shows a game's Package.swift")
        let example = try String(contentsOf: Self.example.appending(path: "Package.swift"), encoding: .utf8)
        let exampleLines = Set(example.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
        for line in manifest.split(separator: "\n") {
            let line = line.replacingOccurrences(of: #"path: "../sfx""#, with: #"path: "../..""#).trimmingCharacters(in: .whitespaces)
            XCTAssertTrue(exampleLines.contains(line), "README line \(line) is not in Examples/Game/Package.swift")
        }
        XCTAssertTrue(manifest.contains(#".package(name: "sfx", path: "../sfx")"#), manifest)
        let library = try XCTUnwrap(blocks.first { $0.contains("let engine = try SoundEngine()") && $0.hasPrefix("import Foundation") })
        XCTAssertEqual(library, try String(contentsOf: Self.example.appending(path: "Sources/Game/main.swift"), encoding: .utf8))
        let test = try XCTUnwrap(blocks.first { $0.contains("import SFXTesting") })
        XCTAssertEqual(test, try String(contentsOf: Self.example.appending(path: "Tests/GameTests/GameTests.swift"), encoding: .utf8))
    }

    // MARK: Building and running the game

    func testAGameBuiltAgainstThisCheckoutPlaysOnTheCardAndItsBinaryNeedsNothingBesideIt() throws {
        // The game package, depending on this checkout by path. The checkout's directory need not
        // be called sfx: `.package(name: "sfx", path:)` names it.
        let game = scratch.appending(path: "Game")
        for file in ["Package.swift", "Sources/Game/main.swift", "Sources/PlaySounds/main.swift", "Tests/GameTests/GameTests.swift"] {
            try FileManager.default.createDirectory(at: game.appending(path: file).deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: Self.example.appending(path: file), to: game.appending(path: file))
        }
        let manifest = game.appending(path: "Package.swift")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        XCTAssertTrue(text.contains(#"path: "../..""#))
        try text.replacingOccurrences(of: #"path: "../..""#, with: "path: \"\(Self.checkout.path)\"")
            .write(to: manifest, atomically: false, encoding: .utf8)

        let started = Date()
        var buildEnvironment = ProcessInfo.processInfo.environment
        buildEnvironment["TMPDIR"] = scratch.path           // SwiftPM's lock files go there too
        let build = try run(Self.swift, ["build", "--build-tests", "--package-path", game.path], in: game,
                            environment: buildEnvironment, timeout: 1800)
        XCTAssertEqual(build.status, 0, "swift build: \(build.output.suffix(3000))")
        guard build.status == 0 else { return }
        print("the game package and sfx built in \(Int(Date().timeIntervalSince(started))) s")
        let products = game.appending(path: ".build/debug")

        // 1. The game's own headless test, on the card of the SFXTesting product.
        XCTAssertTrue(FileManager.default.fileExists(atPath: products.appending(path: "libSFXTesting.so").path),
                      "the SFXTesting product's library, which holds the card's plugin, is built beside the tests")
        let tests = try run(products.appending(path: "GamePackageTests.xctest"), [], in: game, environment: isolated())
        XCTAssertEqual(tests.status, 0, tests.output)
        XCTAssertTrue(tests.output.contains("Executed 1 test, with 0 failures"), tests.output)

        // 2. The README's example, run where its coin.ogg is.
        let place = scratch.appending(path: "run")
        try FileManager.default.createDirectory(at: place, withIntermediateDirectories: true)
        try writeCoin(to: place.appending(path: "coin.ogg"))
        let readme = try playOnACard(products.appending(path: "Game"), [], in: place)
        XCTAssertEqual(readme.run.status, 0, readme.run.output)
        XCTAssertGreaterThanOrEqual(readme.onsets, 1, readme.run.output)
        XCTAssertGreaterThan(readme.peak, 0.1, readme.run.output)
        XCTAssertTrue(readme.run.output.contains("finished") || readme.run.output.contains("stopped"), readme.run.output)

        // 2b. The same where ALSA's "default" goes to PipeWire and no PipeWire runs (a desktop
        // before its sound server, a kiosk at boot): it runs on the clock, says why once, exits 0.
        let noServer = try runWithoutASoundServer(products.appending(path: "Game"), in: place)
        XCTAssertEqual(noServer.status, 0, noServer.output)
        XCTAssertEqual(noServer.output.components(separatedBy: "no output device yet").count - 1, 1, noServer.output)
        XCTAssertTrue(noServer.output.contains("finished") || noServer.output.contains("stopped"), noServer.output)

        // 3. A binary copied away: no checkout, no Sounds directory, no theme installed in reach.
        let away = scratch.appending(path: "away")
        try FileManager.default.createDirectory(at: away, withIntermediateDirectories: true)
        let copied = away.appending(path: "PlaySounds")
        try FileManager.default.copyItem(at: products.appending(path: "PlaySounds"), to: copied)
        let tock = try playOnACard(copied, ["tock"], in: away)
        XCTAssertEqual(tock.run.status, 0, tock.run.output)
        XCTAssertEqual(tock.run.output, "1000 tock /dev/null/built-in/sfx/stereo/tock.wav\n")
        XCTAssertEqual(tock.onsets, 1)
        XCTAssertGreaterThan(tock.peak, 0.1)
        print("the copied PlaySounds played tock: recording peak \(tock.peak)")

        let all = try playOnACard(copied, [], in: away)
        XCTAssertEqual(all.run.status, 0, all.run.output)
        let lines = all.run.output.split(separator: "\n")
        XCTAssertEqual(lines.count, 29, all.run.output)
        XCTAssertTrue(lines.allSatisfy { $0.contains(" /dev/null/built-in/sfx/stereo/") }, all.run.output)
        XCTAssertGreaterThan(all.peak, 0.1)
    }

    // MARK: Helpers

    /// `swift` from PATH, or the toolchain's.
    static var swift: URL {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/swift" }
            .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/opt/swift/usr/bin/swift"
        return URL(filePath: path)
    }

    /// The environment of a program with nothing of the user's or the system's sounds in reach:
    /// an empty home, empty XDG directories, no SFX_SOUNDS_DIR, no virtual card of the caller's.
    func isolated() throws -> [String: String] {
        let home = scratch.appending(path: "home")
        let empty = scratch.appending(path: "empty")
        for directory in [home, empty] { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }
        var environment = ProcessInfo.processInfo.environment
        for key in ["SFX_SOUNDS_DIR", "SFXCARD_PLUGIN", "ALSA_CONFIG_PATH", "XDG_RUNTIME_DIR"] { environment[key] = nil }
        environment["HOME"] = home.path
        environment["XDG_DATA_HOME"] = home.appending(path: ".local/share").path
        environment["XDG_DATA_DIRS"] = empty.path
        environment["XDG_STATE_HOME"] = home.appending(path: ".local/state").path
        environment["XDG_CONFIG_HOME"] = home.appending(path: ".config").path
        environment["TMPDIR"] = scratch.path
        return environment
    }

    /// Runs `program` on a fresh virtual card in an isolated environment; the card's onsets and
    /// the peak of its last recording.
    func playOnACard(_ program: URL, _ arguments: [String], in directory: URL) throws -> (run: Run, onsets: Int, peak: Float) {
        let card = try VirtualCard(directory: scratch.appending(path: "card-\(UUID().uuidString)"))
        defer { try? card.remove() }
        var environment = try isolated()
        environment["ALSA_CONFIG_PATH"] = card.configURL.path
        let result = try run(program, arguments, in: directory, environment: environment)
        let onsets = try card.events().filter { if case .onset = $0.kind { true } else { false } }.count
        let peak = try card.recordingURLs().last.map { try WAVAudio(contentsOf: $0).samples.map(abs).max() ?? 0 } ?? 0
        return (result, onsets, peak)
    }

    /// Runs `program` in an isolated environment whose ALSA "default" is the `pipewire` plugin,
    /// with an empty private XDG_RUNTIME_DIR: no PipeWire server to reach.
    func runWithoutASoundServer(_ program: URL, in directory: URL) throws -> Run {
        let runtime = scratch.appending(path: "runtime-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let config = scratch.appending(path: "asound-pipewire.conf")
        try "pcm.!default { type pipewire }\nctl.!default { type pipewire }\n".write(to: config, atomically: true, encoding: .utf8)
        var environment = try isolated()
        environment["ALSA_CONFIG_PATH"] = config.path
        environment["XDG_RUNTIME_DIR"] = runtime.path
        return try run(program, [], in: directory, environment: environment)
    }

    /// A short Ogg Vorbis coin: two square-ish notes.
    func writeCoin(to url: URL) throws {
        let rate = 48_000
        let samples = (0..<rate / 4).map { i -> Float in
            let frequency = i < rate / 16 ? 988.0 : 1319.0
            let envelope = Float(1 - Double(i) / Double(rate / 4))
            return 0.5 * envelope * Float(sin(2 * Double.pi * frequency * Double(i) / Double(rate)))
        }
        try AudioFileWriter.write(samples, sampleRate: rate, channels: 1, to: url, as: .oggVorbis)
    }

    struct Run {
        let status: Int32
        let output: String
    }

    /// Runs `program` to its end (or kills it after `timeout` seconds). `output` is its standard
    /// output, followed by its standard error for `swift` and test bundles; other programs'
    /// standard error is printed.
    func run(_ program: URL, _ arguments: [String], in directory: URL, environment: [String: String]? = nil,
             timeout: Double = 120) throws -> Run {
        let run = try runToEnd(program, arguments, environment: environment, directory: directory,
                               errors: .captured, capture: .files(in: scratch), timeout: timeout)
        if run.timedOut { XCTFail("\(program.lastPathComponent) \(arguments.joined(separator: " ")) ran longer than \(Int(timeout)) s") }
        let output = run.output, stderr = run.errors
        if !stderr.isEmpty { print("\(program.lastPathComponent) \(arguments.joined(separator: " ")) stderr:\n\(stderr)") }
        return Run(status: run.status, output: program == Self.swift || program.pathExtension == "xctest" ? output + stderr : output)
    }
}
