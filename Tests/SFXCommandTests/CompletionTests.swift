import Foundation
import XCTest
import SFXMedia

/// The scripts of `sfx completion bash|zsh`, driven in the shells themselves: bash calls the
/// completion function as `complete -F` does (COMP_WORDS, COMP_CWORD), zsh completes a line
/// typed on a pseudo-terminal (zpty) with every match the completion system offered recorded.
/// The sfx on PATH is the one built here, so the names come from its `sfx list`, `sfx devices`
/// and `sfx recordings`.
final class CompletionTests: CommandTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        for shell in ["/bin/bash", "/bin/zsh"] {
            XCTAssertTrue(FileManager.default.isExecutableFile(atPath: shell), "\(shell) is missing: script/test installs it")
        }
        // A sound file and a directory here, and a saved recording.
        try Data("x".utf8).write(to: scratch.appending(path: "tofu.wav"))
        try FileManager.default.createDirectory(at: scratch.appending(path: "kit"), withIntermediateDirectories: true)
        let recordings = scratch.appending(path: "data/sfx/recordings")
        try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)
        try AudioFileWriter.write([Float](repeating: 0.1, count: 4_800), sampleRate: 48_000, channels: 1,
                                  to: recordings.appending(path: "take-1.wav"), as: .wavPCM16)
    }

    var shellEnvironment: [String: String?] {
        ["PATH": CommandTestCase.buildDirectory.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
         "XDG_DATA_HOME": scratch.appending(path: "data").path]
    }

    /// What bash's completion offers for `line` (its last word is the one completed; a line
    /// that ends in a space completes an empty word).
    func bash(_ line: String) throws -> [String] {
        let script = try sfx("completion", "bash")
        XCTAssertEqual(script.status, 0, script.stderr)
        try script.data.write(to: scratch.appending(path: "sfx.bash"))
        var words = line.split(separator: " ").map { "'\($0)'" }
        if line.hasSuffix(" ") { words.append("''") }
        let session = """
        source ./sfx.bash
        [[ "$(complete -p sfx)" == "complete -F _sfx sfx" ]] || { echo "not registered: $(complete -p sfx)"; exit 3; }
        COMP_WORDS=(\(words.joined(separator: " "))); COMP_CWORD=\(words.count - 1); _sfx
        printf '%s\\n' "${COMPREPLY[@]}"
        """
        let run = try sfx(["-c", session], program: URL(filePath: "/bin/bash"), environment: shellEnvironment)
        XCTAssertEqual(run.status, 0, "\(line): \(run.stdout) \(run.stderr)")
        return run.stdout.split(separator: "\n").map(String.init)
    }

    /// What zsh's completion system offers for `line`, typed in an interactive zsh with the
    /// generated _sfx in its fpath and compinit run, then Tab.
    func zsh(_ line: String) throws -> [String] {
        let functions = scratch.appending(path: "zfuncs")
        try FileManager.default.createDirectory(at: functions, withIntermediateDirectories: true)
        let script = try sfx("completion", "zsh")
        XCTAssertEqual(script.status, 0, script.stderr)
        try script.data.write(to: functions.appending(path: "_sfx"))
        let out = scratch.appending(path: "matches").path
        for file in [out, out + ".ready", out + ".done"] { try? FileManager.default.removeItem(atPath: file) }
        // compadd is wrapped to record what each call would add (-O), then adds it as usual.
        let driver = """
        zmodload zsh/zpty || exit 3
        zpty z zsh -f -i
        zpty -w z "LISTMAX=100000; fpath=(\(functions.path) \\$fpath); autoload -Uz compinit; compinit -u -D"
        zpty -w z 'compadd() { local -a __hits; builtin compadd -O __hits "$@"; print -rl -- $__hits >> \(out); builtin compadd "$@"; }'
        zpty -w z 'print ready > \(out).ready'
        for i in {1..200}; do [[ -e \(out).ready ]] && break; sleep 0.05; done
        [[ -e \(out).ready ]] || { print "zsh did not start"; exit 4; }
        zpty -w -n z $1$'\\t'
        # Keys are read in order: the line is cleared and the marker written once the completion is done.
        zpty -w z $'\\C-u'"print done > \(out).done"
        for i in {1..400}; do [[ -e \(out).done ]] && break; sleep 0.05; done
        [[ -e \(out).done ]] || { print "the completion did not finish"; exit 5; }
        zpty -d z
        """
        try Data(driver.utf8).write(to: scratch.appending(path: "drive.zsh"))
        let run = try sfx(["-f", scratch.appending(path: "drive.zsh").path, line], program: URL(filePath: "/bin/zsh"), environment: shellEnvironment)
        XCTAssertEqual(run.status, 0, "\(line): \(run.stdout) \(run.stderr)")
        let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        return Array(Set(text.split(separator: "\n").map(String.init))).sorted()
    }

    func testBashCompletesSoundNamesFilesDevicesAndRecordings() throws {
        XCTAssertEqual(try bash("sfx play to").sorted(), ["tock", "tofu.wav"])
        let everything = try bash("sfx play ")
        XCTAssertTrue(everything.contains("tock") && everything.contains("dialog-warning") && everything.contains("kit"), "\(everything)")
        XCTAssertFalse(everything.contains("NAME") || everything.contains("FILE"), "placeholders offered as words: \(everything)")
        XCTAssertEqual(try bash("sfx alert dialog-w"), ["dialog-warning"])
        XCTAssertEqual(try bash("sfx play --then to").sorted(), ["tock", "tofu.wav"])
        XCTAssertEqual(try bash("sfx play -i to"), ["tock"])
        XCTAssertEqual(try bash("sfx recordings "), ["rm"])
        XCTAssertEqual(try bash("sfx recordings rm "), ["take-1.wav"])
        let devices = try bash("sfx play -D ")
        XCTAssertTrue(devices.contains("default") && devices.contains("null"), "\(devices)")
        XCTAssertTrue(try bash("sfx record --device nu").contains("null"))
        XCTAssertEqual(try bash("sfx pl"), ["play"])
        XCTAssertEqual(try bash("sfx play --vol"), ["--volume"])
        XCTAssertEqual(try bash("sfx play --format S16").sorted(), ["S16_BE", "S16_LE"])
        XCTAssertEqual(try bash("sfx mute t"), ["toggle"])
        XCTAssertEqual(try bash("sfx load to"), ["tofu.wav"])
        XCTAssertEqual(try bash("sfx load ki"), ["kit"])
        XCTAssertEqual(try bash("sfx play --volume "), [])
    }

    func testZshCompletesSoundNamesFilesDevicesAndRecordings() throws {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: "/bin/zsh"))
        XCTAssertEqual(try zsh("sfx play to"), ["tock", "tofu.wav"])
        XCTAssertEqual(try zsh("sfx play --then to"), ["tock", "tofu.wav"])
        XCTAssertEqual(try zsh("sfx recordings "), ["rm"])
        XCTAssertEqual(try zsh("sfx recordings rm "), ["take-1.wav"])
        let devices = try zsh("sfx play -D ")
        XCTAssertTrue(devices.contains("default") && devices.contains("null"), "\(devices)")
        XCTAssertFalse(devices.contains("NAME"), "\(devices)")
        XCTAssertEqual(try zsh("sfx pl"), ["play"])
        XCTAssertEqual(try zsh("sfx mute to"), ["toggle"])
    }
}
