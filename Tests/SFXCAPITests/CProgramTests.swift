import Foundation
import XCTest
import SFXCardSupport

/// The C API from C: programs built against an install of this build with
/// `cc … $(pkg-config --cflags --libs sfx)` and run on the virtual card (ALSA's default for them).
final class CProgramTests: XCTestCase {
    var scratch: URL!
    var prefix: URL!
    var card: VirtualCard!

    override func setUpWithError() throws {
        scratch = try Installed.makeScratch()
        prefix = scratch.appending(path: "prefix")
        let install = try shell("script/install --from \(quoted(Installed.products.path)) --prefix \(quoted(prefix.path))",
                                in: Installed.checkout)
        XCTAssertEqual(install.status, 0, install.output + install.errors)
        card = try VirtualCard(directory: scratch.appending(path: "card"))
    }

    override func tearDown() {
        card = nil
        Installed.removeScratch()
    }

    /// Builds `source` (a C file) with the installed sfx.pc into scratch/bin/`name`: a directory
    /// with no share/sfx beside it, so the library can only find its sounds beside itself.
    func build(_ source: URL, _ name: String, flags: String = "-std=c11 -Wall -Wextra -Werror") throws -> URL {
        let bin = scratch.appending(path: "bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let output = bin.appending(path: name)
        let run = try shell("cc \(flags) -o \(quoted(output.path)) \(quoted(source.path)) $(pkg-config --cflags --libs sfx) -lm",
                            in: scratch, environment: ["PKG_CONFIG_PATH": prefix.appending(path: "lib/pkgconfig").path])
        XCTAssertEqual(run.status, 0, "cc: \(run.output)\(run.errors)")
        return output
    }

    /// Runs `program` with ALSA's default on the card, and a settings file and mute flag of the
    /// test's own: the command backend appends each vibration's pattern to scratch/vibrations.
    func runOnCard(_ program: URL, arguments: [String] = []) throws -> Run {
        let config = scratch.appending(path: "config/sfx"), state = scratch.appending(path: "state")
        let buzz = scratch.appending(path: "buzz")
        if !FileManager.default.fileExists(atPath: buzz.path) {
            try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
            try "#!/bin/sh\necho \"$SFX_VIBRATE_PATTERN\" >> \"$(dirname \"$0\")/vibrations\"\n"
                .write(to: buzz, atomically: true, encoding: .utf8)
            XCTAssertEqual(chmod(buzz.path, 0o700), 0)
            try "[haptics]\nbackend = command\ncommand = \(buzz.path)\n"
                .write(to: config.appending(path: "sfx.conf"), atomically: true, encoding: .utf8)
        }
        return try shell(([program.path] + arguments).map(quoted).joined(separator: " "), in: scratch,
                         environment: ["ALSA_CONFIG_PATH": card.configURL.path,
                                       "XDG_CONFIG_HOME": scratch.appending(path: "config").path,
                                       "XDG_STATE_HOME": state.path,
                                       "SFX_TEST_VIBRATIONS": scratch.appending(path: "vibrations").path])
    }

    /// Each play the program announced ("trigger <ns>") reached the card's DAC after it and
    /// before the next one: one onset per play.
    func assertOnsets(match output: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let triggers = output.split(separator: "\n").compactMap { line -> UInt64? in
            guard line.hasPrefix("trigger ") else { return nil }
            return UInt64(line.dropFirst("trigger ".count))
        }
        let onsets = try card.events().compactMap { event -> UInt64? in
            if case .onset(_, let dac, _) = event.kind { return dac }
            return nil
        }
        XCTAssertEqual(onsets.count, triggers.count, "onsets \(onsets), triggers \(triggers)", file: file, line: line)
        for (index, (trigger, onset)) in zip(triggers, onsets).enumerated() {
            XCTAssertGreaterThan(onset, trigger, "sound \(index) reached the DAC before it was played", file: file, line: line)
            if index + 1 < triggers.count {
                XCTAssertLessThan(onset, triggers[index + 1], "sound \(index) reached the DAC after the next play", file: file, line: line)
            }
        }
    }

    // MARK: Tests

    func testTheCheckProgramPlaysCompletesAndGetsErrorsNotCrashes() throws {
        let program = try build(Installed.checkout.appending(path: "Tests/SFXCAPITests/C/capi_check.c"), "capi_check")
        let run = try runOnCard(program)
        XCTAssertEqual(run.status, 0, run.output + run.errors)
        XCTAssertTrue(run.output.hasSuffix("ok\n"), run.output)
        XCTAssertEqual(run.output.split(separator: "\n").filter { $0.hasPrefix("trigger ") }.count, 7, run.output)
        try assertOnsets(match: run.output)
        // The muted alert's buzz (the default 400 ms) and the pattern given, through the settings' command.
        let vibrations = try String(contentsOf: scratch.appending(path: "vibrations"), encoding: .utf8)
        XCTAssertEqual(vibrations, "400\n30,20,30\n")
    }

    /// The engine's clock and plays at a time from C (Tests/SFXCAPITests/C/clock_check.c): a
    /// play at a frame lands on it in the card's recording, when the clock said it would reach
    /// the DAC (within a period); one at a time past plays at once, after it.
    func testAPlayAtATimeFromCLandsOnItsFrame() throws {
        let program = try build(Installed.checkout.appending(path: "Tests/SFXCAPITests/C/clock_check.c"), "clock_check")
        let run = try runOnCard(program)
        XCTAssertEqual(run.status, 0, run.output + run.errors)
        XCTAssertTrue(run.output.hasSuffix("ok\n"), run.output)
        let lines = run.output.split(separator: "\n")
        let target = try XCTUnwrap(lines.first { $0.hasPrefix("target ") }).split(separator: " ").dropFirst().compactMap { Int($0) }
        let late = try XCTUnwrap(lines.first { $0.hasPrefix("late ") }.flatMap { Int($0.split(separator: " ")[1]) })
        XCTAssertEqual(target.count, 2)
        let onsets = try card.events().compactMap { event -> (frame: Int, dac: UInt64)? in
            if case .onset(let frame, let dac, _) = event.kind { return (frame, dac) }
            return nil
        }
        XCTAssertEqual(onsets.count, 2, "\(onsets)")
        // The engine opened its device once: its stream frame is the engine's frame.
        XCTAssertEqual(onsets.first?.frame, target[0], "on its frame")
        XCTAssertEqual(Double(onsets.first?.dac ?? 0), Double(target[1]), accuracy: 0.02e9, "when the clock said (a 20 ms period)")
        XCTAssertGreaterThan(onsets.last?.frame ?? 0, late, "a time past plays after it")
        let completion = try XCTUnwrap(lines.first { $0.hasPrefix("late completion ") })
        let frames = completion.split(separator: " ").dropFirst(4).first.flatMap { Int($0) }
        XCTAssertTrue(completion.hasPrefix("late completion 0 started "), String(completion))
        XCTAssertEqual(frames, (onsets.last?.frame ?? 0) - late, "the completion says how late, to the frame: \(completion)")
    }

    /// An alert's caption from C (Tests/SFXCAPITests/C/alert_check.c): heard when the card plays,
    /// felt (through the configured vibration command) with its Master switch off; the callback
    /// gets the words, the sound's name, what reached the person and its user data.
    func testAnAlertsCaptionReachesTheCCallback() throws {
        let program = try build(Installed.checkout.appending(path: "Tests/SFXCAPITests/C/alert_check.c"), "alert_check")
        let heard = try runOnCard(program)
        XCTAssertEqual(heard.status, 0, heard.output + heard.errors)
        XCTAssertTrue(heard.output.hasSuffix("ok\n"), heard.output)
        XCTAssertTrue(heard.output.contains("heard 1\n"), heard.output)
        XCTAssertTrue(heard.output.contains("notice The generic alert|bell|1|the user data\n"), heard.output)
        card.masterSwitch = false
        defer { card.masterSwitch = true }
        let felt = try runOnCard(program)
        XCTAssertEqual(felt.status, 0, felt.output + felt.errors)
        XCTAssertTrue(felt.output.contains("heard 2\n"), "vibrated instead: \(felt.output)")
        XCTAssertTrue(felt.output.contains("notice The generic alert|bell|2|the user data\n"), felt.output)
    }

    /// Sound banks from C (Tests/SFXCAPITests/C/bank_check.c): a bank's problem is one line with
    /// its file and line, an event plays once and heard, a second inside its cooldown is refused
    /// and never completed, a broken edit of the watched bank is refused and told by
    /// sfx_bank_status while the old bank plays on, a closed bank is an error.
    func testABanksEventPlaysFromC() throws {
        let tone = scratch.appending(path: "hit.wav")
        try WAVAudio(sampleRate: 48_000, channels: 1, samples: [Float](repeating: 0.4, count: 4_800)).write(to: tone)
        let good = scratch.appending(path: "game.json"), bad = scratch.appending(path: "broken.json")
        try #"{ "events": { "hit": { "sounds": ["hit.wav"], "cooldown": 1000 } } }"#.write(to: good, atomically: true, encoding: .utf8)
        try "{ \"events\": {\n  \"hit\": { \"sounds\": [\"hit.wav\"], \"pich\": [0, 1] } } }".write(to: bad, atomically: true, encoding: .utf8)
        let program = try build(Installed.checkout.appending(path: "Tests/SFXCAPITests/C/bank_check.c"), "bank_check")
        let run = try runOnCard(program, arguments: [good.path, bad.path])
        XCTAssertEqual(run.status, 0, run.output + run.errors)
        XCTAssertTrue(run.output.hasSuffix("ok\n"), run.output)
        XCTAssertTrue(run.output.contains("bad broken.json:2: event \"hit\": unknown key \"pich\""), run.output)
        XCTAssertTrue(run.output.contains("completion 0\n"), run.output)
        XCTAssertTrue(run.output.contains("refused game.json:2: event \"hit\": unknown key \"pich\""), run.output)
        let onsets = try card.events().filter { if case .onset = $0.kind { true } else { false } }
        XCTAssertEqual(onsets.count, 2, "one play heard, and one of the kept bank after the refused edit: \(onsets)")
    }

    /// The recorder from C (Tests/SFXCAPITests/C/record_check.c): a voice message with a prompt,
    /// a meter and a count-up, a second long, in M4A; one under its minimum discarded; one
    /// cancelled; the errors. The card's capture side plays a 440 Hz tone at -10 dBFS.
    func testRecordingFromC() throws {
        let tone = scratch.appending(path: "tone.wav")
        let samples = (0..<96_000).map { Float(0.316 * sin(2 * Double.pi * 440 * Double($0) / 48_000)) }
        try WAVAudio(sampleRate: 48_000, channels: 1, samples: samples).write(to: tone)
        card = try VirtualCard(directory: scratch.appending(path: "recording-card"), captureSource: tone, loopCapture: true)
        let program = try build(Installed.checkout.appending(path: "Tests/SFXCAPITests/C/record_check.c"), "record_check")
        let recordings = scratch.appending(path: "recordings")
        try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)
        let run = try shell("\(quoted(program.path)) \(quoted(recordings.path))", in: scratch,
                            environment: ["ALSA_CONFIG_PATH": card.configURL.path,
                                          "XDG_CONFIG_HOME": scratch.appending(path: "config").path])
        XCTAssertEqual(run.status, 0, run.output + run.errors)
        XCTAssertTrue(run.output.hasSuffix("ok\n"), run.output)
        let message = try Data(contentsOf: recordings.appending(path: "message.m4a"))
        XCTAssertEqual(String(decoding: message.dropFirst(4).prefix(4), as: UTF8.self), "ftyp", "an MPEG-4 file")
        // A standard M4A (the default): the top-level boxes have the moov before the mdat, no moof.
        var boxes: [String] = [], at = 0
        let bytes = [UInt8](message)
        while at + 8 <= bytes.count {
            let size = bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
            boxes.append(String(decoding: bytes[at + 4..<at + 8], as: UTF8.self))
            guard size >= 8 else { break }
            at += size
        }
        XCTAssertFalse(boxes.contains("moof"), "\(boxes)")
        XCTAssertLessThan(try XCTUnwrap(boxes.firstIndex(of: "moov")), try XCTUnwrap(boxes.firstIndex(of: "mdat")), "\(boxes)")
        let line = try XCTUnwrap(run.output.split(separator: "\n").first { $0.hasPrefix("message ") })
        let words = line.split(separator: " ")
        let seconds = try XCTUnwrap(Double(words[2])), peak = try XCTUnwrap(Double(words[6]))
        XCTAssertEqual(seconds, 1.0, accuracy: 0.15, "the duration stop gave: \(line)")
        XCTAssertEqual(peak, -10, accuracy: 1.5, "the meter saw the card's tone: \(line)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: recordings.path), ["message.m4a"], "nothing else kept")
        XCTAssertTrue(try card.events().contains { if case .onset = $0.kind { true } else { false } }, "the prompt played")
    }

    /// 16 threads × 10,000 plays through sfx_play at once (Tests/SFXCAPITests/C/completion_flood.c):
    /// every play accepted completes exactly once, none refused completes, and sfx_wait_idle
    /// then succeeds. Hundreds of accepted plays used to wait for sfx_close: a rewind restored a
    /// snapshot taken before their commands were applied, so their voices never existed. The
    /// longest wait is printed; it is not asserted (a loaded machine makes it what it is).
    func testSixteenThreadsOfPlaysAllComplete() throws {
        let program = try build(Installed.checkout.appending(path: "Tests/SFXCAPITests/C/completion_flood.c"), "completion_flood",
                                flags: "-std=c11 -O2 -Wall -Wextra -Werror -pthread")
        let run = try runOnCard(program)
        print("completion flood: \(run.output)", terminator: "")
        XCTAssertEqual(run.status, 0, run.output + run.errors)
        let fields = run.output.split(separator: " ").map(String.init)
        func value(_ name: String) -> Int? { fields.firstIndex(of: name).flatMap { Int(fields[$0 + 1].trimmingCharacters(in: .whitespacesAndNewlines)) } }
        XCTAssertEqual(value("completed"), value("accepted"), run.output)
        XCTAssertEqual((value("accepted") ?? 0) + (value("refused") ?? 0), 160_000, run.output)
        XCTAssertEqual(value("twice"), 0, run.output)
        XCTAssertEqual(value("refused-completed"), 0, run.output)
        XCTAssertEqual(value("idle"), 0, "sfx_wait_idle: \(run.output)")
        XCTAssertGreaterThan(value("accepted") ?? 0, 0, run.output)
    }

    /// The README's "From C" example, the first ```c block, as the README gives it.
    func testTheReadmesCExampleBuildsAndPlaysOnTheCard() throws {
        let readme = try String(contentsOf: Installed.checkout.appending(path: "README.md"), encoding: .utf8)
        let block = try XCTUnwrap(readme.components(separatedBy: "\n```c\n").dropFirst().first?.components(separatedBy: "\n```\n").first,
                                  "the README has no ```c block")
        let source = scratch.appending(path: "game.c")
        try (block + "\n").write(to: source, atomically: true, encoding: .utf8)
        let program = try build(source, "game", flags: "-std=c99 -Wall -Wextra -Werror")
        let run = try runOnCard(program)
        XCTAssertEqual(run.status, 0, run.output + run.errors)
        XCTAssertTrue(run.output.contains(": beep finished"), run.output)
        let onsets = try card.events().filter { if case .onset = $0.kind { true } else { false } }
        XCTAssertGreaterThanOrEqual(onsets.count, 1, "the example played nothing")
        let recording = try WAVAudio(contentsOf: card.recordingURL)
        XCTAssertGreaterThan(recording.samples.map(abs).max() ?? 0, 0.05)

        // Where ALSA's "default" goes to PipeWire and no PipeWire runs: it opens all the same,
        // says why once (on stderr), plays on the clock and exits 0.
        let runtime = scratch.appending(path: "runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let config = scratch.appending(path: "asound-pipewire.conf")
        try "pcm.!default { type pipewire }\nctl.!default { type pipewire }\n".write(to: config, atomically: true, encoding: .utf8)
        let noServer = try shell(quoted(program.path), in: scratch,
                                 environment: ["ALSA_CONFIG_PATH": config.path, "XDG_RUNTIME_DIR": runtime.path,
                                               "XDG_CONFIG_HOME": scratch.appending(path: "config").path])
        XCTAssertEqual(noServer.status, 0, noServer.output + noServer.errors)
        XCTAssertEqual(noServer.errors.components(separatedBy: "\n").filter { $0.hasPrefix("sfx: ") }.count, 1, noServer.errors)
        XCTAssertTrue(noServer.errors.contains("'default'"), noServer.errors)
        XCTAssertTrue(noServer.output.contains(": beep finished"), noServer.output)
    }

    /// The installed libsfx.so needs no Swift toolchain where it runs: it loads nothing but
    /// Debian's libraries and the C library (the Swift runtime and Foundation are in it, hidden),
    /// exports sfx.h's functions alone, and the README's example built against it plays on the
    /// card with /opt/swift hidden (a mount namespace with an empty tmpfs over it).
    func testTheInstalledLibraryRunsWithoutTheSwiftToolchain() throws {
        let library = prefix.appending(path: "lib/libsfx.so.0")
        let dynamic = try shell("readelf -d \(quoted(library.path))", in: scratch)
        XCTAssertEqual(dynamic.status, 0, dynamic.errors)
        let needed = dynamic.output.split(separator: "\n").filter { $0.contains("(NEEDED)") }
            .compactMap { $0.split(separator: "[").last?.split(separator: "]").first.map(String.init) }
        XCTAssertEqual(Set(needed), ["libasound.so.2", "libm.so.6", "libc.so.6", "ld-linux-x86-64.so.2"], dynamic.output)
        XCTAssertFalse(dynamic.output.contains("/opt/swift"), "no RUNPATH into the toolchain: \(dynamic.output)")
        let exported = try shell("nm -D --defined-only \(quoted(library.path))", in: scratch)
        let names = exported.output.split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) }
            .filter { !$0.hasPrefix("LIBSFX_") }.map { $0.components(separatedBy: "@")[0] }
        XCTAssertTrue(names.allSatisfy { $0.hasPrefix("sfx_") || $0 == "mpg123_new" }, "\(names.filter { !$0.hasPrefix("sfx_") })")

        let readme = try String(contentsOf: Installed.checkout.appending(path: "README.md"), encoding: .utf8)
        let block = try XCTUnwrap(readme.components(separatedBy: "\n```c\n").dropFirst().first?.components(separatedBy: "\n```\n").first)
        let source = scratch.appending(path: "game.c")
        try (block + "\n").write(to: source, atomically: true, encoding: .utf8)
        let program = try build(source, "game", flags: "-std=c99 -Wall -Wextra -Werror")
        let namespace = getuid() == 0 ? "" : "--user --map-root-user "
        let hidden = try shell("unshare \(namespace)--mount --propagation private -- /bin/sh -c "
                               + quoted("mount -t tmpfs none /opt/swift || exit 97; ls /opt/swift/usr >/dev/null 2>&1 && exit 98; exec \"$0\"")
                               + " " + quoted(program.path), in: scratch,
                               environment: ["ALSA_CONFIG_PATH": card.configURL.path,
                                             "XDG_CONFIG_HOME": scratch.appending(path: "config").path])
        if hidden.status == 97 || hidden.errors.contains("unshare: ") { throw XCTSkip("cannot hide /opt/swift in a mount namespace: \(hidden.errors)") }
        XCTAssertEqual(hidden.status, 0, hidden.output + hidden.errors)
        XCTAssertTrue(hidden.output.contains(": beep finished"), hidden.output + hidden.errors)
        let onsets = try card.events().filter { if case .onset = $0.kind { true } else { false } }
        XCTAssertGreaterThanOrEqual(onsets.count, 1, "the example played nothing with /opt/swift hidden")
    }

