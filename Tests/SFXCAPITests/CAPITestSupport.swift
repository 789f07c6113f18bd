import Foundation
import SFXTestSupport
import XCTest
import SFXCardSupport

/// One install of this build for the whole test class: `script/install --from <this build>
/// --prefix <private temporary directory>/prefix`, the way a user installs a release build but
/// without building again (about a second). Removed when the class's tests are done.
enum Installed {
    static let checkout = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// The directory of the running test binary: where `swift build` put sfx, libSFXC.so and libsfxcard.so.
    static let products = URL(filePath: VirtualCard.currentExecutable()!).deletingLastPathComponent()

    nonisolated(unsafe) static var scratch: URL?

    /// A fresh private directory for the test class (0700, removed by `removeScratch`).
    static func makeScratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appending(path: "sfx-capi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        scratch = url
        return url
    }

    static func removeScratch() {
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
        scratch = nil
    }
}

struct Run {
    var status: Int32
    var output: String
    var errors: String
}

/// Runs `command` with bash in `directory`, with `environment` added to this process's.
func shell(_ command: String, in directory: URL, environment: [String: String] = [:], timeout: Double = 120,
           file: StaticString = #filePath, line: UInt = #line) throws -> Run {
    var merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    merged.removeValue(forKey: "SFX_SOUNDS_DIR")
    merged.removeValue(forKey: "SFXCARD_PLUGIN")
    let run = try runToEnd(URL(filePath: "/bin/bash"), ["-c", command], environment: merged, directory: directory,
                           errors: .captured, capture: .files(in: directory), timeout: timeout)
    if run.timedOut { XCTFail("\(command) ran longer than \(Int(timeout)) s", file: file, line: line) }
    return Run(status: run.status, output: run.output, errors: run.errors)
}

/// Single-quoted for bash.
func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }

/// Every file, link and directory under `root`, relative to it, sorted.
func tree(_ root: URL) -> [String] {
    guard let walker = FileManager.default.enumerator(atPath: root.path) else { return [] }
    return (walker.allObjects as? [String] ?? []).sorted()
}
