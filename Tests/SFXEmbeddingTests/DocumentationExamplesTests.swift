import Foundation
import SFXTestSupport
import XCTest

/// Every ```swift and ```c block of README.md and docs/*.md is compiled as pasted, against this
/// build, so that an example that drifts from the API fails here rather than for a reader.
///
/// A block is a whole file unless the line right before its fence says otherwise:
///
///     <!-- example: manifest -->                 a Package.swift: `swift package dump-package` evaluates it
///     <!-- example: prelude: CODE -->            CODE (Swift, may span lines) is compiled first, in the same file
///     <!-- example: not compiled: WHY -->        a deliberate fragment; WHY must be given
///
/// A Swift block is compiled as a program's main.swift (swiftc -c, Swift 6, warnings as errors)
/// with this build's modules; a C block with `cc -std=c99 -Wall -Wextra -Werror` against
/// `sfx.h`, linked with this build's libSFXC.so (libsfx.so as installed) and -lm.
final class DocumentationExamplesTests: XCTestCase {
    static let checkout = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    struct Example: CustomStringConvertible {
        enum Kind: Equatable {
            case file
            case manifest
            case prelude(String)
            case notCompiled(why: String)
        }
        let path: String
        let line: Int
        let language: String
        let code: String
        let kind: Kind
        var description: String { "\(path):\(line) (```\(language))" }
    }

    struct Malformed: Error, CustomStringConvertible { let description: String }

