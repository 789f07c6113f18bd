import Foundation
import Glibc
import SFX

enum UploadCommand: Subcommand {
    static let spec = CommandSpec(
        name: "upload", abstract: "Send a sound file to an HTTP(S) server (PUT, or a multipart POST with --form).",
        discussion: """
        The Content-Type follows the file's content, not its name, as `sfx info` shows it: audio/mp4 \
        for M4A, audio/ogg for Opus and Vorbis, audio/mpeg for MP3, audio/flac, audio/wav. On a \
        terminal a progress bar shows on standard error. Any answer from 400 up is printed in one \
        line with the server's words, and the exit status is 1. With nothing sent or received for \
        the timeout (30 s, or [http] timeout in sfx.conf), the upload fails, saying so.
        """,
        examples: ["sfx upload memo.m4a https://example.com/memos/memo.m4a",
                   "sfx upload memo.opus https://example.com/upload --form audio"],
        positionals: [PositionalSpec(name: "FILE", help: "The file to send.", min: 1, max: 1),
                      PositionalSpec(name: "URL", help: "Where to send it (http:// or https://).", min: 1, max: 1)],
        options: [form, timeout, quiet])

    static let form = OptionSpec.option("form", value: "FIELD", help: "POST multipart/form-data with the file in FIELD (default: PUT the file's bytes).")
    static let quiet = OptionSpec.flag("quiet", short: "q", help: "Print nothing on success.")
    static let timeout = OptionSpec.option("timeout", value: "SECONDS",
                                           help: "Give up after SECONDS with nothing sent or received (default 30, or [http] timeout in sfx.conf).")

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let file = URL(filePath: arguments.positionals[0])
        guard let destination = URL(string: arguments.positionals[1]) else {
            throw UsageError(message: "invalid URL '\(arguments.positionals[1])'", command: spec)
        }
        let method: Upload.Method = arguments.value(form).map { .multipart(field: $0) } ?? .put
        var seconds = try CommandSettings.load(needing: ["timeout"], quiet: arguments.flag(quiet)).httpTimeout ?? Upload.defaultTimeout
        if let text = arguments.value(timeout) {
            guard let value = Double(text), value > 0, value.isFinite, value <= 86_400 else {
                throw UsageError(message: "--timeout \(text) is not a number of seconds; give one from 0.1 to 86400, e.g. --timeout 60", command: spec)
            }
            seconds = value
        }
        let limit = seconds
        let terminal = isatty(STDERR_FILENO) == 1 && !arguments.flag(quiet)
        let progress: (@Sendable (Int64, Int64) -> Void)? = terminal ? showProgress : nil
        let outcome = Blocking.run { () async -> Result<Upload.Response, UploadError> in
            do throws(UploadError) {
                return .success(try await Upload.send(file, to: destination, method: method, timeout: limit, progress: progress))
            } catch {
                return .failure(error)
            }
        }
        if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
        switch outcome {
        case .success(let response):
            if !arguments.flag(quiet) { print("uploaded \(file.path) as \(response.contentType): \(response.status)") }
            return 0
        case .failure(let error):
            printError("\(error)")
            return 1
        }
    }
}

/// "[##########....................] 33%  12000/36000 bytes" on standard error, redrawn in place.
@Sendable
private func showProgress(_ sent: Int64, _ total: Int64) {
    let fraction = total > 0 ? Double(sent) / Double(total) : 0
    let filled = Int(fraction * 30)
    let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled)
    FileHandle.standardError.write(Data("\r\u{1B}[K[\(bar)] \(Int(fraction * 100))%  \(sent)/\(total) bytes".utf8))
}

/// Runs async work to its end from synchronous code (the command's main thread).
enum Blocking {
    static func run<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task {
            box.value = await work()
            done.signal()
        }
        done.wait()
        return box.value!
    }
}

private final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}