    /// Its runtime is its own: this test process (Swift, with the toolchain's shared runtime and
    /// Foundation) loads the installed libsfx.so.0 beside them and plays through it.
    func testTheLibraryLoadsBesideAnotherSwiftRuntime() throws {
        let path = prefix.appending(path: "lib/libsfx.so.0").path
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            return XCTFail("dlopen: \(String(cString: dlerror()))")
        }
        defer { dlclose(handle) }
        typealias Open = @convention(c) (UnsafeRawPointer?, UnsafeMutablePointer<OpaquePointer?>) -> Int32
        typealias SystemSound = @convention(c) (OpaquePointer?, UnsafePointer<CChar>, UnsafeMutablePointer<UInt32>) -> Int32
        typealias Play = @convention(c) (OpaquePointer?, UInt32, UnsafeRawPointer?, UnsafeMutablePointer<UInt64>?) -> Int32
        typealias WaitIdle = @convention(c) (OpaquePointer?, UInt32) -> Int32
        typealias Close = @convention(c) (OpaquePointer?) -> Int32
        func function<T>(_ name: String, _ type: T.Type) throws -> T {
            unsafeBitCast(try XCTUnwrap(dlsym(handle, name), "\(name) is not exported"), to: type)
        }
        let card = try VirtualCard(directory: scratch.appending(path: "in-process-card"))
        card.makeCurrent()
        var engine: OpaquePointer?
        XCTAssertEqual(try function("sfx_open", Open.self)(nil, &engine), 0)
        var tock: UInt32 = 0
        XCTAssertEqual(try function("sfx_system_sound", SystemSound.self)(engine, "tock", &tock), 0)
        XCTAssertEqual(try function("sfx_play", Play.self)(engine, tock, nil, nil), 0)
        XCTAssertEqual(try function("sfx_wait_idle", WaitIdle.self)(engine, 5000), 0)
        XCTAssertEqual(try function("sfx_close", Close.self)(engine), 0)
        XCTAssertEqual(try card.events().filter { if case .onset = $0.kind { true } else { false } }.count, 1)
        // This process's own runtime and Foundation still work after the library's ran.
        XCTAssertEqual(String(describing: [1, 2, 3].map { $0 * 2 }), "[2, 4, 6]")
        XCTAssertEqual(URL(filePath: "/tmp/a b").lastPathComponent, "a b")
    }

    /// A library loaded by a C program takes its sounds from `<prefix>/share/sfx/sounds` beside
    /// the library, not beside the program: a `.disabled` planted in the installed theme is seen.
    func testTheInstalledLibraryFindsTheSoundsBesideIt() throws {
        let source = scratch.appending(path: "which.c")
        try """
        #include <stdio.h>
        #include <sfx.h>
        int main(void) {
            sfx_engine *engine;
            if (sfx_open(NULL, &engine) != SFX_OK) { printf("open: %s\\n", sfx_last_error()); return 2; }
            sfx_sound sound;
            int status = sfx_system_sound(engine, "tock", &sound);
            printf("%d %s\\n", status, status == SFX_OK ? "" : sfx_last_error());
            sfx_close(engine);
            return 0;
        }
        """.write(to: source, atomically: true, encoding: .utf8)
        let program = try build(source, "which")
        let found = try runOnCard(program)
        XCTAssertEqual(found.output, "0 \n", found.errors)

        let disabled = prefix.appending(path: "share/sfx/sounds/sfx/stereo/tock.disabled")
        XCTAssertTrue(FileManager.default.createFile(atPath: disabled.path, contents: Data()))
        let run = try runOnCard(program)
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.output.hasPrefix("-5 "), "tock came from elsewhere than \(prefix.path)/share/sfx/sounds: \(run.output)")
        XCTAssertTrue(run.output.contains("disabled"), run.output)
    }

    /// sfx.h compiles alone as C99 and as C++17, warnings as errors, and its default
    /// initialisers, structs and enums are usable from both, its world functions as declared.
    func testTheHeaderCompilesAsC99AndCxx17WithWarningsAsErrors() throws {
        let source = """
        #include <sfx.h>
        static void done(sfx_voice voice, sfx_outcome outcome, const char *detail, void *user_data) {
            (void)voice; (void)outcome; (void)detail; (void)user_data;
        }
        int main(void) {
            sfx_play_options options = SFX_PLAY_OPTIONS_DEFAULT;
            sfx_config config = { 0, 0, 0, 0, 0, 0, SFX_NO_DEVICE_MIX, 0 };
            sfx_source source = SFX_SOURCE_DEFAULT;
            sfx_listener listener = { { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, -1 }, { 0, 1, 0 }, 1 };
            sfx_filter filter = { SFX_FILTER_LOWPASS, 1000, 0.7071f, 1 };
            int (*set_listener)(sfx_engine *, const sfx_listener *) = sfx_listener_set;
            int (*get_listener)(sfx_engine *, sfx_listener *) = sfx_listener_get;
            int (*set_world)(sfx_engine *, float, float, float) = sfx_world_set;
            void (*source_default)(sfx_source *) = sfx_source_default;
            int (*play_at)(sfx_engine *, sfx_sound, float, float, float, const sfx_play_options *, sfx_voice *) = sfx_play_at;
            int (*play_source)(sfx_engine *, sfx_sound, const sfx_source *, const sfx_play_options *, sfx_voice *) = sfx_play_source;
            int (*set_position)(sfx_engine *, sfx_voice, float, float, float) = sfx_voice_set_position;
            int (*set_velocity)(sfx_engine *, sfx_voice, float, float, float) = sfx_voice_set_velocity;
            int (*set_cone)(sfx_engine *, sfx_voice, float, float, float, float, float, float) = sfx_voice_set_cone;
            int (*set_relative)(sfx_engine *, sfx_voice, int) = sfx_voice_set_relative;
            int (*set_source)(sfx_engine *, sfx_voice, const sfx_source *) = sfx_voice_set_source;
            int (*set_filter)(sfx_engine *, sfx_voice, const sfx_filter *) = sfx_voice_set_filter;
            int (*set_group_filter)(sfx_engine *, uint32_t, const sfx_filter *) = sfx_group_set_filter;
            int (*hrtf_status)(sfx_engine *, char *, size_t) = sfx_hrtf_status;
            int (*set_reverb)(sfx_engine *, uint32_t, const char *, uint32_t) = sfx_effect_set_reverb;
            int (*set_echo)(sfx_engine *, uint32_t, float, float, float, float, uint32_t) = sfx_effect_set_echo;
            int (*clear_effect)(sfx_engine *, uint32_t) = sfx_effect_clear;
            int (*set_send)(sfx_engine *, sfx_voice, uint32_t, float) = sfx_voice_set_send;
            int declared = (set_listener != 0) + (get_listener != 0) + (set_world != 0) + (source_default != 0)
                + (play_at != 0) + (play_source != 0) + (set_position != 0) + (set_velocity != 0) + (set_cone != 0)
                + (set_relative != 0) + (set_source != 0) + (set_filter != 0) + (set_group_filter != 0) + (hrtf_status != 0)
                + (set_reverb != 0) + (set_echo != 0) + (clear_effect != 0) + (set_send != 0) + SFX_EFFECT_BUS_COUNT;
            options.completion = done;
            options.group = SFX_GROUP_UI;
            options.priority = SFX_PRIORITY_HIGH;
            config.hrtf = "default";
            source.distance_model = SFX_DISTANCE_LINEAR_CLAMPED;
            filter.kind = SFX_FILTER_HIGHSHELF;
            return (int)config.sample_rate + (int)options.loops + (SFX_OK == 0 ? 0 : 1) + SFX_VERSION_MAJOR
                + (int)source.distance_model + (int)listener.gain + (int)filter.kind + (declared == 22 ? 0 : 1);
        }
        """
        let include = prefix.appending(path: "include").path
        for (name, compiler) in [("c99.c", "cc -std=c99 -pedantic"), ("cxx17.cpp", "c++ -std=c++17 -pedantic")] {
            let file = scratch.appending(path: name)
            try source.write(to: file, atomically: true, encoding: .utf8)
            let run = try shell("\(compiler) -Wall -Wextra -Werror -I\(quoted(include)) -fsyntax-only \(quoted(file.path))", in: scratch)
            XCTAssertEqual(run.status, 0, "\(compiler): \(run.errors)")
        }
    }
}
