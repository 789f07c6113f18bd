import Foundation
import Glibc
import SFXMedia
import SFXTestSupport
import XCTest

struct ProgramMissing: Error, CustomStringConvertible {
    let description: String
}

/// The `sfx` program as a user runs it, from a scratch directory of its own that is removed
/// after each test.
///
/// Every run gets the same environment (`environment(_:)`): the bundled and Debian themes only,
/// settings and state in the scratch directory, ALSA's own configuration, and the virtual card
/// even where there is a sound card (these tests must not play aloud), kept in the scratch
/// directory too.
class CommandTestCase: XCTestCase {
    struct Run {
        let status: Int32
        /// Standard output as bytes (`render -o -` writes audio there) and as text.
        let data: Data
        let stderr: String
        var stdout: String { String(decoding: data, as: UTF8.self) }

        /// Where the virtual card recorded, from the program's closing line.
        var recording: String? {
            stdout.split(separator: "\n").first { $0.contains("recorded what it played to") }
                .flatMap { $0.split(separator: " ").last.map(String.init) }
        }
    }

    /// The directory of the test bundle, where SwiftPM also builds `sfx` and the card's plugin.
    static var buildDirectory: URL { BuildProducts.directory }

    /// `.build/<configuration>/sfx`, beside this test bundle.
    static var program: URL { buildDirectory.appending(path: "sfx") }

    /// The front installed as bin/sfx (a C program), beside this test bundle.
    static var front: URL { buildDirectory.appending(path: "sfx-front") }
    /// The loudest sample of a sound file (a recording of the virtual card's).
    func peak(_ url: URL) throws -> Float {
        // The cue owns the samples: it must outlive the copy.
        let cue = try AudioDecoder(format: .standard).decode(contentsOf: url)
        return withExtendedLifetime(cue) { Array(cue.samples).map(abs).max() ?? 0 }
    }


    /// An ELF file's DT_NEEDED entries.
    static func neededLibraries(of file: URL) throws -> [String] { try ELFFile(file).neededLibraries() }

    var scratch: URL!

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.program.path) else {
            throw ProgramMissing(description: "\(Self.program.path) is missing: build it first (swift build --build-tests, as script/test does)")
        }
        scratch = FileManager.default.temporaryDirectory.appending(path: "sfx-command-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
    }

    /// This process's environment with the test settings, then `extra` on top (nil unsets).
    func environment(_ extra: [String: String?] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_DIRS"] = "/usr/share"
        // Absent, so there are no user sounds; inside the scratch, so that whatever a command
        // might make there is removed with it.
        environment["XDG_DATA_HOME"] = scratch.appending(path: "no-data-home").path
        environment["XDG_STATE_HOME"] = scratch.appending(path: "state").path
        environment["XDG_CONFIG_HOME"] = scratch.appending(path: "config").path
        environment["ALSA_CONFIG_PATH"] = nil
        environment["XDG_RUNTIME_DIR"] = scratch.path   // the virtual card's directory goes in the scratch
        environment["SFX_VIRTUAL_CARD"] = "1"
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// Starts `program` (sfx unless told) with the test environment and its output discarded,
    /// for tests that signal it or run many at once.
    func start(_ arguments: [String], program: URL = CommandTestCase.program,
               environment extra: [String: String?] = [:]) throws -> Process {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        process.environment = environment(extra)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Runs sfx in a mount namespace where `libraries`' files are empty, as if not installed.
    /// As root the namespace is unshare's own; otherwise it sits in a new user namespace with the
    /// caller mapped to root, where bind mounts are allowed too, so no test needs root for it.
    func sfx(hiding libraries: [String], _ arguments: [String]) throws -> Run {
        let paths = try libraries.map { name -> String in
            let candidates = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib", "/lib/x86_64-linux-gnu"]
                .map { "\($0)/\(name)" }
            let found = try XCTUnwrap(candidates.first { FileManager.default.fileExists(atPath: $0) }, "\(name) is not installed")
            return URL(filePath: found).resolvingSymlinksInPath().path
        }
        let script = paths.map { "mount --bind /dev/null '\($0)' || exit 97" }.joined(separator: "\n") + "\nexec \"$0\" \"$@\""
        let namespace = (getuid() == 0 ? [] : ["--user", "--map-root-user"]) + ["--mount", "--propagation", "private"]
        let run = try sfx(namespace + ["--", "/bin/sh", "-c", script, Self.program.path] + arguments,
                          program: URL(filePath: "/usr/bin/unshare"))
        XCTAssertNotEqual(run.status, 97, "could not hide \(libraries) in a mount namespace: \(run.stderr)")
        return run
    }

    func sfx(_ arguments: String..., input: Data? = nil) throws -> Run { try sfx(arguments, input: input) }

    /// Runs `program` (sfx unless told) in the scratch directory to its end, with `input` on its
    /// standard input (none when nil) and `extra` over the test environment.
    func sfx(_ arguments: [String], input: Data? = nil, program: URL = CommandTestCase.program,
             environment extra: [String: String?] = [:]) throws -> Run {
        let run = try runToEnd(program, arguments, environment: environment(extra), directory: scratch,
                               input: input.map { .data($0) } ?? .none, errors: .captured)
        return Run(status: run.status, data: run.stdout, stderr: run.errors)
    }
}
