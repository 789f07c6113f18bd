import FoundationEssentials
import SFXSystem
import Dispatch
import Glibc
import SFX

enum UploadCommand: Subcommand {
    static let spec = CommandSpec(
        name: "upload", abstract: "Send a sound file to an HTTP(S) server (PUT, or a multipart POST with --form).",
        discussion: """
        The Content-Type follows the file's content, not its name, as `sfx info` shows it: audio/mp4 \
        for M4A, audio/ogg for Opus and Vorbis, audio/mpeg for MP3, audio/flac, audio/wav; a \
        --header 'Content-Type: …' replaces it (for a presigned PUT signed with another type; with \
        --form, the file part's). --header @FILE reads header lines (Name: value) from FILE, so a \
        token is not on the command line for `ps` to show. --field adds form fields, in order, \
        before the file (S3 POST policies want the file last). Connection errors (refused, reset, \
        DNS, timed out), 5xx and 429 are tried again, 2 times unless --retries says otherwise, with \
        a growing wait (0.5 s, 1 s… at most 8 s, or the server's Retry-After); other 4xx never. On \
        a terminal a progress bar shows on standard error (from 0 again for each attempt). Any \
        answer from 400 up is printed in one line with the server's words, and the exit status is \
        1. With nothing sent or received for the timeout (30 s, or [http] timeout in sfx.conf), \
        an attempt fails, saying so.
        """,
        examples: ["sfx upload memo.m4a https://example.com/memos/memo.m4a",
                   "sfx upload memo.m4a \"$SIGNED_URL\" -H 'Content-Type: audio/x-m4a'",
                   "sfx upload a.opus https://example.com/up -H @auth.txt --form file -F key=a"],
        positionals: [PositionalSpec(name: "FILE", help: "The file to send.", min: 1, max: 1),
                      PositionalSpec(name: "URL", help: "Where to send it (http:// or https://).", min: 1, max: 1)],
        options: [form, header, field, retries, timeout, quiet])

    static let form = OptionSpec.option("form", value: "FIELD", help: "POST multipart/form-data with the file in FIELD (default: PUT the file's bytes).")
    static let header = OptionSpec.option("header", short: "H", value: "'NAME: VALUE' | @FILE", repeatable: true,
                                          help: "Send this header with every attempt; @FILE reads one header a line from FILE (blank lines and # comments skipped).")
    static let field = OptionSpec.option("field", short: "F", value: "NAME=VALUE", repeatable: true,
                                         help: "With --form: a plain form field sent before the file, in the order given.")
    static let retries = OptionSpec.option("retries", value: "N", help: "Try again up to N times after a connection error, 5xx or 429 (0 to 10, default 2).")
    static let quiet = OptionSpec.flag("quiet", short: "q", help: "Print nothing on success.")
    static let timeout = OptionSpec.option("timeout", value: "SECONDS",
                                           help: "Give up on an attempt after SECONDS with nothing sent or received (default 30, or [http] timeout in sfx.conf).")

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
        var retry = Upload.Retry.standard
        if let text = arguments.value(retries) {
            guard let value = Int(text), (0...10).contains(value) else {
                throw UsageError(message: "--retries \(text) is not a count from 0 to 10; give e.g. --retries 3 (0: one attempt only)", command: spec)
            }
            retry.attempts = value + 1
        }
        let headers = try headerValues(arguments.values(header))
        var fields: [(name: String, value: String)] = []
        for text in arguments.values(field) {
            guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
                throw UsageError(message: "--field '\(text)' is not NAME=VALUE; give e.g. --field token=abc123", command: spec)
            }
            fields.append((String(text[..<equals]), String(text[text.index(after: equals)...])))
        }
        if !fields.isEmpty, case .put = method {
            throw UsageError(message: "--field needs --form FIELD (a multipart POST); a PUT sends the file's bytes alone", command: spec)
        }
        let limit = seconds
        let attempts = retry
        let sentFields = fields
        let terminal = isatty(STDERR_FILENO) == 1 && !arguments.flag(quiet)
        let progress: (@Sendable (Int64, Int64) -> Void)? = terminal ? showProgress : nil
        let outcome = Blocking.run { () async -> Result<Upload.Response, UploadError> in
            do throws(UploadError) {
                return .success(try await Upload.send(file, to: destination, method: method, headers: headers, fields: sentFields,
                                                      retry: attempts, timeout: limit, progress: progress))
            } catch {
                return .failure(error)
            }
        }
        if terminal { writeToStandardError("\n") }
        switch outcome {
        case .success(let response):
            if !arguments.flag(quiet) { print("uploaded \(file.path) as \(response.contentType): \(response.status)") }
            return 0
        case .failure(let error):
            printError("\(error)")
            return 1
        }
    }

    /// The headers of `--header 'Name: value'` and `--header @FILE` (a line each, blank lines
    /// and lines starting with # skipped); the API checks names and values.
    static func headerValues(_ values: [String]) throws -> [String: String] {
        var headers: [String: String] = [:]
        func add(_ line: Substring, from origin: String) throws {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                throw UsageError(message: "\(origin) '\(line.prefix(80))' is not a header; give it as 'Name: value', e.g. 'Authorization: Bearer abc123'", command: spec)
            }
            let name = line[..<colon].trimmed
            let value = line[line.index(after: colon)...].trimmed
            if let same = headers.keys.first(where: { $0.lowercased() == name.lowercased() }) {
                throw UsageError(message: "--header \(name) is given twice (as \(same) too); give each header once", command: spec)
            }
            headers[name] = value
        }
        for value in values {
            guard value.hasPrefix("@") else {
                try add(Substring(value), from: "--header")
                continue
            }
            let path = String(value.dropFirst())
            let text = try readHeaderFile(path)
            for line in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
                let trimmed = line.trimmed
                if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
                try add(Substring(trimmed), from: "--header @\(path): line")
            }
        }
        return headers
    }

    /// The text of a header file: a regular file of at most 64 KiB, UTF-8.
    private static func readHeaderFile(_ path: String) throws -> String {
        func refused(_ why: String) -> UsageError {
            UsageError(message: "--header @\(path): \(why)", command: spec)
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw refused("cannot be read (\(String(cString: strerror(errno)))); check the path") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { throw refused("is not a regular file; give a file of header lines") }
        guard info.st_size <= 65_536 else { throw refused("is larger than 64 KiB; give a file of a few header lines") }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n == bytes.count else { throw refused("cannot be read whole; check the file") }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw refused("is not UTF-8 text; give header lines as text") }
        return text
    }
}

/// "[##########....................] 33%  12000/36000 bytes" on standard error, redrawn in place.
@Sendable
private func showProgress(_ sent: Int64, _ total: Int64) {
    let fraction = total > 0 ? Double(sent) / Double(total) : 0
    let filled = Int(fraction * 30)
    let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled)
    writeToStandardError("\r\u{1B}[K[\(bar)] \(Int(fraction * 100))%  \(sent)/\(total) bytes")
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