    /// The documents whose examples are compiled.
    static func documents() throws -> [URL] {
        let docs = checkout.appending(path: "docs")
        let names = try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }.sorted()
        return [checkout.appending(path: "README.md")] + names.map { docs.appending(path: $0) }
    }

    /// The ```swift and ```c blocks of a Markdown text, with the marker before each.
    static func examples(in text: String, path: String) throws -> [Example] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var examples: [Example] = []
        var index = 0
        while index < lines.count {
            let fence = lines[index].trimmingCharacters(in: .whitespaces)
            guard fence == "```swift" || fence == "```c" else { index += 1; continue }
            let indent = lines[index].prefix { $0 == " " }.count
            let language = String(fence.dropFirst(3))
            // The marker: an HTML comment ending on the line right before the fence.
            var kind = Example.Kind.file
            if index > 0, lines[index - 1].trimmingCharacters(in: .whitespaces).hasSuffix("-->") {
                var start = index - 1
                while start > 0, !lines[start].contains("<!--") { start -= 1 }
                let comment = lines[start...(index - 1)].joined(separator: "\n")
                kind = try marker(comment, at: "\(path):\(start + 1)")
            }
            var body: [String] = []
            index += 1
            while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces) != "```" {
                body.append(String(lines[index].dropFirst(min(indent, lines[index].prefix { $0 == " " }.count))))
                index += 1
            }
            guard index < lines.count else { throw Malformed(description: "\(path): a ```\(language) block is never closed") }
            examples.append(Example(path: path, line: index - body.count, language: language,
                                    code: body.joined(separator: "\n") + "\n", kind: kind))
            index += 1
        }
        return examples
    }

    static func marker(_ comment: String, at place: String) throws -> Example.Kind {
        var text = comment.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("<!--"), text.hasSuffix("-->") else { throw Malformed(description: "\(place): not an HTML comment: \(comment)") }
        text = String(text.dropFirst(4).dropLast(3)).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("example:") else { return .file }   // another comment: the block is a file
        text = String(text.dropFirst("example:".count)).trimmingCharacters(in: .whitespaces)
        if text == "manifest" { return .manifest }
        for (prefix, make) in [("prelude:", { Example.Kind.prelude($0) }), ("not compiled:", { Example.Kind.notCompiled(why: $0) })] as [(String, (String) -> Example.Kind)]
        where text.hasPrefix(prefix) {
            let rest = String(text.dropFirst(prefix.count)).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !rest.isEmpty else { throw Malformed(description: "\(place): `example: \(prefix)` needs what follows it") }
            return make(rest)
        }
        throw Malformed(description: "\(place): unknown marker `example: \(text)`; use manifest, prelude: CODE or not compiled: WHY")
    }

    static func allExamples() throws -> [Example] {
        try documents().flatMap { url in
            try examples(in: String(contentsOf: url, encoding: .utf8), path: String(url.path.dropFirst(checkout.path.count + 1)))
        }
    }

    // MARK: The tests

    func testTheExamplesAreFoundAndEachFragmentSaysWhy() throws {
        let examples = try Self.allExamples()
        // The README teaches with one program in each language; the manual as a whole has the rest.
        XCTAssertGreaterThanOrEqual(examples.filter { $0.path == "README.md" && $0.language == "swift" && $0.kind != .manifest }.count, 1, "\(examples)")
        XCTAssertGreaterThanOrEqual(examples.filter { $0.path == "README.md" && $0.language == "c" }.count, 1, "\(examples)")
        XCTAssertGreaterThanOrEqual(examples.filter { $0.language == "swift" && $0.kind != .manifest }.count, 6, "\(examples)")
        XCTAssertEqual(examples.filter { $0.kind == .manifest }.map(\.path), ["README.md"], "the README's Package.swift")
        // Every page of the manual is in its index, docs/README.md.
        let index = try String(contentsOf: Self.checkout.appending(path: "docs/README.md"), encoding: .utf8)
        for page in try Self.documents().map(\.lastPathComponent) where page != "README.md" {
            XCTAssertTrue(index.contains("](\(page))"), "docs/README.md does not list \(page)")
        }
        for example in examples {
            if case .notCompiled(let why) = example.kind { print("not compiled: \(example): \(why)") }
        }
        // The parser itself: a marker, a prelude over two lines, an unknown marker.
        let parsed = try Self.examples(in: "<!-- example: prelude: import SFX\n     let x = 1 -->\n```swift\nprint(x)\n```\n", path: "t.md")
        XCTAssertEqual(parsed.first?.kind, .prelude("import SFX\n     let x = 1"))
        XCTAssertEqual(parsed.first?.code, "print(x)\n")
        XCTAssertThrowsError(try Self.examples(in: "<!-- example: skip -->\n```swift\n```\n", path: "t.md"))
        XCTAssertThrowsError(try Self.examples(in: "<!-- example: not compiled: -->\n```c\n```\n", path: "t.md"))
    }

    func testTheSwiftExamplesCompileAsPasted() throws {
        let examples = try Self.allExamples().filter { $0.language == "swift" && $0.kind != .manifest }
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        var compiled = 0
        for (number, example) in examples.enumerated() {
            let source: String
            switch example.kind {
            case .file: source = example.code
            case .prelude(let prelude): source = prelude + "\n" + example.code
            case .notCompiled, .manifest: continue
            }
            let directory = scratch.appending(path: "swift-\(number)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
            let file = directory.appending(path: "main.swift")
            try source.write(to: file, atomically: false, encoding: .utf8)
            let result = try Self.run(Self.tool("swiftc"), ["-c", "-swift-version", "6", "-warnings-as-errors", "-module-name", "Example",
                                                            "-o", directory.appending(path: "main.o").path] + Self.moduleFlags() + [file.path])
            XCTAssertEqual(result.status, 0, "\(example) does not compile as pasted:\n\(result.output.prefix(3000))")
            compiled += 1
        }
        print("\(compiled) Swift examples compiled")
    }

    func testTheManifestExamplesEvaluate() throws {
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        for (number, example) in try Self.allExamples().filter({ $0.kind == .manifest }).enumerated() {
            let package = scratch.appending(path: "manifest-\(number)/Game")
            try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
            try example.code.write(to: package.appending(path: "Package.swift"), atomically: false, encoding: .utf8)
            var environment = ProcessInfo.processInfo.environment
            environment["TMPDIR"] = scratch.path
            let result = try Self.run(Self.tool("swift"), ["package", "--package-path", package.path, "dump-package"], environment: environment)
            XCTAssertEqual(result.status, 0, "\(example) is not a manifest SwiftPM evaluates:\n\(result.output.prefix(3000))")
        }
    }

    func testTheCExamplesCompileAndLinkAgainstTheLibrary() throws {
        let library = Self.buildDirectory.appending(path: "libSFXC.so")
        XCTAssertTrue(FileManager.default.fileExists(atPath: library.path), "\(library.path) is missing: build it (swift build --build-tests)")
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        for (number, example) in try Self.allExamples().filter({ $0.language == "c" }).enumerated() {
            if case .notCompiled = example.kind { continue }
            let file = scratch.appending(path: "example-\(number).c")
            try example.code.write(to: file, atomically: false, encoding: .utf8)
            let result = try Self.run(URL(filePath: "/usr/bin/cc"), ["-std=c99", "-Wall", "-Wextra", "-Werror",
                                                                     "-I", Self.checkout.appending(path: "Sources/CSFXAPI/include").path,
                                                                     file.path, "-L", Self.buildDirectory.path, "-lSFXC", "-lm",
                                                                     "-o", scratch.appending(path: "example-\(number)").path])
            XCTAssertEqual(result.status, 0, "\(example) does not compile and link as pasted:\n\(result.output.prefix(3000))")
        }
    }

    /// The README and the manual quote the package lists that script/packages prints from
    /// script/common.sh (the README what building needs, docs/library.md what a binary needs).
    func testTheReadmesPackageListsAreTheScripts() throws {
        let readme = try Self.documents().map { try String(contentsOf: $0, encoding: .utf8) }.joined(separator: "\n")
            .replacingOccurrences(of: "\n", with: " ")
        for option in ["--build", "--run", "--ffmpeg"] {
            let printed = try Self.run(Self.checkout.appending(path: "script/packages"), [option])
            XCTAssertEqual(printed.status, 0, printed.output)
            let list = printed.output.trimmingCharacters(in: .whitespacesAndNewlines)
            XCTAssertFalse(list.isEmpty)
            XCTAssertTrue(readme.contains("`script/packages \(option)`"), "the README or the manual names script/packages \(option)")
            XCTAssertTrue(readme.contains("`\(list)`"), "the documentation's list for \(option) is not what script/packages prints: `\(list)`")
        }
        let all = try Self.run(Self.checkout.appending(path: "script/packages"), []).output.split(separator: " ").map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let build = try Self.run(Self.checkout.appending(path: "script/packages"), ["--build"]).output.split(separator: " ").map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        XCTAssertTrue(Set(build).isSubset(of: Set(all)), "script/play installs what building needs")
    }

    // MARK: Helpers

    /// Where SwiftPM put this test bundle, the modules and libSFXC.so.
    static var buildDirectory: URL { BuildProducts.directory }

    /// The modules of this build, as SwiftPM passes them to its own targets: the Swift modules,
    /// every C target's module map and include directory.
    static func moduleFlags() throws -> [String] {
        let build = buildDirectory
        var flags = ["-I", build.appending(path: "Modules").path]
        let fileManager = FileManager.default
        for name in try fileManager.contentsOfDirectory(atPath: build.path).sorted() where name.hasSuffix(".build") {
            let map = build.appending(path: "\(name)/module.modulemap")
            if fileManager.fileExists(atPath: map.path) { flags += ["-Xcc", "-fmodule-map-file=\(map.path)"] }
        }
        let sources = checkout.appending(path: "Sources")
        for name in try fileManager.contentsOfDirectory(atPath: sources.path).sorted() {
            let map = sources.appending(path: "\(name)/module.modulemap")
            if fileManager.fileExists(atPath: map.path) { flags += ["-Xcc", "-fmodule-map-file=\(map.path)"] }
            let include = sources.appending(path: "\(name)/include")
            if fileManager.fileExists(atPath: include.path) { flags += ["-Xcc", "-I", "-Xcc", include.path] }
        }
        return flags
    }

    /// `swift` or `swiftc` beside the `swift` on PATH, or the toolchain's.
    static func tool(_ name: String) -> URL {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/opt/swift/usr/bin"]
        let path = directories.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/opt/swift/usr/bin/\(name)"
        return URL(filePath: path)
    }

    /// A private scratch directory (mkdtemp, 0700).
    static func scratch() throws -> URL {
        var template = Array((FileManager.default.temporaryDirectory.path + "/sfx-examples-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw Malformed(description: "mkdtemp failed: \(String(cString: strerror(errno)))") }
        return URL(filePath: String(cString: made))
    }

    static func run(_ program: URL, _ arguments: [String], environment: [String: String]? = nil) throws -> (status: Int32, output: String) {
        let run = try runToEnd(program, arguments, environment: environment, errors: .merged)
        return (run.status, run.output)
    }
}
