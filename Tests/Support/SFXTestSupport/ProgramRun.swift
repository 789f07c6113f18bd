import Foundation
import Glibc

/// How a program run by `runToEnd` gets its standard input.
public enum ProgramInput {
    /// This process's own.
    case inherited
    /// /dev/null.
    case none
    /// These bytes, then end of file: written from another thread, so that a program that
    /// writes while it reads cannot fill its output pipe while the input waits.
    case data(Data)
}

/// What becomes of a program's standard output or error in `runToEnd`.
public enum ProgramOutputStream {
    /// This process's own.
    case inherited
    /// /dev/null.
    case discarded
    /// Kept in `ProgramRun.stdout` or `.stderr`.
    case captured
    /// Standard error only: into the same pipe or file as standard output (2>&1), so that
    /// `ProgramRun.stdout` holds both, interleaved as they were written.
    case merged
}

/// Where captured output waits until it is read.
public enum ProgramCapture {
    /// Pipes, read while the program runs, each on its own thread, so that neither fills while
    /// the other is read. The run ends when the program has exited and closed them.
    case pipes
    /// Files (0600) in this directory, removed afterwards: for programs that leave children
    /// behind that hold their output open (a build's servers), which a pipe would wait for.
    case files(in: URL)
}

/// A program's end, from `runToEnd`.
public struct ProgramRun {
    /// Its exit status, or the signal that ended it (see `reason`).
    public let status: Int32
    public let reason: Process.TerminationReason
    /// Its standard output (with standard error too, when merged), empty unless captured.
    public let stdout: Data
    /// Its standard error, empty unless captured.
    public let stderr: Data
    /// The timeout passed and the program was sent SIGTERM.
    public let timedOut: Bool

    /// `stdout` as text (invalid UTF-8 replaced).
    public var output: String { String(decoding: stdout, as: UTF8.self) }
    /// `stderr` as text (invalid UTF-8 replaced).
    public var errors: String { String(decoding: stderr, as: UTF8.self) }
}

/// Runs `program` to its end: the test suites' one way of running a program and collecting
/// what it printed and how it ended.
///
/// - environment: the program's whole environment; nil: this process's.
/// - directory: its working directory; nil: this process's.
/// - timeout: seconds after which it is sent SIGTERM (then waited for; `timedOut` says so);
///   nil: no limit.
public func runToEnd(_ program: URL, _ arguments: [String], environment: [String: String]? = nil, directory: URL? = nil,
                     input: ProgramInput = .inherited, output: ProgramOutputStream = .captured,
                     errors: ProgramOutputStream = .inherited, capture: ProgramCapture = .pipes,
                     timeout: Double? = nil) throws -> ProgramRun {
    precondition(output != .merged, "only standard error merges into standard output")
    let process = Process()
    process.executableURL = program
    process.arguments = arguments
    if let environment { process.environment = environment }
    if let directory { process.currentDirectoryURL = directory }

    let inPipe = Pipe()
    switch input {
    case .inherited: break
    case .none: process.standardInput = FileHandle.nullDevice
    case .data: process.standardInput = inPipe
    }

    // Where each captured stream goes, and how it is read back once the program has ended.
    final class Collected: @unchecked Sendable { var data = Data() }
    let readers = DispatchGroup()
    var files: [URL] = []
    defer { for file in files { try? FileManager.default.removeItem(at: file) } }
    func sink(_ stream: ProgramOutputStream) throws -> (handle: Any?, read: () throws -> Data) {
        switch stream {
        case .inherited, .merged: return (nil, { Data() })
        case .discarded: return (FileHandle.nullDevice, { Data() })
        case .captured:
            switch capture {
            case .pipes:
                let pipe = Pipe()
                let collected = Collected()
                readers.enter()
                let reading = pipe.fileHandleForReading
                DispatchQueue.global().async {
                    collected.data = reading.readDataToEndOfFile()
                    readers.leave()
                }
                return (pipe, { collected.data })
            case .files(let directory):
                let file = directory.appending(path: ".output-\(UUID().uuidString)")
                files.append(file)
                _ = FileManager.default.createFile(atPath: file.path, contents: nil, attributes: [.posixPermissions: 0o600])
                return (try FileHandle(forWritingTo: file), { try Data(contentsOf: file) })
            }
        }
    }
    let out = try sink(output)
    let err = errors == .merged ? out : try sink(errors)
    if let handle = out.handle { process.standardOutput = handle }
    if let handle = err.handle { process.standardError = handle }

    try process.run()
    if case .data(let bytes) = input {
        let writer = inPipe.fileHandleForWriting
        DispatchQueue.global().async {
            writer.write(bytes)
            try? writer.close()
        }
    }

    var timedOut = false
    if let timeout {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            timedOut = true
            process.terminate()
        }
    }
    process.waitUntilExit()
    readers.wait()
    return ProgramRun(status: process.terminationStatus, reason: process.terminationReason,
                      stdout: try out.read(), stderr: errors == .merged ? Data() : try err.read(), timedOut: timedOut)
}
