import CSFXProtocol
import Foundation
import Glibc
import SFXCardSupport
import SFXDaemon
import SFXTestSupport
import XCTest

/// A daemon (`sfx serve`) of the test's own, on a virtual card of its own, with its socket in a
/// private scratch directory (the test's XDG_RUNTIME_DIR) that is removed after each test.
class DaemonTestCase: XCTestCase {
    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// The directory of the test bundle, where SwiftPM also builds `sfx`, `sfx-front` and the card's plugin.
    static var buildDirectory: URL { BuildProducts.directory }

    static var program: URL { buildDirectory.appending(path: "sfx") }
    static var front: URL { buildDirectory.appending(path: "sfx-front") }

    var scratch: URL!
    var card: VirtualCard!
    var daemon: Process?
    var socketPath: String { scratch.appending(path: "sfx/sfx.sock").path }

    override func setUpWithError() throws {
        for program in [Self.program, Self.front] where !FileManager.default.isExecutableFile(atPath: program.path) {
            throw DaemonError("\(program.path) is missing: build it first (swift build --build-tests)")
        }
        scratch = try CardDirectory.makeTemporary(prefix: "sfx-daemon-test-")
        card = try VirtualCard(directory: scratch.appending(path: "card"))
    }

    override func tearDownWithError() throws {
        if let daemon, daemon.isRunning {
            daemon.terminate()
            daemon.waitUntilExit()
        }
        if let scratch {
            chmod(scratch.path, 0o700)
            try? FileManager.default.removeItem(at: scratch)
        }
    }

    /// The environment every program of the test gets: the scratch directory for runtime,
    /// state and settings, ALSA on the test's card.
    func environment(_ extra: [String: String?] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = scratch.path
        environment["XDG_STATE_HOME"] = scratch.appending(path: "state").path
        environment["XDG_CONFIG_HOME"] = scratch.appending(path: "config").path
        environment["XDG_DATA_DIRS"] = "/usr/share"
        environment["XDG_DATA_HOME"] = "/nonexistent"
        environment["ALSA_CONFIG_PATH"] = card.configURL.path
        environment["SFX_VIRTUAL_CARD"] = nil
        environment["SFX_SOCKET"] = nil
        environment["SFX_DAEMON_TRIED"] = nil
        environment["SFX_DAEMON_WHY"] = nil
        // A loaded test machine may take longer than a client's 50 ms to answer: generous here,
        // the default where a test measures it.
        environment["SFX_DAEMON_TIMEOUT"] = "2000"
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// Starts `sfx serve` on the card (or, `onCard` false, where it finds one itself) and waits
    /// until it answers.
    @discardableResult
    func startDaemon(_ arguments: [String] = [], onCard: Bool = true, environment extra: [String: String?] = [:],
                     log: URL? = nil) throws -> Process {
        let process = Process()
        process.executableURL = Self.program
        process.arguments = ["serve"] + (onCard ? ["--device", card.pcmName] : []) + ["-q"] + arguments
        process.environment = environment(extra)
        process.standardOutput = FileHandle.nullDevice
        if let log {
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            process.standardError = try FileHandle(forWritingTo: log)
        } else {
            process.standardError = FileHandle.nullDevice
        }
        try process.run()
        daemon = process
        for _ in 0..<400 {
            let fd = sfx_client_connect(socketPath, 0)
            if fd >= 0 {
                close(fd)
                return process
            }
            guard process.isRunning else { break }
            usleep(50_000)
        }
        throw DaemonError("sfx serve did not answer at \(socketPath) within 20 s (status \(process.isRunning ? "running" : "\(process.terminationStatus)"))")
    }

    /// SIGTERM, then its exit status.
    func stopDaemon() -> Int32 {
        guard let daemon else { return -1 }
        daemon.terminate()
        daemon.waitUntilExit()
        return daemon.terminationStatus
    }

    /// Runs a program (sfx unless told) with the test environment to its end.
    func run(_ arguments: [String], program: URL = DaemonTestCase.program, prefix: [String] = [],
             environment extra: [String: String?] = [:]) throws -> Run {
        let (executable, all) = prefix.isEmpty ? (program, arguments)
            : (URL(filePath: prefix[0]), Array(prefix.dropFirst()) + [program.path] + arguments)
        let run = try runToEnd(executable, all, environment: environment(extra), directory: scratch, input: .none, errors: .captured)
        return Run(status: run.status, stdout: run.output, stderr: run.errors)
    }

    /// The card's onsets (DAC times) and recordings, read once the daemon has closed the device.
    func onsets() throws -> [UInt64] {
        try card.events().compactMap { event in
            if case .onset(_, let dac, _) = event.kind { return dac }
            return nil
        }
    }

    /// A connection speaking the protocol directly.
    func connect() throws -> Int32 {
        let fd = sfx_client_connect(socketPath, 0)
        guard fd >= 0 else { throw DaemonError("cannot connect to \(socketPath): \(String(cString: strerror(-fd)))") }
        return fd
    }

    /// Sends one request and waits for its reply: (type, id, payload text).
    func request(_ fd: Int32, _ type: UInt8, id: UInt32, _ payload: String, pass: Int32 = -1) throws -> (type: UInt8, id: UInt32, text: String) {
        let bytes = Array(payload.utf8)
        let sent = bytes.withUnsafeBytes { sfx_send_frame(fd, type, id, $0.baseAddress, bytes.count, pass) }
        guard sent == 0 else { throw DaemonError("send failed: \(String(cString: strerror(-sent)))") }
        return try reply(fd)
    }

    func reply(_ fd: Int32, timeout: Int32 = 10_000) throws -> (type: UInt8, id: UInt32, text: String) {
        var header = sfx_frame_header()
        var buffer = [CChar](repeating: 0, count: 70_000)
        let got = sfx_receive_reply(fd, timeout, &header, &buffer, buffer.count)
        guard got == 0 else { throw DaemonError("no reply: \(String(cString: strerror(-got)))") }
        return (header.type, header.id, String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// A short stereo tone as a 32-bit float WAV file.
    func writeTone(_ name: String, frequency: Double = 880, seconds: Double = 0.1) throws -> URL {
        let frames = Int(48_000 * seconds)
        var samples: [Float] = []
        for i in 0..<frames {
            let value = Float(0.5 * sin(2 * Double.pi * frequency * Double(i) / 48_000))
            samples += [value, value]
        }
        let url = scratch.appending(path: name)
        try WAVAudio(sampleRate: 48_000, channels: 2, samples: samples).write(to: url)
        return url
    }
}
